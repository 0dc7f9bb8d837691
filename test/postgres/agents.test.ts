import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { InvalidCursorError, NotFoundError } from '../../src-api/errors';
import { encodeCursor } from '../../src-api/modules/agents/agent-feed';
import { createAgentReads, type AgentReads } from '../../src-api/modules/agents/agent-reads';
import type { AgentRow } from '../../src-api/modules/agents/agents.table';
import { serializeProfile } from '../../src-api/modules/agents/profile-cache';
import { agentRow, bothStores } from '../helpers/both-stores';
import { untilSeen } from '../helpers/change-seen';

/**
 * The agents' reads (profiles, lists, bulk, the change feed, the console's
 * browse, the profile cache's catch-up) on the data-access seam, on SQLite and
 * on PostgreSQL 15: the same rows written through the store read back the same
 * (test/api/agents*.test.ts cover the HTTP side on SQLite).
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const T = (day: number) => `2026-10-${String(day).padStart(2, '0')}T12:00:00.000Z`;
const profileOf = (row: AgentRow) => JSON.parse(serializeProfile(row)) as unknown;
const parse = (json: Buffer) => JSON.parse(json.toString('utf8')) as Record<string, unknown>;

describe.each(stores.dialects)('agent reads on $dialect', ({ open }) => {
  let store: Store;
  let reads: AgentReads;
  let seq = 0;
  const rows = new Map<string, AgentRow>();

  const row = (id: string, fields: Partial<AgentRow> = {}): AgentRow => {
    const made = agentRow({
      id,
      name: `Agent ${id}`,
      sourceUrl: `https://example.org/${id}`,
      sourceUrlKey: `example.org/${id}`,
      changeSeq: ++seq,
      ...fields,
    });
    rows.set(id, made);
    return made;
  };
  /** A write as another process would make it: the next change_seq, straight into the table. */
  const write = async (id: string, fields: Partial<AgentRow>) => {
    const next = { ...rows.get(id)!, ...fields, version: rows.get(id)!.version + 1, changeSeq: ++seq };
    rows.set(id, next);
    const { agents } = store.t;
    await store.run(store.db.update(agents).set(next).where(eq(agents.id, id)));
    return next;
  };

  beforeAll(async () => {
    store = await open();
    reads = createAgentReads({ store, profileCacheEntries: 100 });
    const { agents } = store.t;
    await store.run(
      store.db.insert(agents).values([
        // Names in an order a natural-language collation sorts differently from bytes ("b" before "Z" there).
        row('agt_a', { name: 'Zeta', trustScore: 40, type: 'coding', createdAt: T(1), ratingCount: 0, ratingSum: 0 }),
        row('agt_b', { name: 'beta', trustScore: 80, type: 'research', createdAt: T(2), ratingCount: 2, ratingSum: 10 }),
        row('agt_c', { name: 'Alpha 50%_off', trustScore: 60, type: 'coding', createdAt: T(3), ratingCount: 50, ratingSum: 240 }),
        row('agt_D', { name: 'delta', trustScore: 60, type: 'coding', createdAt: T(4), ratingCount: 1, ratingSum: 5 }),
        row('agt_hidden', { name: 'Hidden', listed: false, trustScore: 99, createdAt: T(5) }),
      ]),
    );
  });

  it('gets a listed profile, as an object and as the schema JSON; unlisted and unknown are not found', async () => {
    expect(await reads.get('agt_b')).toEqual(profileOf(rows.get('agt_b')!));
    expect(parse(await reads.getJson('agt_b'))).toEqual(profileOf(rows.get('agt_b')!));
    // Twice: the second from the cache, byte for byte.
    expect((await reads.getJson('agt_b')).toString()).toBe(serializeProfile(rows.get('agt_b')!));
    await expect(reads.getJson('agt_hidden')).rejects.toThrow(NotFoundError);
    await expect(reads.get('agt_nope')).rejects.toThrow(NotFoundError);
    expect(await reads.getRow('agt_hidden')).toEqual(rows.get('agt_hidden'));
    expect(await reads.findRowAsync('agt_nope')).toBeUndefined();
  });

  it('pages the public list in each sort (text in byte order, unrated last, ties by id), of one type', async () => {
    const ids = async (query: Partial<Parameters<AgentReads['list']>[0]>) => {
      const page = await reads.list({ sort: 'trust_score', page: 1, limit: 10, ...query });
      return page.items.map((item) => item.id);
    };
    expect(await ids({})).toEqual(['agt_b', 'agt_c', 'agt_D', 'agt_a']);
    expect(await ids({ order: 'asc' })).toEqual(['agt_a', 'agt_D', 'agt_c', 'agt_b']);
    expect(await ids({ sort: 'name' })).toEqual(['agt_c', 'agt_a', 'agt_b', 'agt_D']);
    expect(await ids({ sort: 'rating' })).toEqual(['agt_c', 'agt_b', 'agt_D', 'agt_a']);
    expect(await ids({ sort: 'rating', order: 'asc' })).toEqual(['agt_D', 'agt_b', 'agt_c', 'agt_a']);
    expect(await ids({ sort: 'created_at' })).toEqual(['agt_D', 'agt_c', 'agt_b', 'agt_a']);
    expect(await ids({ type: 'coding', limit: 2 })).toEqual(['agt_c', 'agt_D']);
    const page = await reads.listJson({ sort: 'trust_score', type: 'coding', page: 2, limit: 2 });
    expect({ ...page, json: parse(page.json) }).toEqual({
      page: 2,
      limit: 2,
      total: 3,
      json: { agents: [profileOf(rows.get('agt_a')!)], page: 2, limit: 2, total: 3 },
    });
    expect(await reads.listedCount()).toBe(4);
  });

  it('browses for the console: visibility, a substring in any case (wildcards are plain), ties by id', async () => {
    const browse = async (query: Partial<Parameters<AgentReads['listForConsole']>[0]>) => {
      const page = await reads.listForConsole({ sort: 'trust_score', page: 1, limit: 10, visibility: 'all', ...query });
      return { ids: page.items.map((item) => item.id), total: page.total };
    };
    expect(await browse({})).toEqual({ ids: ['agt_hidden', 'agt_b', 'agt_c', 'agt_D', 'agt_a'], total: 5 });
    expect(await browse({ visibility: 'unlisted' })).toEqual({ ids: ['agt_hidden'], total: 1 });
    expect(await browse({ q: 'ALPHA' })).toEqual({ ids: ['agt_c'], total: 1 });
    expect(await browse({ q: '50%_' })).toEqual({ ids: ['agt_c'], total: 1 });
    expect(await browse({ q: '5_%' })).toEqual({ ids: [], total: 0 });
    expect(await browse({ sort: 'name', visibility: 'listed', limit: 2, page: 2 })).toEqual({ ids: ['agt_b', 'agt_D'], total: 4 });
    const [first] = (await reads.listForConsole({ sort: 'name', page: 1, limit: 1, visibility: 'unlisted' })).items;
    expect(first).toMatchObject({ id: 'agt_hidden', listed: false, version: 1, agent_card: null });
  });

  it('answers bulk requests in request order with the missing ids', async () => {
    expect(parse(await reads.bulkJson(['agt_D', 'agt_nope', 'agt_a', 'agt_hidden', 'agt_D']))).toEqual({
      agents: [profileOf(rows.get('agt_D')!), profileOf(rows.get('agt_a')!)],
      missing: ['agt_nope', 'agt_hidden'],
    });
  });

  it('follows the change feed, and the cached profiles follow writes by this or another process', async () => {
    const start = parse(await reads.changesJson(undefined, 100));
    expect((start.changes as { agent_id: string; change: string }[]).map((c) => [c.agent_id, c.change])).toEqual([
      ['agt_a', 'created'],
      ['agt_b', 'created'],
      ['agt_c', 'created'],
      ['agt_D', 'created'],
      ['agt_hidden', 'removed'],
    ]);
    const cursor = start.next_cursor as string;
    expect(cursor).toBe(encodeCursor(seq));
    await expect(reads.changesJson(encodeCursor(seq + 1), 10)).rejects.toThrow(InvalidCursorError);

    // Cached now; then changed and unlisted behind the cache's back.
    expect(parse(await reads.getJson('agt_a')).tagline).toBe(rows.get('agt_a')!.tagline);
    const edited = await write('agt_a', { tagline: 'A new tagline' });
    await write('agt_b', { listed: false });
    reads.changed(); // what this process's write path tells the readers (PostgreSQL; SQLite sees its own writes)
    expect(parse(await reads.getJson('agt_a'))).toEqual(profileOf(edited));
    await expect(reads.getJson('agt_b')).rejects.toThrow(NotFoundError);
    const page = parse(await reads.changesJson(cursor, 100));
    expect(page).toEqual({
      changes: [
        { agent_id: 'agt_a', change: 'updated', agent: profileOf(edited), cursor: encodeCursor(seq - 1) },
        { agent_id: 'agt_b', change: 'removed', cursor: encodeCursor(seq) },
      ],
      next_cursor: encodeCursor(seq),
    });
    expect(parse(await reads.changesJson(encodeCursor(seq), 100))).toEqual({ changes: [], next_cursor: encodeCursor(seq) });

    // Another process's write (nobody calls changed()): seen once the cursor has it (SQLite: from the
    // next event-loop turn; PostgreSQL: when the commit's notification arrives).
    const again = await write('agt_a', { tagline: 'Written elsewhere' });
    await untilSeen(reads.latestChangeSeqAsync, again.changeSeq);
    expect(parse(await reads.getJson('agt_a'))).toEqual(profileOf(again));
    expect(await reads.listedCount()).toBe(3);
  });

  it('warms the cache up in slices, and concurrent readers agree', async () => {
    await new Promise<void>((resolve, reject) => reads.warmUpProfiles({ onDone: resolve, onError: reject }));
    const [one, two, bulk] = await Promise.all([reads.getJson('agt_c'), reads.getJson('agt_c'), reads.bulkJson(['agt_c', 'agt_D'])]);
    expect(one.toString()).toBe(serializeProfile(rows.get('agt_c')!));
    expect(two.toString()).toBe(one.toString());
    expect(parse(bulk).agents).toEqual([profileOf(rows.get('agt_c')!), profileOf(rows.get('agt_D')!)]);
  });
});
