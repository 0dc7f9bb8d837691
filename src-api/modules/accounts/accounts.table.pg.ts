import { index, json, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import type { AccountRole, OneTimeTokenPurpose } from './accounts.table';

/** PostgreSQL twin of accounts.table.ts: same names, same values (see src-api/db/schema-pg.ts). */
export const accounts = pgTable(
  'accounts',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    emailKey: text('email_key').notNull(),
    name: text('name').notNull(),
    passwordHash: text('password_hash'),
    emailVerifiedAt: text('email_verified_at'),
    roles: json('roles').$type<AccountRole[]>().notNull().default([]),
    disabledAt: text('disabled_at'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [uniqueIndex('accounts_email_key_idx').on(table.emailKey)],
);

export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    createdAt: text('created_at').notNull(),
    lastSeenAt: text('last_seen_at').notNull(),
    expiresAt: text('expires_at').notNull(),
  },
  (table) => [uniqueIndex('sessions_token_hash_idx').on(table.tokenHash), index('sessions_account_idx').on(table.accountId)],
);

export const oneTimeTokens = pgTable(
  'one_time_tokens',
  {
    id: text('id').primaryKey(),
    purpose: text('purpose').$type<OneTimeTokenPurpose>().notNull(),
    subjectId: text('subject_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
    createdAt: text('created_at').notNull(),
  },
  (table) => [uniqueIndex('one_time_tokens_hash_idx').on(table.tokenHash), index('one_time_tokens_subject_idx').on(table.subjectId)],
);
