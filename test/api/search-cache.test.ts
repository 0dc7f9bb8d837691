import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfig } from '../../src-api/config';
import { openStore } from '../../src-api/db/open-store';
import { createServices } from '../../src-api/services';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { seededRandom } from '../../src-api/lib/seeded-random';
import { untilSeen } from '../helpers/change-seen';

const random = seededRandom;

const WORDS = ['quillon', 'vellum', 'rondel', 'gorget', 'pauldron', 'tasset'];

describe('search result cache', () => {
  let cached: TestServer;
  let uncached: TestServer;

  beforeAll(async () => {
    cached = await startTestServer({ searchCache: true, demoData: false });
    uncached = await startTestServer({ searchCache: false, demoData: false });
  });
  afterAll(async () => {
    await cached.close();
    await uncached.close();
  });

  it('answers a repeated search from the cache only while nothing changed, and not at all when switched off', async () => {
    await cached.services.agents.edits.create(agentInput({ name: 'Quillon Keeper' }), { emitEvents: false });
    await uncached.services.agents.edits.create(agentInput({ name: 'Quillon Keeper' }), { emitEvents: false });
    const params = { q: 'quillon', limit: 5 };
    const first = (await cached.services.search.searchJson(params)).json;
    expect((await cached.services.search.searchJson(params)).json).toBe(first);
    await cached.services.agents.edits.create(agentInput({ name: 'Quillon Second' }), { emitEvents: false });
    const after = (await cached.services.search.searchJson(params)).json;
    expect(after).not.toBe(first);
    expect(JSON.parse(after.toString()).total).toBe(2);

    const off = (await uncached.services.search.searchJson(params)).json;
    expect((await uncached.services.search.searchJson(params)).json).not.toBe(off);
    expect((await uncached.services.search.searchJson(params)).json.equals(off)).toBe(true);
  });

  it('never serves a result from before a write, by this process or another one on the same database', async () => {
    // The answer with the cache on must always equal a fresh computation (a second service set with the cache off, on the same database).
    const config = cached.services.config;
    const opened = await openStore(config);
    const other = createServices({ store: opened.store, config: createConfig({ ...config, searchCache: false }) });
    const r = random(7);
    const ids: string[] = [];
    try {
      for (let step = 0; step < 150; step++) {
        const writer = r.int(2) === 0 ? cached.services : other;
        const roll = r.int(6);
        if (roll === 0 || ids.length === 0) {
          const name = `${r.pick(WORDS)} ${r.pick(WORDS)}`;
          ids.push(
            (await writer.agents.edits.create(agentInput({ name, description: `${r.pick(WORDS)} agent` }), { emitEvents: false })).id,
          );
        } else if (roll === 1) {
          await writer.agents.edits.update(r.pick(ids), { tagline: `Now about ${r.pick(WORDS)}` }, { emitEvents: false });
        } else if (roll === 2) {
          const id = r.pick(ids);
          await writer.agents.edits.setListed(id, !(await writer.agents.getRow(id)).listed, { emitEvents: false });
        } else if (roll === 3) {
          await writer.agents.edits.setStatus(r.pick(ids), r.pick(['active', 'deprecated'] as const), null, { emitEvents: false });
        }
        // A write reaches the other process once its change cursor has moved (at once on SQLite; on
        // PostgreSQL when the commit's notification arrives): from then on, never stale. Both ways: the
        // fresh computation below runs in the other service set, with a search index of its own.
        const written = await writer.agents.latestChangeSeqAsync();
        for (const reader of [cached.services, other]) await untilSeen(reader.agents.latestChangeSeqAsync, written);
        // Searches over REST (the cached server) and in the other service set (never cached), twice each.
        for (let i = 0; i < 2; i++) {
          const q = r.int(3) === 0 ? `${r.pick(WORDS)} ${r.pick(WORDS)}` : r.pick(WORDS);
          const page = 1 + r.int(2);
          const viaRest = await json(await cached.api(`/agents/search?${new URLSearchParams({ q, limit: '3', page: String(page) })}`));
          const fresh = await other.search.search({ q, limit: 3, page });
          expect(
            { ids: viaRest.agents.map((agent: { id: string }) => agent.id), total: viaRest.total },
            `step ${step}, q ${q}, page ${page}`,
          ).toEqual({ ids: fresh.agents.map((agent) => agent.id), total: fresh.total });
        }
      }
    } finally {
      await opened.close();
    }
  });
});
