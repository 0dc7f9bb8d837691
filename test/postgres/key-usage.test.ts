import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { createKeyUsage, type KeyUsage } from '../../src-api/modules/keys/key-usage';
import { bothStores } from '../helpers/both-stores';

/**
 * API key usage per day (the dashboard's chart), ported to the data-access
 * seam, on SQLite and on PostgreSQL: counts kept in memory, added to the daily
 * rows by one upsert (ON CONFLICT … excluded), read back summed and zero-filled.
 */
const stores = bothStores();
const rename = (from: string, to: string) => sql.raw(`ALTER TABLE ${from} RENAME TO ${to}`);
afterAll(() => stores.cleanup());

describe.each(stores.dialects)('key usage on $dialect', ({ open }) => {
  let store: Store;
  let usage: KeyUsage;
  let now = new Date('2025-03-10T23:59:59.000Z');

  beforeAll(async () => {
    store = await open();
    usage = createKeyUsage({ store, clock: { now: () => now } });
  }, 180_000);

  const rows = async () => {
    const { keyUsageDaily } = store.t;
    const all = await store.rows(store.db.select().from(keyUsageDaily));
    return all.sort((a, b) => `${a.keyId}${a.day}`.localeCompare(`${b.keyId}${b.day}`));
  };

  it('keeps counts in memory until a flush, then adds them to the day’s row', async () => {
    usage.record('key_a', false);
    usage.record('key_a', true);
    usage.record('key_b', false);
    expect(await rows()).toEqual([]);
    await usage.flush();
    expect(await rows()).toEqual([
      { keyId: 'key_a', day: '2025-03-10', requests: 2, rateLimited: 1 },
      { keyId: 'key_b', day: '2025-03-10', requests: 1, rateLimited: 0 },
    ]);
    // Across midnight (UTC): a new row for the new day; the old one grows by what it was still owed.
    usage.record('key_a', false);
    now = new Date('2025-03-11T00:00:01.000Z');
    usage.record('key_a', true);
    await usage.flush();
    expect(await rows()).toEqual([
      { keyId: 'key_a', day: '2025-03-10', requests: 3, rateLimited: 1 },
      { keyId: 'key_a', day: '2025-03-11', requests: 1, rateLimited: 1 },
      { keyId: 'key_b', day: '2025-03-10', requests: 1, rateLimited: 0 },
    ]);
  });

  it('writes on its own every few seconds of recording', async () => {
    now = new Date(now.getTime() + 5_000);
    usage.record('key_c', false); // due: starts a flush, not awaited by the caller
    await vi.waitFor(async () =>
      expect((await rows()).find((row) => row.keyId === 'key_c')).toEqual({
        keyId: 'key_c',
        day: '2025-03-11',
        requests: 1,
        rateLimited: 0,
      }),
    );
  });

  it('sums the asked keys per day, oldest first, zero-filled, counting what is still in memory', async () => {
    usage.record('key_b', true);
    expect(await usage.daily(['key_a', 'key_b'], 3)).toEqual([
      { date: '2025-03-09', requests: 0, rate_limited: 0 },
      { date: '2025-03-10', requests: 4, rate_limited: 1 },
      { date: '2025-03-11', requests: 2, rate_limited: 2 },
    ]);
    expect(await usage.daily([], 2)).toEqual([
      { date: '2025-03-10', requests: 0, rate_limited: 0 },
      { date: '2025-03-11', requests: 0, rate_limited: 0 },
    ]);
    expect((await usage.daily(['key_c'], 1))[0]).toEqual({ date: '2025-03-11', requests: 1, rate_limited: 0 });
  });

  it('puts the counts back in memory when the write fails, and writes them on the next flush', async () => {
    const { keyUsageDaily } = store.t;
    usage.record('key_d', false);
    usage.record('key_d', false);
    // A failing write: the table is renamed away for the first flush.
    await store.run(rename('key_usage_daily', 'kud_away'));
    await expect(usage.flush()).rejects.toThrow();
    await store.run(rename('kud_away', 'key_usage_daily'));
    usage.record('key_d', true);
    await usage.flush();
    expect(await store.rows(store.db.select().from(keyUsageDaily).where(eq(keyUsageDaily.keyId, 'key_d')))).toEqual([
      { keyId: 'key_d', day: '2025-03-11', requests: 3, rateLimited: 1 },
    ]);
  });
});
