import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { InvalidApiKeyError, NotFoundError } from '../../src-api/errors';
import { createAuditService, type AuditService } from '../../src-api/modules/audit/audit.service';
import { createKeysService, type KeysService } from '../../src-api/modules/keys/keys.service';
import { bothStores } from '../helpers/both-stores';

/**
 * API keys on the data-access seam, on SQLite and PostgreSQL 15: issuing and
 * revoking (each audited in its transaction), the lists and counts, and the
 * per-request authentication with its once-a-minute last_used_at. The HTTP,
 * tRPC and CLI side is covered on SQLite by test/api (keys-admin, accounts,
 * rate-limits) and test/cli.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

describe.each(stores.dialects)('API keys on $dialect', ({ open }) => {
  let store: Store;
  let audit: AuditService;
  let keys: KeysService;
  let now = new Date('2025-04-01T10:00:00.000Z');
  let counter = 0;
  const ids = { next: (prefix: string) => `${prefix}_${String(++counter).padStart(4, '0')}`, agent: () => 'agt_unused' };
  const auditOf = async (entityId: string) =>
    (await audit.list({ page: 1, limit: 50, entityId })).items.map((entry) => `${entry.actor} ${entry.action}`).reverse();
  const tick = (ms: number) => (now = new Date(now.getTime() + ms));

  beforeAll(async () => {
    store = await open();
    const clock = { now: () => now };
    audit = createAuditService({ store, clock, ids });
    keys = createKeysService({ store, clock, ids, audit });
    await store.run(
      store.db.insert(store.t.accounts).values([
        {
          id: 'acc_a',
          email: 'a@example.org',
          emailKey: 'a@example.org',
          name: 'A',
          passwordHash: 'x',
          createdAt: now.toISOString(),
          updatedAt: now.toISOString(),
        },
        {
          id: 'acc_off',
          email: 'off@example.org',
          emailKey: 'off@example.org',
          name: 'Off',
          passwordHash: 'x',
          createdAt: now.toISOString(),
          updatedAt: now.toISOString(),
        },
      ]),
    );
  }, 180_000);

  it('issues keys, audited, and lists them newest first, per account and in all', async () => {
    const cli = await keys.create('cli key');
    tick(1000);
    const mine = await keys.create('dashboard key', 'account:acc_a', 'acc_a');
    expect(cli.key).toMatch(/^adk_/);
    expect(mine).toMatchObject({ name: 'dashboard key', prefix: mine.key.slice(0, 10), revoked_at: null, last_used_at: null });
    expect((await keys.list()).map((key) => key.id)).toEqual([mine.id, cli.id]);
    expect(await keys.listForAccount('acc_a')).toEqual([
      { id: mine.id, name: 'dashboard key', prefix: mine.prefix, created_at: mine.created_at, revoked_at: null, last_used_at: null },
    ]);
    expect(await keys.countActiveForAccount('acc_a')).toBe(1);
    expect(await keys.accountOf(mine.id)).toBe('acc_a');
    expect(await keys.accountOf(cli.id)).toBeNull();
    expect(await keys.accountOf('key_none')).toBeNull();
    expect(await keys.idsOfAccount('acc_a')).toEqual([mine.id]);
    expect(await auditOf(mine.id)).toEqual(['account:acc_a key.create']);
    // The stored row never holds the key itself.
    const row = await store.first(store.db.select().from(store.t.apiKeys).where(eq(store.t.apiKeys.id, mine.id)));
    expect(JSON.stringify(row)).not.toContain(mine.key);
  });

  it('authenticates a live key, writing last_used_at at most once a minute', async () => {
    const created = await keys.create('reader');
    const lastUsed = async () => (await keys.list()).find((key) => key.id === created.id)?.last_used_at;
    expect(await keys.authenticate(created.key)).toBe(created.id);
    const first = await lastUsed();
    expect(first).toBe(now.toISOString());
    tick(30_000);
    await keys.authenticate(created.key);
    expect(await lastUsed()).toBe(first);
    tick(31_000);
    await keys.authenticate(created.key);
    expect(await lastUsed()).toBe(now.toISOString());
    await expect(keys.authenticate('adk_not-a-key')).rejects.toBeInstanceOf(InvalidApiKeyError);
    await expect(keys.authenticate('not even the prefix')).rejects.toBeInstanceOf(InvalidApiKeyError);
  });

  it('refuses a key of a disabled account, and takes it again when re-enabled', async () => {
    const created = await keys.create('of a disabled account', 'account:acc_off', 'acc_off');
    const setDisabled = (disabledAt: string | null) =>
      store.run(store.db.update(store.t.accounts).set({ disabledAt }).where(eq(store.t.accounts.id, 'acc_off')));
    await setDisabled(now.toISOString());
    await expect(keys.authenticate(created.key)).rejects.toBeInstanceOf(InvalidApiKeyError);
    await setDisabled(null);
    expect(await keys.authenticate(created.key)).toBe(created.id);
  });

  it("revokes once (audited once), refuses another account's key as not found, and stops the key", async () => {
    const created = await keys.create('soon revoked', 'account:acc_a', 'acc_a');
    await expect(keys.revoke(created.id, 'account:acc_off', 'acc_off')).rejects.toBeInstanceOf(NotFoundError);
    await expect(keys.revoke('key_none')).rejects.toBeInstanceOf(NotFoundError);
    tick(1000);
    // Two revocations at once: one revokes, the other finds it revoked (FOR UPDATE on PostgreSQL).
    const [a, b] = await Promise.all([keys.revoke(created.id, 'mod'), keys.revoke(created.id, 'mod')]);
    expect(a.revoked_at).toBe(now.toISOString());
    expect(b).toEqual(a);
    expect(await auditOf(created.id)).toEqual(['account:acc_a key.create', 'mod key.revoke']);
    await expect(keys.authenticate(created.key)).rejects.toBeInstanceOf(InvalidApiKeyError);
    expect(await keys.countActiveForAccount('acc_a')).toBe(1);
  });

  it('revokes and detaches every key of a closing account in its transaction, or none when it rolls back', async () => {
    const live = await keys.create('to close', 'account:acc_a', 'acc_a');
    await expect(
      store.transaction(async () => {
        await keys.revokeAllOfAccountInTransaction('acc_a', 'admin');
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await keys.countActiveForAccount('acc_a')).toBe(2);
    await store.transaction(() => keys.revokeAllOfAccountInTransaction('acc_a', 'admin'));
    expect(await keys.idsOfAccount('acc_a')).toEqual([]);
    await expect(keys.authenticate(live.key)).rejects.toBeInstanceOf(InvalidApiKeyError);
    expect(await auditOf(live.id)).toEqual(['account:acc_a key.create', 'admin key.revoke']);
    await expect(keys.revokeAllOfAccountInTransaction('acc_a', 'admin')).rejects.toThrow(/must be called inside/);
  });
});
