import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { agents } from '../agents/agents.table';
import { reviews } from '../reviews/reviews.table';

export type EditRequestStatus = 'pending' | 'approved' | 'rejected';

/** The fields an owner cannot change alone: a new name or source goes through a moderator. */
export interface EditRequestChanges {
  name?: string;
  source_url?: string;
}

/** An owner's request to rename an agent or move its source, in the moderation queue. */
export const editRequests = sqliteTable(
  'edit_requests',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    accountId: text('account_id').notNull(),
    changes: text('changes', { mode: 'json' }).$type<EditRequestChanges>().notNull(),
    /** The same fields as they were when the request was made, for the console's diff. */
    before: text('before', { mode: 'json' }).$type<EditRequestChanges>().notNull(),
    status: text('status').$type<EditRequestStatus>().notNull().default('pending'),
    reason: text('reason'),
    decidedBy: text('decided_by'),
    decidedAt: text('decided_at'),
    version: integer('version').notNull().default(1),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [
    index('edit_requests_status_created_idx').on(table.status, table.createdAt),
    index('edit_requests_agent_idx').on(table.agentId),
  ],
);

/** The owner's answer to a review, shown with it. One per review; a new reply replaces it. */
export const reviewReplies = sqliteTable(
  'review_replies',
  {
    id: text('id').primaryKey(),
    reviewId: text('review_id')
      .notNull()
      .unique()
      .references(() => reviews.id),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    accountId: text('account_id').notNull(),
    body: text('body').notNull(),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [index('review_replies_agent_idx').on(table.agentId)],
);

export type EditRequestRow = typeof editRequests.$inferSelect;
export type ReviewReplyRow = typeof reviewReplies.$inferSelect;
