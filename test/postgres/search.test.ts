import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { NotFoundError } from '../../src-api/errors';
import { createSearchService, type SearchService } from '../../src-api/modules/search/search.service';
import type { SearchParams } from '../../src-api/modules/search/search.schemas';
import { bothStores } from '../helpers/both-stores';
import { plainAgentInput } from '../helpers/indexable-agent';
import { untilSeen } from '../helpers/change-seen';
import { storeServices } from '../helpers/store-services';

/**
 * Search on the data-access seam, on SQLite and on PostgreSQL 15: the in-memory index follows
 * max(change_seq) of the agents written through the store, by this process and by another one
 * (a second Store on the same database), and the hits' profiles are the public profiles.
 * test/api/search*.test.ts cover the HTTP side, ranking and the result cache on SQLite.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const clock = { now: () => new Date('2026-06-01T12:00:00.000Z') };

const input = plainAgentInput;

describe.each(stores.dialects)('search on $dialect', ({ open, openAgain }) => {
  let store: Store;
  let services: ReturnType<typeof storeServices>;
  let search: SearchService;
  /** Another process on the same database: its own Store, services and index. */
  let other: { services: ReturnType<typeof storeServices>; search: SearchService };

  const ids = async (params: SearchParams, on = search) => (await on.search(params)).agents.map((agent) => agent.id);

  beforeAll(async () => {
    store = await open();
    services = storeServices(store, { clock });
    search = createSearchService({ store, agents: services.agents });
    const again = await openAgain(store);
    const otherServices = storeServices(again, { clock });
    other = { services: otherServices, search: createSearchService({ store: again, agents: otherServices.agents, cache: true }) };
  }, 180_000);

  it('finds agents written through the store, with the hits’ profiles as GET /agents/{id} gives them, and pages with totals', async () => {
    const { agents } = services;
    for (const [i, name] of ['Orbital Planner', 'Orbital Mapper', 'Orbital Cartographer', 'Lunar Planner'].entries()) {
      const capabilities = [i < 3 ? 'trajectories' : 'tides'];
      await agents.edits.create(input(name, { capabilities, categories: ['space'] }), { id: `agt_orb${i}`, emitEvents: false });
    }

    expect(await ids({ q: 'orbital' })).toEqual(expect.arrayContaining(['agt_orb0', 'agt_orb1', 'agt_orb2']));
    const found = await search.searchJson({ q: 'planner', limit: 20 });
    const body = JSON.parse(found.json.toString('utf8')) as { query: string; agents: { id: string; score: number }[]; total: number };
    expect(body).toMatchObject({ query: 'planner', page: 1, limit: 20, total: 2 });
    expect(found).toMatchObject({ page: 1, limit: 20, total: 2 });
    for (const hit of body.agents) {
      const { score, ...profile } = hit;
      expect(score).toBeGreaterThan(0);
      // The same bytes as GET /agents/{id}: the profile cache's JSON, the score after it.
      expect(profile).toEqual(JSON.parse((await agents.getJson(hit.id)).toString('utf8')));
    }
    expect(await search.search({ q: 'planner' })).toEqual(body);

    // Paging: two of three orbital agents, then the third; the total counts all of them on each page.
    const first = await search.search({ q: 'orbital', limit: 2, page: 1 });
    const second = await search.search({ q: 'orbital', limit: 2, page: 2 });
    expect([first.total, second.total]).toEqual([3, 3]);
    expect(first.agents).toHaveLength(2);
    expect(second.agents).toHaveLength(1);
    expect(new Set([...first.agents, ...second.agents].map((agent) => agent.id))).toEqual(new Set(['agt_orb0', 'agt_orb1', 'agt_orb2']));
    // No query: every listed agent by trust score, filters applied.
    expect((await search.search({ capabilities: ['trajectories'], limit: 100 })).total).toBe(3);
    expect(await search.indexedCount()).toBe(await agents.listedCount());
    expect((await search.indexStatus()).documents).toBe(await agents.listedCount());
  });

  it('follows writes by another process once the change cursor moves: creates, edits, unlisting', async () => {
    await other.search.refresh();
    const otherAgents = other.services.agents;
    const created = await otherAgents.edits.create(input('Quasar Indexer', { capabilities: ['stars'] }), { id: 'agt_quasar', emitEvents: false });
    // Seen once this process's change cursor has it: SQLite reads it at most once per event-loop turn (the
    // write is seen from the next one on); PostgreSQL reads it again when the commit's notification arrives.
    const seen = async () => untilSeen(services.agents.latestChangeSeqAsync, await otherAgents.latestChangeSeqAsync());
    await seen();
    expect(await ids({ q: 'quasar' })).toEqual([created.id]);

    await otherAgents.edits.update(created.id, { name: 'Pulsar Indexer', tagline: 'Indexes pulsars' }, { emitEvents: false });
    await seen();
    expect(await ids({ q: 'quasar' })).toEqual([]);
    expect(await ids({ q: 'pulsar' })).toEqual([created.id]);
    const [hit] = (await search.search({ q: 'pulsar' })).agents;
    expect(hit).toMatchObject({ id: created.id, name: 'Pulsar Indexer' });

    const before = await search.indexedCount();
    await otherAgents.edits.setListed(created.id, false, { emitEvents: false });
    await seen();
    expect(await ids({ q: 'pulsar' })).toEqual([]);
    expect(await search.indexedCount()).toBe(before - 1);
    await expect(search.connections(created.id, 10)).rejects.toThrow(NotFoundError);

    // And the other way round: this process's write, in the other's (cached) index.
    expect(await ids({ q: 'orbital' }, other.search)).toHaveLength(3);
    await services.agents.edits.setListed('agt_orb2', false, { emitEvents: false });
    await untilSeen(otherAgents.latestChangeSeqAsync, await services.agents.latestChangeSeqAsync());
    expect(await ids({ q: 'orbital' }, other.search)).toHaveLength(2);
    await services.agents.edits.setListed('agt_orb2', true, { emitEvents: false });
    expect(await ids({ q: 'orbital' })).toHaveLength(3); // this process's own write: on the very next read
  });

  it('relates agents by shared categories, capabilities and author, as objects and as JSON; unknown agents are not found', async () => {
    const { agents } = services;
    await agents.edits.create(input('Comet Tracker', { categories: ['space'], capabilities: ['comets'], author: 'Halley' }), {
      id: 'agt_comet',
      emitEvents: false,
    });
    await agents.edits.create(input('Comet Watcher', { categories: ['space'], capabilities: ['comets'], author: 'Halley' }), {
      id: 'agt_comet2',
      emitEvents: false,
    });
    const related = await search.connections('agt_comet', 10);
    expect(related.agent_id).toBe('agt_comet');
    expect(related.connections[0]).toMatchObject({
      agent: { id: 'agt_comet2' },
      shared_categories: ['space'],
      shared_capabilities: ['comets'],
      same_author: true,
    });
    // Agents sharing only the category come after, never the agent itself.
    const relatedIds = related.connections.map((connection) => connection.agent.id);
    expect(relatedIds).toContain('agt_orb0');
    expect(relatedIds).not.toContain('agt_comet');
    expect(JSON.parse((await search.connectionsJson('agt_comet', 10)).toString('utf8'))).toEqual(related);
    expect(related.connections[0]!.agent).toEqual(JSON.parse((await agents.getJson('agt_comet2')).toString('utf8')));
    await expect(search.connectionsJson('agt_nope', 10)).rejects.toThrow(NotFoundError);
  });

  it('catches up a backlog of several batches once, in change order, whatever the number of searches at once', async () => {
    const { writes } = services;
    // 2,200 new agents (two catch-up batches), then a rename of some of them: a later change of the same rows.
    for (let part = 0; part < 2; part++) {
      const rows = Array.from({ length: 1_100 }, (_, i) =>
        writes.newRow({
          id: `agt_bulk_${part}_${i}`,
          name: `Nebula ${part * 1_100 + i}`,
          tagline: 'A bulk agent',
          sourceUrl: `https://example.org/bulk/${part}/${i}`,
          categories: ['bulk'],
        }),
      );
      await writes.write(rows.map((row) => ({ kind: 'create' as const, row })));
    }
    const renamed = await Promise.all(
      ['agt_bulk_0_5', 'agt_bulk_1_7'].map((id) => services.agents.edits.update(id, { name: `Galaxy ${id}` }, { emitEvents: false })),
    );
    // A fresh index (another process's first search): all of it at once, from several callers.
    const fresh = createSearchService({ store, agents: services.agents });
    const answers = await Promise.all([
      fresh.search({ q: 'nebula', limit: 5 }),
      fresh.search({ q: 'galaxy', limit: 5 }),
      fresh.indexedCount(),
      fresh.refresh(),
      fresh.search({ q: 'nebula', limit: 5 }),
    ]);
    const listed = await services.agents.listedCount();
    expect(await fresh.indexedCount()).toBe(listed);
    expect(answers[2]).toBe(listed);
    expect((answers[0] as { total: number }).total).toBe(2_198);
    expect((answers[4] as { total: number }).total).toBe(2_198);
    expect((answers[1] as { agents: { id: string }[] }).agents.map((agent) => agent.id).sort()).toEqual(renamed.map((row) => row.id).sort());

    // A background warm-up meanwhile searches are answered: the same index in the end.
    const warming = createSearchService({ store, agents: services.agents });
    const done = new Promise<void>((resolve, reject) => warming.warmUp({ onDone: resolve, onError: reject }));
    const during = await warming.search({ q: 'galaxy', limit: 5 });
    await done;
    expect(during.agents.map((agent) => agent.id).sort()).toEqual(renamed.map((row) => row.id).sort());
    expect(await warming.indexedCount()).toBe(listed);
    expect((await warming.search({ q: 'nebula', limit: 1 })).total).toBe(2_198);
  });
});
