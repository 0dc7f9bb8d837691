import { createHash, randomBytes } from 'node:crypto';
import { and, count, desc, eq, isNull } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { InvalidApiKeyError, NotFoundError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { AuditService } from '../audit/audit.service';
import { accounts } from '../accounts/accounts.table';
import { apiKeys, type ApiKeyRow } from './keys.table';

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
  db: Db;
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

/** API keys: shown once on creation, stored only as a SHA-256 hash. */
export function createKeysService({ db, clock, ids, audit }: KeysServiceDeps) {
  // Writing last_used_at on every request would make each read a write; once a minute per key is plenty.
  const lastUsedWritten = new Map<string, number>();

  return {
    /** Issues a key; `accountId` when an account issues it from its dashboard. */
    create(name: string, actor = 'cli', accountId: string | null = null): ApiKeySummary & { key: string } {
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
      inTransaction(db, () => {
        db.insert(apiKeys).values(row).run();
        audit.record({ actor, action: 'key.create', entityType: 'api_key', entityId: row.id, after: toSummary(row) });
      });
      return { ...toSummary(row), key };
    },

    list(): ApiKeySummary[] {
      return db.select().from(apiKeys).orderBy(desc(apiKeys.createdAt)).all().map(toSummary);
    },

    /** An account's keys, newest first, revoked ones included (the dashboard shows them greyed). */
    listForAccount(accountId: string): ApiKeySummary[] {
      return db.select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).orderBy(desc(apiKeys.createdAt)).all().map(toSummary);
    },

    countActiveForAccount(accountId: string): number {
      return (
        db
          .select({ n: count() })
          .from(apiKeys)
          .where(and(eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
          .get()?.n ?? 0
      );
    },

    /** The account a key belongs to (null for CLI and console keys). */
    accountOf(keyId: string): string | null {
      return db.select({ accountId: apiKeys.accountId }).from(apiKeys).where(eq(apiKeys.id, keyId)).get()?.accountId ?? null;
    },

    /** Key ids of an account, for its usage figures. */
    idsOfAccount(accountId: string): string[] {
      return db
        .select({ id: apiKeys.id })
        .from(apiKeys)
        .where(eq(apiKeys.accountId, accountId))
        .all()
        .map((row) => row.id);
    },

    /** Revokes a key; with `accountId`, only that account's key (another's is a 404, as if it did not exist). */
    revoke(id: string, actor = 'cli', accountId?: string): ApiKeySummary {
      return inTransaction(db, () => {
        const row = db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
        if (!row || (accountId !== undefined && row.accountId !== accountId)) throw new NotFoundError('API key', id);
        if (row.revokedAt) return toSummary(row);
        const revokedAt = isoNow(clock);
        db.update(apiKeys).set({ revokedAt }).where(eq(apiKeys.id, id)).run();
        const after = { ...row, revokedAt };
        audit.record({ actor, action: 'key.revoke', entityType: 'api_key', entityId: id, before: toSummary(row), after: toSummary(after) });
        return toSummary(after);
      });
    },

    /** Revokes every live key of an account and detaches them all (closing it); call inside the closing transaction. */
    revokeAllOfAccount(accountId: string, actor: string): void {
      const live = db
        .select()
        .from(apiKeys)
        .where(and(eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
        .all();
      const revokedAt = isoNow(clock);
      for (const row of live) {
        db.update(apiKeys).set({ revokedAt }).where(eq(apiKeys.id, row.id)).run();
        audit.record({
          actor,
          action: 'key.revoke',
          entityType: 'api_key',
          entityId: row.id,
          before: toSummary(row),
          after: toSummary({ ...row, revokedAt }),
        });
      }
      db.update(apiKeys).set({ accountId: null }).where(eq(apiKeys.accountId, accountId)).run();
    },

    /**
     * The key's id when `key` is a live key; throws invalid_api_key otherwise.
     * Looked up on every request, so a key revoked by another process stops at once.
     */
    authenticate(key: string): string {
      // A key of an account an admin has disabled is refused like a revoked one (and works again when re-enabled).
      const row = key.startsWith(API_KEY_PREFIX)
        ? db
            .select({ id: apiKeys.id, revokedAt: apiKeys.revokedAt, accountDisabledAt: accounts.disabledAt })
            .from(apiKeys)
            .leftJoin(accounts, eq(accounts.id, apiKeys.accountId))
            .where(eq(apiKeys.keyHash, hashKey(key)))
            .get()
        : undefined;
      if (!row || row.revokedAt || row.accountDisabledAt) throw new InvalidApiKeyError();
      const now = clock.now().getTime();
      if (now - (lastUsedWritten.get(row.id) ?? 0) > 60_000) {
        lastUsedWritten.set(row.id, now);
        db.update(apiKeys)
          .set({ lastUsedAt: isoNow(clock) })
          .where(eq(apiKeys.id, row.id))
          .run();
      }
      return row.id;
    },
  };
}

export type KeysService = ReturnType<typeof createKeysService>;
