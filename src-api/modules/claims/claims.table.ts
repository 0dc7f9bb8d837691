import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { agents } from '../agents/agents.table';

export type ClaimStatus = 'pending' | 'verified' | 'rejected';

/** What the last automatic check of the well-known file found. */
export interface ClaimCheckResult {
  checkedAt: string;
  ok: boolean;
  /** HTTP status, when a response came back. */
  status?: number;
  detail: string;
}

export const claims = sqliteTable(
  'claims',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    claimantName: text('claimant_name').notNull(),
    claimantEmail: text('claimant_email').notNull(),
    status: text('status').$type<ClaimStatus>().notNull().default('pending'),
    token: text('token').notNull(),
    verificationUrl: text('verification_url').notNull(),
    lastCheck: text('last_check', { mode: 'json' }).$type<ClaimCheckResult>(),
    /** "automatic" (well-known file found) or "manual" (a moderator decided). */
    verifiedBy: text('verified_by'),
    reason: text('reason'),
    version: integer('version').notNull().default(1),
    /** The account that made the claim; null for anonymous claims and closed accounts. */
    accountId: text('account_id'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    decidedAt: text('decided_at'),
  },
  (table) => [index('claims_status_created_idx').on(table.status, table.createdAt), index('claims_agent_idx').on(table.agentId), index('claims_account_idx').on(table.accountId)],
);

export type ClaimRow = typeof claims.$inferSelect;
