import { index, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/** Every moderator action: who, what, when, before and after. */
export const auditLog = sqliteTable(
  'audit_log',
  {
    id: text('id').primaryKey(),
    actor: text('actor').notNull(),
    action: text('action').notNull(),
    entityType: text('entity_type').notNull(),
    entityId: text('entity_id').notNull(),
    before: text('before', { mode: 'json' }).$type<unknown>(),
    after: text('after', { mode: 'json' }).$type<unknown>(),
    createdAt: text('created_at').notNull(),
  },
  (table) => [index('audit_created_idx').on(table.createdAt), index('audit_entity_idx').on(table.entityType, table.entityId)],
);

export type AuditRow = typeof auditLog.$inferSelect;
