import { bigint, index, pgTable, text } from 'drizzle-orm/pg-core';
import type { PostStatus } from './marketing.table';

/** PostgreSQL twin of marketing.table.ts: same names, same values (see src-api/db/schema-pg.ts). */
export const marketingPosts = pgTable(
  'marketing_posts',
  {
    id: text('id').primaryKey(),
    title: text('title').notNull(),
    body: text('body').notNull(),
    tone: text('tone').notNull(),
    status: text('status').$type<PostStatus>().notNull().default('draft'),
    channel: text('channel').notNull(),
    agentId: text('agent_id'),
    sourceEventId: text('source_event_id'),
    sourceEventType: text('source_event_type'),
    version: bigint('version', { mode: 'number' }).notNull().default(1),
    createdAt: text('created_at').notNull(),
    publishedAt: text('published_at'),
  },
  (table) => [
    index('marketing_posts_status_idx').on(table.status, table.createdAt),
    index('marketing_posts_tone_idx').on(table.tone),
    index('marketing_posts_published_idx').on(table.publishedAt),
  ],
);

export const abTests = pgTable('ab_tests', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  status: text('status').$type<'running' | 'completed'>().notNull().default('running'),
  createdAt: text('created_at').notNull(),
  completedAt: text('completed_at'),
});

export const abTestVariants = pgTable(
  'ab_test_variants',
  {
    id: text('id').primaryKey(),
    abTestId: text('ab_test_id')
      .notNull()
      .references(() => abTests.id),
    label: text('label').notNull(),
    postId: text('post_id')
      .notNull()
      .references(() => marketingPosts.id),
    impressions: bigint('impressions', { mode: 'number' }).notNull().default(0),
    conversions: bigint('conversions', { mode: 'number' }).notNull().default(0),
  },
  (table) => [index('ab_test_variants_test_idx').on(table.abTestId)],
);
