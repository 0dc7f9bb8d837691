import { bigint, index, json, pgTable, text } from 'drizzle-orm/pg-core';
import type { AgentSkill } from '../agents/agents.table';
import type { SubmissionStatus } from './submissions.table';

/** PostgreSQL twin of submissions.table.ts: same names, same values (see src-api/db/schema-pg.ts). */
export const submissions = pgTable(
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
    capabilities: json('capabilities').$type<string[]>(),
    categories: json('categories').$type<string[]>(),
    type: text('type'),
    contactEmail: text('contact_email'),
    agentCardUrl: text('agent_card_url'),
    skills: json('skills').$type<AgentSkill[]>(),
    agentCardEtag: text('agent_card_etag'),
    agentId: text('agent_id'),
    reason: text('reason'),
    decidedBy: text('decided_by'),
    decidedAt: text('decided_at'),
    version: bigint('version', { mode: 'number' }).notNull().default(1),
    accountId: text('account_id'),
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
