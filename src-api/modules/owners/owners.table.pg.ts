import { bigint, index, json, pgTable, text } from 'drizzle-orm/pg-core';
import { agents } from '../agents/agents.table.pg';
import { reviews } from '../reviews/reviews.table.pg';
import type { EditRequestChanges, EditRequestStatus } from './owners.table';

/** PostgreSQL twin of owners.table.ts: same names, same values (see src-api/db/schema-pg.ts). */
export const editRequests = pgTable(
  'edit_requests',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    accountId: text('account_id').notNull(),
    changes: json('changes').$type<EditRequestChanges>().notNull(),
    before: json('before').$type<EditRequestChanges>().notNull(),
    status: text('status').$type<EditRequestStatus>().notNull().default('pending'),
    reason: text('reason'),
    decidedBy: text('decided_by'),
    decidedAt: text('decided_at'),
    version: bigint('version', { mode: 'number' }).notNull().default(1),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [
    index('edit_requests_status_created_idx').on(table.status, table.createdAt),
    index('edit_requests_agent_idx').on(table.agentId),
  ],
);

export const reviewReplies = pgTable(
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
