import { createHash, randomBytes } from 'node:crypto';
import { and, count, desc, eq, isNull, sql, type Placeholder } from 'drizzle-orm';
import { requireTransaction, type Store } from '../../db/store';
import { InvalidApiKeyError, NotFoundError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { AuditService } from '../audit/audit.service';
import type { ApiKeyRow } from './keys.table';

export const API_KEY_PREFIX = 'adk_';

export interface ApiKeySummary {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface KeysServiceDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  audit: AuditService;
}

const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

function toSummary(row: ApiKeyRow): ApiKeySummary {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    created_at: row.createdAt,
    revoked_at: row.revokedAt,
    last_used_at: row.lastUsedAt,
  };
}

/** API keys: shown once on creation, stored only as a SHA-256 hash. On the Store (SQLite and PostgreSQL). */
export function createKeysService({ store, clock, ids, audit }: KeysServiceDeps) {
  // Writing last_used_at on every request would make each read a write; once a minute per key is plenty.
  const lastUsedWritten = new Map<string, number>();

  /** The key with this hash and its account's disabled_at: written once, for both dialects. */
  const byHash = (hash: string | Placeholder) => {
    const { apiKeys, accounts } = store.t;
    return store.db
      .select({ id: apiKeys.id, revokedAt: apiKeys.revokedAt, accountDisabledAt: accounts.disabledAt })
      .from(apiKeys)
      .leftJoin(accounts, eq(accounts.id, apiKeys.accountId))
      .where(eq(apiKeys.keyHash, hash));
  };
  // Every request with a key looks it up: on SQLite a statement prepared once (building and preparing
  // the query each time was most of its cost); PostgreSQL builds it on the current handle.
  let byHashSqlite: ReturnType<ReturnType<typeof byHash>['prepare']> | undefined;
  const findByHash = (hash: string) =>
    store.dialect === 'sqlite'
      ? store.first({ get: () => (byHashSqlite ??= byHash(sql.placeholder('hash')).prepare()).get({ hash }) })
      : store.first(byHash(hash));

  const summaries = async (where?: ReturnType<typeof eq>): Promise<ApiKeySummary[]> => {
    const { apiKeys } = store.t;
    const rows = await store.rows(store.db.select().from(apiKeys).where(where).orderBy(desc(apiKeys.createdAt)));
    return rows.map(toSummary);
  };

  /** The audit entries of revoking an account's live keys. */
  const revokeEntries = (live: ApiKeyRow[], actor: string, revokedAt: string) =>
    live.map((row) => ({
      actor,
      action: 'key.revoke',
      entityType: 'api_key',
      entityId: row.id,
      before: toSummary(row),
      after: toSummary({ ...row, revokedAt }),
    }));

  return {
    /** Issues a key; `accountId` when an account issues it from its dashboard. */
    async create(name: string, actor = 'cli', accountId: string | null = null): Promise<ApiKeySummary & { key: string }> {
      const key = `${API_KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
      const row: ApiKeyRow = {
        id: ids.next('key'),
        name,
        keyHash: hashKey(key),
        prefix: key.slice(0, API_KEY_PREFIX.length + 6),
        createdAt: isoNow(clock),
        revokedAt: null,
        lastUsedAt: null,
        accountId,
      };
      await store.transaction(async () => {
        await store.run(store.db.insert(store.t.apiKeys).values(row));
        await audit.recordInTransaction({ actor, action: 'key.create', entityType: 'api_key', entityId: row.id, after: toSummary(row) });
      });
      return { ...toSummary(row), key };
    },

    list(): Promise<ApiKeySummary[]> {
      return summaries();
    },

    /** An account's keys, newest first, revoked ones included (the dashboard shows them greyed). */
    listForAccount(accountId: string): Promise<ApiKeySummary[]> {
      return summaries(eq(store.t.apiKeys.accountId, accountId));
    },

    async countActiveForAccount(accountId: string): Promise<number> {
      const { apiKeys } = store.t;
      const row = await store.first(
        store.db
          .select({ n: count() })
          .from(apiKeys)
          .where(and(eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt))),
      );
      return row?.n ?? 0;
    },

    /** The account a key belongs to (null for CLI and console keys). */
    async accountOf(keyId: string): Promise<string | null> {
      const { apiKeys } = store.t;
      const row = await store.first(store.db.select({ accountId: apiKeys.accountId }).from(apiKeys).where(eq(apiKeys.id, keyId)));
      return row?.accountId ?? null;
    },

    /** Key ids of an account, for its usage figures. */
    async idsOfAccount(accountId: string): Promise<string[]> {
      const { apiKeys } = store.t;
      const rows = await store.rows(store.db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.accountId, accountId)));
      return rows.map((row) => row.id);
    },

    /** Revokes a key; with `accountId`, only that account's key (another's is a 404, as if it did not exist). */
    revoke(id: string, actor = 'cli', accountId?: string): Promise<ApiKeySummary> {
      return store.transaction(async () => {
        const { apiKeys } = store.t;
        // Locked on PostgreSQL: two revocations at once audit one revocation, as on SQLite.
        const row = await store.first(store.forUpdate(store.db.select().from(apiKeys).where(eq(apiKeys.id, id))));
        if (!row || (accountId !== undefined && row.accountId !== accountId)) throw new NotFoundError('API key', id);
        if (row.revokedAt) return toSummary(row);
        const revokedAt = isoNow(clock);
        await store.run(store.db.update(apiKeys).set({ revokedAt }).where(eq(apiKeys.id, id)));
        const after = { ...row, revokedAt };
        await audit.recordInTransaction({
          actor,
          action: 'key.revoke',
          entityType: 'api_key',
          entityId: id,
          before: toSummary(row),
          after: toSummary(after),
        });
        return toSummary(after);
      });
    },

    /** Revokes every live key of an account and detaches them all: closing it (an accounts.onClose hook, in its store transaction). */
    async revokeAllOfAccountInTransaction(accountId: string, actor: string): Promise<void> {
      requireTransaction(store, 'keys.revokeAllOfAccountInTransaction');
      const { apiKeys } = store.t;
      const live = await store.rows(
        store.forUpdate(
          store.db
            .select()
            .from(apiKeys)
            .where(and(eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt))),
        ),
      );
      const revokedAt = isoNow(clock);
      for (const entry of revokeEntries(live, actor, revokedAt)) {
        await store.run(store.db.update(apiKeys).set({ revokedAt }).where(eq(apiKeys.id, entry.entityId)));
        await audit.recordInTransaction(entry);
      }
      await store.run(store.db.update(apiKeys).set({ accountId: null }).where(eq(apiKeys.accountId, accountId)));
    },

    /**
     * The key's id when `key` is a live key; throws invalid_api_key otherwise.
     * Looked up on every request, so a key revoked by another process stops at once.
     */
    async authenticate(key: string): Promise<string> {
      const { apiKeys } = store.t;
      // A key of an account an admin has disabled is refused like a revoked one (and works again when re-enabled).
      const row = key.startsWith(API_KEY_PREFIX) ? await findByHash(hashKey(key)) : undefined;
      if (!row || row.revokedAt || row.accountDisabledAt) throw new InvalidApiKeyError();
      const now = clock.now().getTime();
      if (now - (lastUsedWritten.get(row.id) ?? 0) > 60_000) {
        lastUsedWritten.set(row.id, now);
        await store.run(
          store.db
            .update(apiKeys)
            .set({ lastUsedAt: isoNow(clock) })
            .where(eq(apiKeys.id, row.id)),
        );
      }
      return row.id;
    },
  };
}

export type KeysService = ReturnType<typeof createKeysService>;
