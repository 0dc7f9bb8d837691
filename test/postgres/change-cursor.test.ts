import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ListenHandlers, Store } from '../../src-api/db/store';
import { pgChangeCursor, type AsyncChangeCursor } from '../../src-api/modules/agents/agent-changes';
import { pgAgentRowReads } from '../../src-api/modules/agents/agent-rows-pg';
import { bothStores } from '../helpers/both-stores';
import { plainAgentInput } from '../helpers/indexable-agent';
import { untilSeen } from '../helpers/change-seen';
import { storeServices } from '../helpers/store-services';

/**
 * The change cursor across processes: another process's agent writes reach this one's readers
 * (profiles, list counts), on SQLite by reading, on PostgreSQL by the notification the agents
 * table's statement trigger sends at commit (migration 0004), heard on the store's listening
 * connection. On PostgreSQL also: nothing is read while nothing changes, and a lost listening
 * connection falls back to reading, reconnects and catches up.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const clock = { now: () => new Date('2026-06-01T12:00:00.000Z') };
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const input = plainAgentInput;
const parse = (json: Buffer) => JSON.parse(json.toString('utf8')) as Record<string, unknown>;

describe.each(stores.dialects)('the change cursor across processes on $dialect', ({ open, openAgain }) => {
  let here: ReturnType<typeof storeServices>;
  let there: ReturnType<typeof storeServices>;

  beforeAll(async () => {
    const store = await open();
    here = storeServices(store, { clock });
    there = storeServices(await openAgain(store), { clock });
  }, 180_000);

  it("sees another process's creates, edits and unlistings in profiles and counts", async () => {
    const { agents } = here;
    expect(await agents.listedCount()).toBe(0);
    const created = await there.agents.edits.create(input('Comet Tracker'), { id: 'agt_comet', emitEvents: false });
    await untilSeen(agents.latestChangeSeqAsync, await there.agents.latestChangeSeqAsync());
    expect(parse(await agents.getJson(created.id))).toMatchObject({ id: created.id, name: 'Comet Tracker' });
    expect(await agents.listedCount()).toBe(1);

    await there.agents.edits.update(created.id, { tagline: 'Tracks comets, written elsewhere' }, { emitEvents: false });
    await untilSeen(agents.latestChangeSeqAsync, await there.agents.latestChangeSeqAsync());
    expect(parse(await agents.getJson(created.id))).toMatchObject({ tagline: 'Tracks comets, written elsewhere' });

    await there.agents.edits.setListed(created.id, false, { emitEvents: false });
    await untilSeen(agents.latestChangeSeqAsync, await there.agents.latestChangeSeqAsync());
    expect(await agents.listedCount()).toBe(0);

    // And this process's own write, on the other's readers, which have cached the count meanwhile.
    expect(await there.agents.listedCount()).toBe(0);
    await agents.edits.setListed(created.id, true, { emitEvents: false });
    expect(await agents.listedCount()).toBe(1); // its own write: on the very next read
    await untilSeen(there.agents.latestChangeSeqAsync, await agents.latestChangeSeqAsync());
    expect(await there.agents.listedCount()).toBe(1);
  });

  it("orders list pages by another process's edits (PostgreSQL keeps a page's ids until the cursor moves)", async () => {
    const { agents } = here;
    await there.agents.edits.create(input('Aurora Watcher', { type: 'research' }), { id: 'agt_aurora', emitEvents: false });
    await there.agents.edits.create(input('Borealis Watcher', { type: 'research' }), { id: 'agt_borealis', emitEvents: false });
    await untilSeen(agents.latestChangeSeqAsync, await there.agents.latestChangeSeqAsync());
    const page = async () => {
      const { json, total } = await agents.listJson({ page: 1, limit: 10, sort: 'name', type: 'research' });
      return { names: (parse(json).agents as { name: string }[]).map((agent) => agent.name), total };
    };
    // Asked twice at once, then again: the same page.
    const [first, again] = await Promise.all([page(), page()]);
    expect(first).toEqual({ names: ['Aurora Watcher', 'Borealis Watcher'], total: 2 });
    expect(again).toEqual(first);
    expect(await page()).toEqual(first);

    await there.agents.edits.update('agt_aurora', { name: 'Zenith Watcher' }, { emitEvents: false });
    await untilSeen(agents.latestChangeSeqAsync, await there.agents.latestChangeSeqAsync());
    expect(await page()).toEqual({ names: ['Borealis Watcher', 'Zenith Watcher'], total: 2 });

    await there.agents.edits.setListed('agt_borealis', false, { emitEvents: false });
    await untilSeen(agents.latestChangeSeqAsync, await there.agents.latestChangeSeqAsync());
    expect(await page()).toEqual({ names: ['Zenith Watcher'], total: 1 });
  });
});

describe('the change cursor on PostgreSQL: pushed by LISTEN/NOTIFY', () => {
  const postgres = stores.dialects.find((d) => d.dialect === 'postgres')!;
  let store: Store;
  let other: ReturnType<typeof storeServices>;
  let cursor: AsyncChangeCursor;
  let reads = 0;
  /** The listener's state, and how many times it went down and came up. */
  const listening = { on: false, drops: 0, ups: 0 };

  /** The backends of the listening connections (this store's and the other's), terminated as a server restart would. */
  const dropListener = async () => {
    const killed = await store.all<{ done: boolean }>(
      sql`SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`,
    );
    expect(killed.length).toBeGreaterThan(0);
    expect(killed.every((row) => row.done)).toBe(true);
  };
  const readsOver = async (turns: number) => {
    const before = reads;
    for (let turn = 0; turn < turns; turn++) {
      await cursor.latest();
      await nextTurn();
    }
    return reads - before;
  };

  beforeAll(async () => {
    store = await postgres.open();
    other = storeServices(await postgres.openAgain(store), { clock });
    const rows = pgAgentRowReads(store);
    // The store, its listen() watched: the test waits for the listener to be up or down.
    const watched = Object.assign(Object.create(store) as Store, {
      listen: (channel: string, handlers: ListenHandlers) =>
        store.listen(channel, {
          notified: handlers.notified,
          listening(on) {
            listening.on = on;
            listening[on ? 'ups' : 'drops']++;
            handlers.listening(on);
          },
        }),
    });
    cursor = pgChangeCursor(watched, {
      latestChangeSeq: () => {
        reads++;
        return rows.latestChangeSeq();
      },
    });
  }, 180_000);

  it('reads max(change_seq) only when a commit has notified, in any process', async () => {
    expect(await cursor.latest()).toBe(-1);
    await vi.waitFor(() => expect(listening.on).toBe(true));
    expect(await cursor.latest()).toBe(-1);
    expect(await readsOver(5)).toBe(0);

    await other.agents.edits.create(input('Nebula Mapper'), { id: 'agt_nebula', emitEvents: false });
    const seq = await other.agents.latestChangeSeqAsync();
    await untilSeen(() => cursor.latest(), seq);
    expect(await readsOver(5)).toBe(0);

    // A write that commits nothing (rolled back) notifies nothing either.
    const { agents } = store.t;
    await expect(
      store.transaction(async () => {
        await store.run(store.db.update(agents).set({ tagline: 'never' }));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await nextTurn();
    expect(await readsOver(3)).toBe(0);
  });

  it('falls back to reading while the listening connection is down, then listens again and catches up', async () => {
    await vi.waitFor(() => expect(listening.on).toBe(true));
    const { drops, ups } = listening;
    await dropListener();
    await vi.waitFor(() => expect(listening.drops).toBe(drops + 1));

    // Written while nobody listens: no notification reaches this process. Seen by the per-turn read
    // (test/unit/change-cursor counts those), or by the fresh read after reconnecting if that came first.
    await other.agents.edits.update('agt_nebula', { tagline: 'Maps nebulae while the listener is down' }, { emitEvents: false });
    const missed = await other.agents.latestChangeSeqAsync();
    await nextTurn();
    expect(await cursor.latest()).toBe(missed);

    // Reconnected (a second later): reads afresh once, then only on notifications again.
    await vi.waitFor(() => expect(listening.ups).toBe(ups + 1), { timeout: 10_000 });
    expect(await cursor.latest()).toBe(missed);
    expect(await readsOver(5)).toBe(0);
    await other.agents.edits.update('agt_nebula', { tagline: 'Maps nebulae, listened to again' }, { emitEvents: false });
    await untilSeen(() => cursor.latest(), await other.agents.latestChangeSeqAsync());
  });
});
