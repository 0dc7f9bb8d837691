import { bigint, boolean, doublePrecision, index, json, pgSequence, pgTable, text } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { byteOrderText } from '../../db/pg-columns';
import type { AgentSkill, AgentStatus } from './agents.table';
import { ratingSortSql } from './trust-score';

/**
 * PostgreSQL twin of agents.table.ts: same names, same values (see src-api/db/schema-pg.ts).
 * SQLite INTEGER is 64-bit: bigint here; 0/1 flags: boolean; REAL: double precision; JSON text: json (kept verbatim).
 */
export const agents = pgTable(
  'agents',
  {
    // Byte order, as SQLite: the list indexes serve the name sort and keyset pages by id (pg-columns.ts).
    id: byteOrderText('id').primaryKey(),
    name: byteOrderText('name').notNull(),
    tagline: text('tagline').notNull(),
    description: text('description').notNull().default(''),
    author: text('author').notNull().default(''),
    capabilities: json('capabilities').$type<string[]>().notNull().default([]),
    categories: json('categories').$type<string[]>().notNull().default([]),
    type: text('type').notNull(),
    sourceUrl: text('source_url').notNull(),
    sourceUrlKey: text('source_url_key').notNull(),
    verified: boolean('verified').notNull().default(false),
    listed: boolean('listed').notNull().default(true),
    status: text('status').$type<AgentStatus>().notNull().default('active'),
    statusMessage: text('status_message'),
    ownerAccountId: text('owner_account_id'),
    ownerName: text('owner_name'),
    agentCardUrl: text('agent_card_url'),
    skills: json('skills').$type<AgentSkill[]>(),
    agentCardEtag: text('agent_card_etag'),
    agentCardFetchedAt: text('agent_card_fetched_at'),
    trustScore: doublePrecision('trust_score').notNull().default(0),
    ratingCount: bigint('rating_count', { mode: 'number' }).notNull().default(0),
    ratingSum: bigint('rating_sum', { mode: 'number' }).notNull().default(0),
    version: bigint('version', { mode: 'number' }).notNull().default(1),
    changeSeq: bigint('change_seq', { mode: 'number' }).notNull().default(0),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [
    index('agents_change_seq_idx').on(table.changeSeq),
    index('agents_source_url_key_idx').on(table.sourceUrlKey),
    index('agents_owner_idx').on(table.ownerAccountId),
    index('agents_list_trust_idx').on(table.listed, table.trustScore, table.id),
    index('agents_list_name_idx').on(table.listed, table.name, table.id),
    index('agents_list_created_idx').on(table.listed, table.createdAt, table.id),
    index('agents_list_updated_idx').on(table.listed, table.updatedAt, table.id),
    index('agents_list_type_trust_idx').on(table.listed, table.type, table.trustScore, table.id),
    index('agents_list_type_name_idx').on(table.listed, table.type, table.name, table.id),
    index('agents_list_type_created_idx').on(table.listed, table.type, table.createdAt, table.id),
    index('agents_list_type_updated_idx').on(table.listed, table.type, table.updatedAt, table.id),
    // sort=rating: one index per direction (each puts unrated agents last: trust-score.ts ratingSortSql). The type
    // comes last, so a page with the type filter walks the same index, skipping other types without reading rows:
    // a second pair with the type in front made SQLite's row updates 1.5× slower, this pair 1.1× (100k agents).
    index('agents_list_rating_desc_idx').on(table.listed, sql.raw(ratingSortSql('postgres', 'desc')), table.id, table.type),
    index('agents_list_rating_asc_idx').on(table.listed, sql.raw(ratingSortSql('postgres', 'asc')), table.id, table.type),
  ],
);

/**
 * The change cursor on PostgreSQL (agent-writes.ts): each written agent takes the next value as its
 * change_seq. SQLite has no sequences and needs none: it counts on from max(change_seq) under its
 * one write lock.
 */
export const agentsChangeSeq = pgSequence('agents_change_seq', { startWith: 1 });
