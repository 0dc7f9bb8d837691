import { index, json, pgTable, text } from 'drizzle-orm/pg-core';
import type { EventType } from './events.table';

/** PostgreSQL twin of events.table.ts: same names, same values (see src-api/db/schema-pg.ts). */
export const events = pgTable(
  'events',
  {
    id: text('id').primaryKey(),
    type: text('type').$type<EventType>().notNull(),
    data: json('data').$type<Record<string, unknown>>().notNull(),
    createdAt: text('created_at').notNull(),
  },
  (table) => [index('events_created_idx').on(table.createdAt), index('events_type_idx').on(table.type, table.createdAt)],
);
