import { bigint, index, json, pgTable, text } from 'drizzle-orm/pg-core';
import type { MailStatus } from './mail.table';

/** PostgreSQL twin of mail.table.ts: same names, same values (see src-api/db/schema-pg.ts). */
export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull(),
    to: text('to_address').notNull(),
    subject: text('subject').notNull(),
    text: text('text_body').notNull(),
    html: text('html_body').notNull(),
    headers: json('headers').$type<Record<string, string>>().notNull().default({}),
    status: text('status').$type<MailStatus>().notNull().default('pending'),
    attemptCount: bigint('attempt_count', { mode: 'number' }).notNull().default(0),
    nextAttemptAt: text('next_attempt_at').notNull(),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: text('lease_expires_at'),
    lastError: text('last_error'),
    deliveredTo: text('delivered_to'),
    sentAt: text('sent_at'),
    createdAt: text('created_at').notNull(),
  },
  (table) => [index('mail_outbox_due_idx').on(table.status, table.nextAttemptAt)],
);
