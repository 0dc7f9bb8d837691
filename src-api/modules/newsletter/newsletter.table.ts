import { sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/**
 * `pending` until the address's owner follows the confirmation link (double opt-in);
 * only `subscribed` addresses are on the list that is exported and mailed.
 */
export type SubscriberStatus = 'pending' | 'subscribed' | 'unsubscribed';

export const newsletterSubscribers = sqliteTable(
  'newsletter_subscribers',
  {
    id: text('id').primaryKey(),
    /** As the subscriber typed it. */
    email: text('email').notNull(),
    /** Lower-cased: the same address in another case is the same subscriber. */
    emailKey: text('email_key').notNull(),
    /** Always written explicitly; the SQL default is from the days before double opt-in. */
    status: text('status').$type<SubscriberStatus>().notNull().default('subscribed'),
    createdAt: text('created_at').notNull(),
    /** When the confirmation link was followed (null for rows from before double opt-in and for pending ones). */
    confirmedAt: text('confirmed_at'),
    unsubscribedAt: text('unsubscribed_at'),
  },
  (table) => [uniqueIndex('newsletter_email_key_idx').on(table.emailKey)],
);

export type NewsletterSubscriberRow = typeof newsletterSubscribers.$inferSelect;
