import { index, integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';

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
    index('agents_listed_trust_idx').on(table.listed, table.trustScore),
    index('agents_listed_name_idx').on(table.listed, table.name),
    index('agents_listed_created_idx').on(table.listed, table.createdAt),
    index('agents_listed_updated_idx').on(table.listed, table.updatedAt),
    index('agents_listed_type_idx').on(table.listed, table.type),
  ],
);

export type AgentRow = typeof agents.$inferSelect;
export type NewAgentRow = typeof agents.$inferInsert;
