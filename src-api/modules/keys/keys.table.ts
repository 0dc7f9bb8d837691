import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

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
    /**
     * The account that issued the key from its dashboard; null for keys made with the CLI or the console,
     * and once the account is closed. (No foreign key: SQLite cannot add one with ON DELETE to an existing table.)
     */
    accountId: text('account_id'),
  },
  (table) => [uniqueIndex('api_keys_hash_idx').on(table.keyHash), index('api_keys_account_idx').on(table.accountId)],
);

/** Requests and rate-limited answers per API key per UTC day, for GET /me/usage. */
export const keyUsageDaily = sqliteTable(
  'key_usage_daily',
  {
    keyId: text('key_id').notNull(),
    day: text('day').notNull(),
    requests: integer('requests').notNull().default(0),
    rateLimited: integer('rate_limited').notNull().default(0),
  },
  (table) => [uniqueIndex('key_usage_daily_key_day_idx').on(table.keyId, table.day)],
);

export type ApiKeyRow = typeof apiKeys.$inferSelect;
