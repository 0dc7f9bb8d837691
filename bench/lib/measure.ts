/**
 * What a bench run measures besides load: the answers' quality over HTTP (typo and exact targets in the
 * top 5, filters obeyed) and the engine in this process (search latency per class, writes, freshness).
 */
import { performance } from 'node:perf_hooks';
import { createConfig } from '../../src-api/config';
import { openStore } from '../../src-api/db/open-store';
import { createServices } from '../../src-api/services';
import { classSearches, createRandom, filtersOf, mixedSearches, qualityQueries, SEARCH_CLASSES, type BenchAgent } from './dataset';

export async function measureQuality(base: string, agents: BenchAgent[], smoke: boolean) {
  const queries = qualityQueries(agents, smoke ? 200 : 1000);
  const hits = { exact: 0, typo: 0 };
  const counts = { exact: 0, typo: 0 };
  for (const query of queries) {
    const body = (await (await fetch(`${base}/agents/search?${new URLSearchParams({ q: query.query, limit: '5' })}`)).json()) as {
      agents: { id: string }[];
    };
    counts[query.kind]++;
    if (body.agents.some((agent) => agent.id === query.targetId)) hits[query.kind]++;
  }
  let filterChecks = 0;
  let filterViolations = 0;
  for (const search of mixedSearches(agents, 200, 5).filter((s) => s.type || s.min_trust !== undefined || s.capabilities)) {
    const response = await fetch(`${base}/agents/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: search.q, limit: 100, ...filtersOf(search) }),
    });
    const body = (await response.json()) as { agents: { type: string; trust_score: number; capabilities: string[] }[] };
    for (const agent of body.agents) {
      filterChecks++;
      const ok =
        (!search.type || agent.type === search.type) &&
        (search.min_trust === undefined || agent.trust_score >= search.min_trust) &&
        (!search.capabilities ||
          search.capabilities.every((c) => agent.capabilities.map((x) => x.toLowerCase()).includes(c.toLowerCase())));
      if (!ok) filterViolations++;
    }
  }
  return {
    exact: (hits.exact / counts.exact) * 100,
    typo: (hits.typo / counts.typo) * 100,
    exactCount: counts.exact,
    typoCount: counts.typo,
    filterChecks,
    filterViolations,
  };
}

export async function measureInProcess(
  where: { dataDir: string; databaseUrl: string | undefined },
  agents: BenchAgent[],
  searches: ReturnType<typeof mixedSearches>,
  smoke: boolean,
) {
  const config = createConfig({ dataDir: where.dataDir, databaseUrl: where.databaseUrl, demoData: false, searchCache: false });
  const opened = await openStore(config);
  const services = createServices({ store: opened.store, config });
  // Awaited: on PostgreSQL a search may read (the change cursor, the hits' profiles); on SQLite it answers at once.
  const run = async (s: (typeof searches)[number]) =>
    services.search.search({ query: s.q, limit: 20, type: s.type as never, min_trust: s.min_trust, capabilities: s.capabilities });
  // Warmed as the server warms itself at start (src-api/server.ts): the index, then the profile cache filled with
  // serialized profiles (up to its size). The load phases measure the server only once it reports that work done
  // (idle), so the serial figures start from the same state; cold profile reads took the in-process p99 of filtered
  // POST to 6-9 ms at 100,000.
  await new Promise<void>((resolve, reject) => services.search.warmUp({ onDone: resolve, onError: reject }));
  await new Promise<void>((resolve, reject) => services.agents.warmUpProfiles({ onDone: resolve, onError: reject }));
  const timings: number[] = [];
  for (let round = 0; round < 3; round++) {
    for (const search of searches) {
      const started = performance.now();
      await run(search);
      timings.push(performance.now() - started);
    }
  }
  timings.sort((a, b) => a - b);
  const quantile = (q: number) => timings[Math.min(timings.length - 1, Math.floor(q * timings.length))]!;
  const classP99: [string, number][] = [];
  for (const kind of SEARCH_CLASSES) {
    const times: number[] = [];
    for (const search of classSearches(agents, kind, 500)) {
      const started = performance.now();
      await run(search);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    classP99.push([kind, times[Math.floor(0.99 * times.length)]!]);
  }

  const random = createRandom(3);
  const writes = smoke ? 500 : 5000;
  const started = performance.now();
  for (let i = 0; i < writes; i++) {
    const agent = agents[random.int(agents.length)]!;
    if (i % 2 === 0) await services.reviews.create(agent.id, { rating: 1 + random.int(5), comment: 'bench', reviewer_name: 'bench' });
    else await services.agents.edits.update(agent.id, { tagline: `Updated tagline ${i}` }, { emitEvents: true });
  }
  const writesPerSecond = writes / ((performance.now() - started) / 1000);

  const fresh = await services.agents.edits.create(
    {
      name: 'Zyxquorblat Fresh Agent',
      tagline: 'Created by the benchmark',
      description: '',
      author: 'Bench',
      capabilities: [],
      categories: [],
      type: 'other',
      source_url: 'https://example.com/zyxquorblat',
    },
    { emitEvents: false },
  );
  const freshWriteFound = (await services.search.search({ query: 'zyxquorblat', limit: 5 })).agents.some(
    (agent: { id: string }) => agent.id === fresh.id,
  );
  await opened.close();
  return { searchP50: quantile(0.5), searchP99: quantile(0.99), classP99, writesPerSecond, freshWriteFound };
}
