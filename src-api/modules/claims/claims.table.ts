import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { agents } from '../agents/agents.table';

export type ClaimStatus = 'pending' | 'verified' | 'rejected';

export type ProofMethodName = 'repository-file' | 'dns-txt' | 'well-known';

/** One way to prove control of an agent's source: where the token goes. */
export interface ProofMethod {
  method: ProofMethodName;
  /** The file that must hold the token (repository-file, well-known). */
  url?: string;
  /** The DNS name whose TXT record must hold `value` (dns-txt). */
  name?: string;
  /** The exact TXT record value (dns-txt). */
  value?: string;
}

/** Why one proof did not hold, as a stable word (the console and dashboard show `detail`). */
export type ProofFailure =
  | 'dns_timeout'
  | 'dns_error'
  | 'dns_no_record'
  | 'http_status'
  | 'redirect'
  | 'too_large'
  | 'token_missing'
  | 'timeout'
  | 'refused'
  | 'connection';

/** What checking one proof method found. */
export interface ProofResult {
  method: ProofMethodName;
  ok: boolean;
  /** HTTP status, when a response came back. */
  status?: number;
  failure?: ProofFailure;
  detail: string;
}

/** What the last automatic check found (every method tried). */
export interface ClaimCheckResult {
  checkedAt: string;
  ok: boolean;
  /** HTTP status of the first method's response, when one came back. */
  status?: number;
  detail: string;
  /** The method that held, when one did. */
  method?: ProofMethodName;
  results?: ProofResult[];
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
    /** Every proof that fits the agent's source, first one first (recomputed at each check). */
    methods: text('methods', { mode: 'json' }).$type<ProofMethod[]>().notNull().default([]),
    /** The method whose proof held when the claim was verified automatically. */
    verifiedMethod: text('verified_method').$type<ProofMethodName>(),
    /** The account that made the claim; null for anonymous claims. */
    accountId: text('account_id'),
    /** Who asked (the client IP key) for the pending-claims quota. */
    clientKey: text('client_key'),
    /** Re-checks of a verified claim's proof: when the next one is due, and failures in a row. */
    nextRecheckAt: text('next_recheck_at'),
    recheckFailures: integer('recheck_failures').notNull().default(0),
    lastCheck: text('last_check', { mode: 'json' }).$type<ClaimCheckResult>(),
    /** "automatic" (well-known file found) or "manual" (a moderator decided). */
    verifiedBy: text('verified_by'),
    reason: text('reason'),
    version: integer('version').notNull().default(1),
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

export type ClaimRow = typeof claims.$inferSelect;
