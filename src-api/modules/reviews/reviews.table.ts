import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { agents } from '../agents/agents.table';

export const reviews = sqliteTable(
  'reviews',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    rating: integer('rating').notNull(),
    comment: text('comment'),
    reviewerName: text('reviewer_name'),
    /** Hidden by a moderator as spam: not listed and not counted in ratings. */
    hidden: integer('hidden', { mode: 'boolean' }).notNull().default(false),
    /** The account that wrote it (shown as verified_reviewer); null for anonymous reviews and closed accounts. */
    accountId: text('account_id'),
    /** SHA-256 of the writer's client bucket (IPv4 address or IPv6 /64), for the one-review-per-day quota of anonymous writers. */
    clientKey: text('client_key'),
    createdAt: text('created_at').notNull(),
  },
  (table) => [
    index('reviews_agent_created_idx').on(table.agentId, table.createdAt),
    index('reviews_created_idx').on(table.createdAt),
    index('reviews_account_idx').on(table.accountId, table.agentId),
    index('reviews_client_idx').on(table.clientKey, table.agentId),
  ],
);

export type ReviewRow = typeof reviews.$inferSelect;
