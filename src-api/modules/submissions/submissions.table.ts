import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { AgentSkill } from '../agents/agents.table';

export type SubmissionStatus = 'pending' | 'approved' | 'rejected';

export const submissions = sqliteTable(
  'submissions',
  {
    id: text('id').primaryKey(),
    status: text('status').$type<SubmissionStatus>().notNull().default('pending'),
    name: text('name').notNull(),
    tagline: text('tagline').notNull(),
    sourceUrl: text('source_url').notNull(),
    sourceUrlKey: text('source_url_key').notNull(),
    description: text('description'),
    author: text('author'),
    capabilities: text('capabilities', { mode: 'json' }).$type<string[]>(),
    categories: text('categories', { mode: 'json' }).$type<string[]>(),
    type: text('type'),
    contactEmail: text('contact_email'),
    /** Submitted as an A2A Agent Card (contract §9): its URL, skills and ETag, carried over on approval. */
    agentCardUrl: text('agent_card_url'),
    skills: text('skills', { mode: 'json' }).$type<AgentSkill[]>(),
    agentCardEtag: text('agent_card_etag'),
    /** The listed agent created on approval. */
    agentId: text('agent_id'),
    /** Why a moderator rejected it. */
    reason: text('reason'),
    decidedBy: text('decided_by'),
    decidedAt: text('decided_at'),
    version: integer('version').notNull().default(1),
    /** The account that submitted it; null for anonymous submissions and closed accounts. */
    accountId: text('account_id'),
    /** Who sent it without an account (hashed IP bucket, http/rate-limit quotaClientKey): for the pending-submissions quota. */
    clientKey: text('client_key'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [
    index('submissions_status_created_idx').on(table.status, table.createdAt),
    index('submissions_source_url_key_idx').on(table.sourceUrlKey),
    index('submissions_account_idx').on(table.accountId),
    index('submissions_client_status_idx').on(table.clientKey, table.status),
  ],
);

export type SubmissionRow = typeof submissions.$inferSelect;
