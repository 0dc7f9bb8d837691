import { max } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { AGENT_TYPES } from '../../src-api/modules/agents/agents.schemas';
import { createStatsService, type StatsService } from '../../src-api/modules/stats/stats.service';
import { agentRow, bothStores } from '../helpers/both-stores';
import { insertQueuedWork } from '../helpers/queued-work';

/**
 * The stats service, the first one ported to the data-access seam, on SQLite
 * and on PostgreSQL: the same rows written through the store give the same
 * /stats figures and console overview on both (test/api/stats.test.ts covers
 * the HTTP and tRPC side on SQLite).
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const NOW = new Date('2026-11-26T15:00:00.000Z');
const DAY = 86_400_000;
const iso = (daysAgo: number) => new Date(NOW.getTime() - daysAgo * DAY).toISOString();

describe.each(stores.dialects)('stats on $dialect', ({ open }) => {
  let store: Store;
  let stats: StatsService;
  let clockMs = NOW.getTime();
  let seq = 0;

  const addAgent = (id: string, fields: Parameters<typeof agentRow>[0]) =>
    store.run(
      store.db
        .insert(store.t.agents)
        .values(agentRow({ id, sourceUrlKey: `example.org/${id}`, createdAt: iso(0), changeSeq: ++seq, ...fields })),
    );
  const addReview = (id: string, agentId: string, rating: number, hidden = false, daysAgo = 0) =>
    store.run(store.db.insert(store.t.reviews).values({ id, agentId, rating, hidden, createdAt: iso(daysAgo) }));

  beforeAll(async () => {
    store = await open();
    const { agents } = store.t;
    stats = createStatsService({
      store,
      clock: { now: () => new Date(clockMs) },
      // The change cursor the agents service keeps on SQLite, read here through the store.
      agents: { latestChangeSeqAsync: async () => (await store.first(store.db.select({ seq: max(agents.changeSeq) }).from(agents)))?.seq ?? 0 },
      cacheTtlMs: 60_000,
    });
  }, 180_000);

  it('reports zeros for an empty directory, with every type listed', async () => {
    expect(await stats.directory()).toEqual({
      total_agents: 0,
      verified_agents: 0,
      types: [...AGENT_TYPES],
      by_type: Object.fromEntries(AGENT_TYPES.map((type) => [type, 0])),
      by_category: {},
      reviews: { count: 0, average_rating: null },
    });
  });

  it('counts listed agents, verified ones, types, categories and visible reviews', async () => {
    await addAgent('agt_one', { type: 'coding', categories: ['developer-tools', 'testing'], verified: true });
    await addAgent('agt_two', { type: 'coding', categories: ['developer-tools', 'Zeta', 'alpha'], verified: false });
    await addAgent('agt_three', { type: 'research', categories: ['research', 'testing'], verified: false });
    await addAgent('agt_hidden', { type: 'security', categories: ['security'], verified: true, listed: false, createdAt: iso(2) });
    for (const [id, agentId, rating] of [
      ['rev_1', 'agt_one', 5],
      ['rev_2', 'agt_one', 4],
      ['rev_3', 'agt_two', 2],
      ['rev_4', 'agt_three', 4],
      ['rev_5', 'agt_hidden', 1],
    ] as const) {
      await addReview(id, agentId, rating);
    }
    await addReview('rev_spam', 'agt_three', 1, true);

    const body = await stats.directory();
    expect(body.total_agents).toBe(3);
    expect(body.verified_agents).toBe(1);
    expect(body.by_type).toEqual({ ...Object.fromEntries(AGENT_TYPES.map((type) => [type, 0])), coding: 2, research: 1 });
    // Most first, then in byte order (SQLite's; PostgreSQL sorts with COLLATE "C" to match): 'Zeta' before 'alpha'.
    expect(Object.entries(body.by_category)).toEqual([
      ['developer-tools', 2],
      ['testing', 2],
      ['Zeta', 1],
      ['alpha', 1],
      ['research', 1],
    ]);
    expect(body.reviews).toEqual({ count: 4, average_rating: 3.75 });
  });

  it('keeps the answer while the cursor stays, and recomputes when it moves or the TTL passes', async () => {
    const first = await stats.directory();
    expect(await stats.directory()).toBe(first);
    await addAgent('agt_four', { type: 'research', categories: [] });
    const moved = await stats.directory();
    expect(moved.total_agents).toBe(first.total_agents + 1);
    expect(await stats.directory()).toBe(moved);
    clockMs += 60_000;
    expect(await stats.directory()).not.toBe(moved);
  });

  it('counts pending queues and builds a 30-day activity series', async () => {
    await insertQueuedWork(store, 'agt_one', iso, '');
    await addReview('rev_old', 'agt_two', 3, false, 3);

    clockMs = NOW.getTime();
    const overview = await stats.overview();
    expect(overview.pending_submissions).toBe(3);
    expect(overview.pending_claims).toBe(2);
    expect(overview.activity).toHaveLength(30);
    expect(overview.activity[0]!.date).toBe(iso(29).slice(0, 10));
    expect(overview.activity[29]).toEqual({ date: iso(0).slice(0, 10), submissions: 1, reviews: 5, agents: 4 });
    expect(overview.activity.find((point) => point.date === iso(3).slice(0, 10))).toEqual({
      date: iso(3).slice(0, 10),
      submissions: 2,
      reviews: 1,
      agents: 0,
    });
    expect(overview.activity.find((point) => point.date === iso(2).slice(0, 10))!.agents).toBe(1);
    expect(overview.activity.reduce((sum, point) => sum + point.submissions, 0)).toBe(3);
  });
});
