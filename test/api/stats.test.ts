import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TYPES } from '../../src-api/modules/agents/agents.schemas';
import { untilSeen } from '../helpers/change-seen';
import { agentInput, json, servicesBeside, startTestServer, type TestServer } from '../helpers/test-server';
import { insertQueuedWork } from '../helpers/queued-work';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('GET /stats', () => {
  it('reports zeros for an empty directory, with every type listed', async () => {
    const response = await server.api('/stats');
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toEqual({
      total_agents: 0,
      verified_agents: 0,
      types: [...AGENT_TYPES],
      by_type: Object.fromEntries(AGENT_TYPES.map((type) => [type, 0])),
      by_category: {},
      reviews: { count: 0, average_rating: null },
    });
  });

  it('counts listed agents, verified ones, types, categories and visible reviews', async () => {
    const { agents } = server.services;
    const a = await agents.edits.create(agentInput({ name: 'Stat One', type: 'coding', categories: ['developer-tools', 'testing'] }), {
      emitEvents: false,
    });
    const b = await agents.edits.create(agentInput({ name: 'Stat Two', type: 'coding', categories: ['developer-tools'] }), {
      emitEvents: false,
    });
    const c = await agents.edits.create(agentInput({ name: 'Stat Three', type: 'research', categories: ['research', 'testing'] }), {
      emitEvents: false,
    });
    const hidden = await agents.edits.create(agentInput({ name: 'Stat Hidden', type: 'security', categories: ['security'] }), {
      emitEvents: false,
    });
    await agents.edits.setVerified(a.id, true, { emitEvents: false });
    await agents.edits.setVerified(hidden.id, true, { emitEvents: false });

    for (const [id, rating] of [
      [a.id, 5],
      [a.id, 4],
      [b.id, 2],
      [c.id, 4],
      [hidden.id, 1],
    ] as const) {
      expect((await server.post(`/agents/${id}/reviews`, { rating })).status).toBe(201);
    }
    // A review a moderator hid, and an agent taken off the directory: neither counts.
    const spam = await json(await server.post(`/agents/${c.id}/reviews`, { rating: 1, comment: 'spam' }));
    await server.services.store.run(
      server.services.store.db
        .update(server.services.store.t.reviews)
        .set({ hidden: true })
        .where(eq(server.services.store.t.reviews.id, spam.id)),
    );
    await agents.edits.setListed(hidden.id, false, { emitEvents: false });

    const body = await json(await server.api('/stats'));
    expect(body.total_agents).toBe(3);
    expect(body.verified_agents).toBe(1);
    expect(body.by_type).toEqual({ ...Object.fromEntries(AGENT_TYPES.map((type) => [type, 0])), coding: 2, research: 1 });
    expect(body.by_category).toEqual({ 'developer-tools': 2, testing: 2, research: 1 });
    expect(Object.keys(body.by_category)).toEqual(['developer-tools', 'testing', 'research']);
    expect(body.reviews).toEqual({ count: 4, average_rating: 3.75 });
    expect(body.types).toEqual([...AGENT_TYPES]);

    // The same figures straight from SQL (numbers as either driver gives them).
    const { store } = server.services;
    const [listed] = await store.all<{ n: number | string; v: number | string }>(
      sql`SELECT count(*) AS n, sum(CASE WHEN verified THEN 1 ELSE 0 END) AS v FROM agents WHERE listed`,
    );
    expect([body.total_agents, body.verified_agents]).toEqual([Number(listed!.n), Number(listed!.v)]);
    const [visible] = await store.all<{ n: number | string; avg: number | string }>(
      sql`SELECT count(*) AS n, avg(r.rating) AS avg FROM reviews r JOIN agents a ON a.id = r.agent_id WHERE NOT r.hidden AND a.listed`,
    );
    expect(body.reviews.count).toBe(Number(visible!.n));
    expect(body.reviews.average_rating).toBeCloseTo(Number(visible!.avg), 2);
  });
});

describe('StatsService.overview (console dashboard)', () => {
  it('counts pending queues and builds a 30-day activity series', async () => {
    const { store, stats } = server.services;
    const now = Date.now();
    const day = 86_400_000;
    const iso = (daysAgo: number) => new Date(now - daysAgo * day).toISOString();
    const agentId = (await server.services.agents.edits.create(agentInput({ name: 'Overview Agent' }), { emitEvents: false })).id;

    await insertQueuedWork(store, agentId, iso, 'overview');

    const overview = await stats.overview();
    expect(overview.pending_submissions).toBe(3);
    expect(overview.pending_claims).toBe(2);
    expect(overview.activity).toHaveLength(30);
    const today = new Date(now).toISOString().slice(0, 10);
    expect(overview.activity[29]!.date).toBe(today);
    expect(overview.activity[0]!.date).toBe(iso(29).slice(0, 10));

    for (const point of overview.activity) {
      const day = sql`substr(created_at, 1, 10) = ${point.date}`;
      const count = async (query: ReturnType<typeof sql>) => Number((await store.all<{ n: number | string }>(query))[0]?.n);
      expect(point.submissions).toBe(await count(sql`SELECT count(*) AS n FROM submissions WHERE ${day}`));
      expect(point.reviews).toBe(await count(sql`SELECT count(*) AS n FROM reviews WHERE NOT hidden AND ${day}`));
      expect(point.agents).toBe(await count(sql`SELECT count(*) AS n FROM agents WHERE ${day}`));
    }
    const threeDaysAgo = overview.activity.find((point) => point.date === iso(3).slice(0, 10))!;
    expect(threeDaysAgo.submissions).toBe(2);
    expect(overview.activity.reduce((sum, point) => sum + point.submissions, 0)).toBe(3);
    expect(overview.activity[29]!.agents).toBe(5);
    expect(overview.activity[29]!.reviews).toBe(5);
  });
});

describe('GET /stats cache', () => {
  it('computes once while nothing changes, and sees review writes, moderation and other processes at once', async () => {
    const { agents, reviews: reviewsService, stats } = server.services;
    const first = await stats.directory();
    expect(await stats.directory()).toBe(first); // the same cached object: no recomputation

    const agent = await agents.edits.create(agentInput({ name: 'Cache Probe', type: 'coding' }), { emitEvents: false });
    const afterAgent = await json(await server.api('/stats'));
    expect(afterAgent.total_agents).toBe(first.total_agents + 1);

    const review = await server.post(`/agents/${agent.id}/reviews`, { rating: 1 });
    expect(review.status).toBe(201);
    const afterReview = await json(await server.api('/stats'));
    expect(afterReview.reviews.count).toBe(first.reviews.count + 1);

    await reviewsService.setHidden((await json(review)).id, true, 'test');
    expect((await json(await server.api('/stats'))).reviews.count).toBe(first.reviews.count);

    // Another process (a CLI beside the server) writes to the same database.
    const other = await servicesBeside(server.services.config);
    try {
      await other.services.agents.edits.create(agentInput({ name: 'From Another Process' }), { emitEvents: false });
      // Seen once the server's change cursor has it (PostgreSQL: when the commit's notification arrives).
      await untilSeen(server.services.agents.latestChangeSeqAsync, await other.services.agents.latestChangeSeqAsync());
    } finally {
      await other.close();
    }
    expect((await json(await server.api('/stats'))).total_agents).toBe(first.total_agents + 2);
  });
});
