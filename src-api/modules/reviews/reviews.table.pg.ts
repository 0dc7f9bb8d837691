import { bigint, boolean, index, pgTable, text } from 'drizzle-orm/pg-core';
import { agents } from '../agents/agents.table.pg';

/** PostgreSQL twin of reviews.table.ts: same names, same values (see src-api/db/schema-pg.ts). */
export const reviews = pgTable(
  'reviews',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    rating: bigint('rating', { mode: 'number' }).notNull(),
    comment: text('comment'),
    reviewerName: text('reviewer_name'),
    hidden: boolean('hidden').notNull().default(false),
    accountId: text('account_id'),
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
