import { bigint, index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';

/** PostgreSQL twin of keys.table.ts: same names, same values (see src-api/db/schema-pg.ts). */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    keyHash: text('key_hash').notNull(),
    prefix: text('prefix').notNull(),
    createdAt: text('created_at').notNull(),
    revokedAt: text('revoked_at'),
    lastUsedAt: text('last_used_at'),
    accountId: text('account_id'),
  },
  (table) => [uniqueIndex('api_keys_hash_idx').on(table.keyHash), index('api_keys_account_idx').on(table.accountId)],
);

export const keyUsageDaily = pgTable(
  'key_usage_daily',
  {
    keyId: text('key_id').notNull(),
    day: text('day').notNull(),
    requests: bigint('requests', { mode: 'number' }).notNull().default(0),
    rateLimited: bigint('rate_limited', { mode: 'number' }).notNull().default(0),
  },
  (table) => [uniqueIndex('key_usage_daily_key_day_idx').on(table.keyId, table.day)],
);
