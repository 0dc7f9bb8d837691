import { index, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export const EVENT_TYPES = ['agent.registered', 'agent.updated', 'agent.verified', 'review.created', 'claim.approved'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The outbox: every directory event, written in the same transaction as the
 * change that caused it, with the final payload that webhooks deliver.
 */
export const events = sqliteTable(
  'events',
  {
    id: text('id').primaryKey(),
    type: text('type').$type<EventType>().notNull(),
    data: text('data', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    createdAt: text('created_at').notNull(),
  },
  (table) => [index('events_created_idx').on(table.createdAt), index('events_type_idx').on(table.type, table.createdAt)],
);

export type EventRow = typeof events.$inferSelect;
