import { index, json, pgTable, text } from 'drizzle-orm/pg-core';

/** PostgreSQL twin of audit.table.ts: same names, same values (see src-api/db/schema-pg.ts). */
export const auditLog = pgTable(
  'audit_log',
  {
    id: text('id').primaryKey(),
    actor: text('actor').notNull(),
    action: text('action').notNull(),
    entityType: text('entity_type').notNull(),
    entityId: text('entity_id').notNull(),
    before: json('before').$type<unknown>(),
    after: json('after').$type<unknown>(),
    createdAt: text('created_at').notNull(),
  },
  (table) => [index('audit_created_idx').on(table.createdAt), index('audit_entity_idx').on(table.entityType, table.entityId)],
);
