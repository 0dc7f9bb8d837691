import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export type MailStatus = 'pending' | 'sending' | 'sent' | 'failed';

/**
 * The mail outbox: a message is inserted in the transaction of the change that
 * caused it (a sign-up, a reset request) and sent later by the mail worker, so
 * a slow or failing mail server never fails the request.
 */
export const mailOutbox = sqliteTable(
  'mail_outbox',
  {
    id: text('id').primaryKey(),
    /** What the mail is for, e.g. "account.verify" (for logs and tests, not shown). */
    kind: text('kind').notNull(),
    to: text('to_address').notNull(),
    subject: text('subject').notNull(),
    text: text('text_body').notNull(),
    html: text('html_body').notNull(),
    /** Extra headers, e.g. List-Unsubscribe. */
    headers: text('headers', { mode: 'json' }).$type<Record<string, string>>().notNull().default({}),
    status: text('status').$type<MailStatus>().notNull().default('pending'),
    attemptCount: integer('attempt_count').notNull().default(0),
    nextAttemptAt: text('next_attempt_at').notNull(),
    /** Who is sending it, and until when (a lease, so a crash frees it). */
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: text('lease_expires_at'),
    lastError: text('last_error'),
    /** The SMTP server's answer, or the .eml file written. */
    deliveredTo: text('delivered_to'),
    sentAt: text('sent_at'),
    createdAt: text('created_at').notNull(),
  },
  (table) => [index('mail_outbox_due_idx').on(table.status, table.nextAttemptAt)],
);

export type MailRow = typeof mailOutbox.$inferSelect;
