import { sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const newsletterSubscribers = sqliteTable(
  'newsletter_subscribers',
  {
    id: text('id').primaryKey(),
    /** As the subscriber typed it. */
    email: text('email').notNull(),
    /** Lower-cased: the same address in another case is the same subscriber. */
    emailKey: text('email_key').notNull(),
    status: text('status').$type<'subscribed' | 'unsubscribed'>().notNull().default('subscribed'),
    createdAt: text('created_at').notNull(),
  },
  (table) => [uniqueIndex('newsletter_email_key_idx').on(table.emailKey)],
);

export type NewsletterSubscriberRow = typeof newsletterSubscribers.$inferSelect;
