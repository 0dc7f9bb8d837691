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
    createdAt: text('created_at').notNull(),
  },
  (table) => [index('reviews_agent_created_idx').on(table.agentId, table.createdAt), index('reviews_created_idx').on(table.createdAt)],
);

export type ReviewRow = typeof reviews.$inferSelect;
