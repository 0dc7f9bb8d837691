import { pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import type { SubscriberStatus } from './newsletter.table';

/** PostgreSQL twin of newsletter.table.ts: same names, same values (see src-api/db/schema-pg.ts). */
export const newsletterSubscribers = pgTable(
  'newsletter_subscribers',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    emailKey: text('email_key').notNull(),
    status: text('status').$type<SubscriberStatus>().notNull().default('subscribed'),
    createdAt: text('created_at').notNull(),
    confirmedAt: text('confirmed_at'),
    unsubscribedAt: text('unsubscribed_at'),
  },
  (table) => [uniqueIndex('newsletter_email_key_idx').on(table.emailKey)],
);
