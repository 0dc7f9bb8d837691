import { index, integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { sql } from 'drizzle-orm';
import { ratingSortSql } from './trust-score';

export type AgentStatus = 'active' | 'deprecated';

/** A skill of an A2A Agent Card, as the profile shows it (contract §9). */
export interface AgentSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
}

export const agents = sqliteTable(
  'agents',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    tagline: text('tagline').notNull(),
    description: text('description').notNull().default(''),
    author: text('author').notNull().default(''),
    capabilities: text('capabilities', { mode: 'json' }).$type<string[]>().notNull().default([]),
    categories: text('categories', { mode: 'json' }).$type<string[]>().notNull().default([]),
    type: text('type').notNull(),
    sourceUrl: text('source_url').notNull(),
    /** Normalised source_url, so that duplicates are found however they are spelt. */
    sourceUrlKey: text('source_url_key').notNull(),
    verified: integer('verified', { mode: 'boolean' }).notNull().default(false),
    /** Unlisted agents are kept (reviews, claims, history) but hidden from the public API. */
    listed: integer('listed', { mode: 'boolean' }).notNull().default(true),
    /** Lifecycle set by the owner or a moderator: deprecated agents stay findable but rank below active ones. */
    status: text('status').$type<AgentStatus>().notNull().default('active'),
    /** Why it is deprecated, what to use instead; shown with the profile. */
    statusMessage: text('status_message'),
    /** The account that proved ownership (a verified claim made with an account); null: no owner. */
    ownerAccountId: text('owner_account_id'),
    /** The owner account's name as the profile shows it (`owner.name`), kept with the row so profiles stay one-row reads. */
    ownerName: text('owner_name'),
    /** The A2A Agent Card the agent was submitted with (contract §9); re-fetched weekly. */
    agentCardUrl: text('agent_card_url'),
    /** The card's skills, as of the last fetch. */
    skills: text('skills', { mode: 'json' }).$type<AgentSkill[]>(),
    /** The card's ETag at the last fetch (sent as If-None-Match), and when that was. */
    agentCardEtag: text('agent_card_etag'),
    agentCardFetchedAt: text('agent_card_fetched_at'),
    trustScore: real('trust_score').notNull().default(0),
    /** Denormalised from visible reviews so that sorting by rating stays an index scan. */
    ratingCount: integer('rating_count').notNull().default(0),
    ratingSum: integer('rating_sum').notNull().default(0),
    /** Bumped on every change; the optimistic-concurrency check of the console. */
    version: integer('version').notNull().default(1),
    /**
     * Monotonic across all agents: every write sets it to max+1. Search indexes
     * in any process catch up by reading rows with a higher value than they saw.
     */
    changeSeq: integer('change_seq').notNull().default(0),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [
    index('agents_change_seq_idx').on(table.changeSeq),
    index('agents_source_url_key_idx').on(table.sourceUrlKey),
    index('agents_owner_idx').on(table.ownerAccountId),
    // One index per list sort, ending in id (the tie-break) so that a page is an index walk, not a sort;
    // and the same with the type filter in front.
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
    index('agents_list_rating_desc_idx').on(table.listed, sql.raw(ratingSortSql('sqlite', 'desc')), table.id, table.type),
    index('agents_list_rating_asc_idx').on(table.listed, sql.raw(ratingSortSql('sqlite', 'asc')), table.id, table.type),
  ],
);

export type AgentRow = typeof agents.$inferSelect;
export type NewAgentRow = typeof agents.$inferInsert;
