import { sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    /** SHA-256 of the key; the key itself is shown once and never stored. */
    keyHash: text('key_hash').notNull(),
    /** The first characters of the key, so that people can tell keys apart. */
    prefix: text('prefix').notNull(),
    createdAt: text('created_at').notNull(),
    revokedAt: text('revoked_at'),
    lastUsedAt: text('last_used_at'),
  },
  (table) => [uniqueIndex('api_keys_hash_idx').on(table.keyHash)],
);

export type ApiKeyRow = typeof apiKeys.$inferSelect;
