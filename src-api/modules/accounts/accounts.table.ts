import { index, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const ACCOUNT_ROLES = ['moderator', 'admin'] as const;
export type AccountRole = (typeof ACCOUNT_ROLES)[number];

export const accounts = sqliteTable(
  'accounts',
  {
    id: text('id').primaryKey(),
    /** As the person typed it. */
    email: text('email').notNull(),
    /** Lower-cased: one account per address in any case. */
    emailKey: text('email_key').notNull(),
    name: text('name').notNull(),
    /** argon2id (PHC string); null until set (an account created by the CLI waits for its set-password link). */
    passwordHash: text('password_hash'),
    emailVerifiedAt: text('email_verified_at'),
    roles: text('roles', { mode: 'json' }).$type<AccountRole[]>().notNull().default([]),
    /** Disabled by an admin: cannot sign in, its sessions and keys stop working. */
    disabledAt: text('disabled_at'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [uniqueIndex('accounts_email_key_idx').on(table.emailKey)],
);

/** Signed-in browsers. Only a hash of the cookie's value is stored. */
export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    createdAt: text('created_at').notNull(),
    lastSeenAt: text('last_seen_at').notNull(),
    /** The absolute end (created_at + 30 days); the idle end is last_seen_at + 7 days. */
    expiresAt: text('expires_at').notNull(),
  },
  (table) => [uniqueIndex('sessions_token_hash_idx').on(table.tokenHash), index('sessions_account_idx').on(table.accountId)],
);

export type OneTimeTokenPurpose = 'verify_email' | 'password_reset' | 'newsletter_confirm' | 'newsletter_unsubscribe';

/**
 * Tokens sent in mail links (verify an address, reset a password, confirm or
 * leave the newsletter). Stored hashed; single-use unless the purpose says
 * otherwise (unsubscribing works any number of times).
 */
export const oneTimeTokens = sqliteTable(
  'one_time_tokens',
  {
    id: text('id').primaryKey(),
    purpose: text('purpose').$type<OneTimeTokenPurpose>().notNull(),
    /** Whose token: an account id or a newsletter subscriber id. */
    subjectId: text('subject_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
    createdAt: text('created_at').notNull(),
  },
  (table) => [uniqueIndex('one_time_tokens_hash_idx').on(table.tokenHash), index('one_time_tokens_subject_idx').on(table.subjectId)],
);

export type AccountRow = typeof accounts.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;
