import { bigint, index, json, pgTable, text } from 'drizzle-orm/pg-core';
import { agents } from '../agents/agents.table.pg';
import type { ClaimCheckResult, ClaimStatus, ProofMethod, ProofMethodName } from './claims.table';

/** PostgreSQL twin of claims.table.ts: same names, same values (see src-api/db/schema-pg.ts). */
export const claims = pgTable(
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
    methods: json('methods').$type<ProofMethod[]>().notNull().default([]),
    verifiedMethod: text('verified_method').$type<ProofMethodName>(),
    accountId: text('account_id'),
    clientKey: text('client_key'),
    nextRecheckAt: text('next_recheck_at'),
    recheckFailures: bigint('recheck_failures', { mode: 'number' }).notNull().default(0),
    lastCheck: json('last_check').$type<ClaimCheckResult>(),
    verifiedBy: text('verified_by'),
    reason: text('reason'),
    version: bigint('version', { mode: 'number' }).notNull().default(1),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    decidedAt: text('decided_at'),
  },
  (table) => [
    index('claims_status_created_idx').on(table.status, table.createdAt),
    index('claims_agent_idx').on(table.agentId),
    index('claims_recheck_idx').on(table.status, table.nextRecheckAt),
    index('claims_client_status_idx').on(table.clientKey, table.status),
    index('claims_account_idx').on(table.accountId),
  ],
);
