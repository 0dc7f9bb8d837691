/**
 * `npm run bench`: the read/search performance goals of the directory,
 * measured side by side in one run on a generated directory (100,000 agents
 * by default), against a raw node:http baseline measured in the same run.
 *
 *   npm run bench                       # 100,000 agents, 10 s per load
 *   npm run bench -- --agents 2000 --duration 1 --smoke   # the quick run npm test uses
 *   npm run bench -- --agents 1000000   # the 1M goals; writes about 680 MB of JSONL to the temp dir, run on a quiet machine
 *   npm run bench -- --store postgres   # the same on PostgreSQL 15 (a server this run starts; see bench/lib/bench-store.ts)
 *
 * Prints a table (goal, measured, met?) and writes bench/results/latest.json (latest-postgres.json for PostgreSQL).
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Command, InvalidArgumentError } from 'commander';
import { evaluate } from './quality/evaluate';
import {
  createRandom,
  filtersOf,
  generateAgents,
  listPagePath,
  mixedSearches,
  SEARCH_CLASSES,
  writeAgentsJsonl,
  type BenchAgent,
} from './lib/dataset';
import { startBenchStore, type BenchStore, type BenchStoreKind } from './lib/bench-store';
import { classRequests, startLoadClient, type RequestSpec } from './lib/load-client';
import { measureInProcess, measureQuality } from './lib/measure';
import { freePort, health, runToEnd, spawnServer, startBaseline, trackRss, waitFor, waitForHealth } from './lib/server-process';

const root = path.resolve(import.meta.dirname, '..');

interface Options {
  agents: number;
  duration: number;
  connections: number;
  smoke: boolean;
  keep: boolean;
  store: BenchStoreKind;
}

interface Row {
  what: string;
  goal: string;
  measured: string;
  met: boolean | null;
}

const program = new Command('bench')
  .option('--agents <n>', 'agents in the generated directory', (v) => Number(v), 100_000)
  .option('--duration <s>', 'seconds per load run', (v) => Number(v), 10)
  .option('--connections <n>', 'concurrent connections per load run', (v) => Number(v), 50)
  .option('--smoke', 'a quick run: report figures, never fail on goals')
  .option('--keep', 'keep the generated data dir')
  .option(
    '--store <sqlite|postgres>',
    'where the directory is kept: SQLite in the data dir, or a PostgreSQL 15 server started for the run',
    (v) => {
      if (v !== 'sqlite' && v !== 'postgres') throw new InvalidArgumentError('sqlite or postgres');
      return v;
    },
    'sqlite',
  )
  .parse();
const options = program.opts<Options>();

const rows: Row[] = [];
/** The issue's goals at 1,000,000 agents are looser than at 100,000 (search classes, import, start-up, memory). */
const huge = options.agents >= 1_000_000;
const goals = huge
  ? { importSeconds: 120, startupSeconds: 3, rssMb: 2560, classRps: 1000, classRatio: 0, classP99: 50 }
  : { importSeconds: 30, startupSeconds: 2, rssMb: 400, classRps: 0, classRatio: 0.2, classP99: 25 };
/** Load average of the shared machine at the start and end of the run, recorded beside the figures. */
const loadAverages: { at: string; load1: number; load5: number }[] = [];
const noteLoad = (at: string) => {
  const [load1, load5] = os.loadavg();
  loadAverages.push({ at, load1: Number(load1!.toFixed(2)), load5: Number(load5!.toFixed(2)) });
  console.error(`  (load average ${at}: ${load1!.toFixed(2)} / ${load5!.toFixed(2)})`);
};
const record = (what: string, goal: string, measured: string, met: boolean | null) => {
  rows.push({ what, goal, measured, met });
  console.error(`  ${met === null ? '·' : met ? '✓' : '✗'} ${what}: ${measured} (goal ${goal})`);
};

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-bench-'));
  const dataDir = path.join(work, 'data');
  const children: ChildProcess[] = [];
  let store: BenchStore | undefined;
  const cleanUp = () => {
    loadClient.close();
    for (const child of children) child.kill('SIGKILL');
    store?.stop();
    if (!options.keep) fs.rmSync(work, { recursive: true, force: true });
  };
  process.once('SIGINT', () => {
    cleanUp();
    process.exit(130);
  });

  try {
    noteLoad('at start');
    store = await startBenchStore(options.store);
    const { databaseArgs } = store;
    console.error(`Generating ${options.agents.toLocaleString('en')} agents…`);
    const agents = generateAgents(options.agents);
    const file = path.join(work, 'agents.jsonl');
    await writeAgentsJsonl(file, agents);

    // 1. Import through the real CLI.
    // The compiled CLI and server, as `npm run cli` / `npm run serve` run them: build them first if needed, untimed.
    await runToEnd('node', ['scripts/ensure-build.mjs', 'api']);
    const importStarted = performance.now();
    await runToEnd('node', ['out/api/cli.js', 'import', file, '--data-dir', dataDir, ...databaseArgs]);
    const importSeconds = (performance.now() - importStarted) / 1000;
    record(
      `cli import of ${options.agents.toLocaleString('en')} agents`,
      `≤ ${goals.importSeconds} s`,
      `${importSeconds.toFixed(1)} s`,
      importSeconds <= goals.importSeconds,
    );

    // 2. Start-up to the first 200 from /health.
    const port = await freePort();
    const startupStarted = performance.now();
    // Cache off: every figure but the "cache on" rows is the engine's own.
    const server = spawnServer(port, dataDir, { databaseArgs });
    children.push(server);
    const base = `http://127.0.0.1:${port}/api/v1`;
    await waitForHealth(`${base}/health`, 60_000);
    const startupSeconds = (performance.now() - startupStarted) / 1000;
    record(
      'start-up to first 200 from /health',
      `≤ ${goals.startupSeconds} s`,
      `${startupSeconds.toFixed(2)} s`,
      startupSeconds <= goals.startupSeconds,
    );
    // The index is built in the background after listening; /health reports its progress.
    const indexed = async () => (await health(base)).agents_indexed;
    await waitFor(base, (body) => body.agents_indexed >= options.agents);
    const warmSeconds = (performance.now() - startupStarted) / 1000;
    record('search index complete (background warm-up)', '—', `${warmSeconds.toFixed(2)} s after spawn`, null);
    // The profile cache warm-up and the trust refresh follow: measure the server once it has settled.
    await waitFor(base, (body) => body.idle);
    const idleSeconds = (performance.now() - startupStarted) / 1000;
    record('server idle (warm-ups and trust refresh done)', '—', `${idleSeconds.toFixed(2)} s after spawn`, null);
    // Search must be current right after the import: every agent indexed and findable.
    const probe = agents[Math.floor(agents.length / 2)]!;
    const probeHits = (await (await fetch(`${base}/agents/search?q=${encodeURIComponent(probe.name)}&limit=5`)).json()) as {
      agents: { id: string }[];
    };
    const indexedNow = await indexed();
    record(
      'search index current after import',
      `${options.agents} indexed, last import findable`,
      `${indexedNow} indexed, ${probeHits.agents.some((a) => a.id === probe.id) ? 'found' : 'NOT found'}`,
      indexedNow === options.agents && probeHits.agents.some((a) => a.id === probe.id),
    );

    // 3. The raw node:http baseline, in its own process like the server.
    const baseline = await startBaseline();
    children.push(baseline.child);

    const rss = trackRss(server.pid!);
    const random = createRandom(99);
    const pickId = () => agents[random.int(agents.length)]!.id;
    // The loads of random reads cycle through this many requests, drawn before the load: by-id reads 20,000
    // agents, bulk reads 1,000,000 ids.
    const randomGets = (pathOf: () => string) => Array.from({ length: 20_000 }, (): RequestSpec => ({ method: 'GET', path: pathOf() }));

    const baselineLoad = await load(baseline.origin, [{ method: 'GET', path: '/' }]);
    rss.endPhase('the baseline load');
    record('raw node:http, fixed 1 KB JSON (baseline)', '—', `${fmt(baselineLoad.rps)} req/s`, null);

    const byId = await load(
      `http://127.0.0.1:${port}`,
      randomGets(() => `/api/v1/agents/${pickId()}`),
    );
    rss.endPhase('GET /agents/{id}');
    const byIdRatio = byId.rps / baselineLoad.rps;
    record(
      'GET /agents/{id}',
      '≥ 75 % of baseline',
      `${fmt(byId.rps)} req/s = ${(byIdRatio * 100).toFixed(0)} %, p99 ${byId.p99} ms`,
      byIdRatio >= 0.75,
    );

    const bulk = await load(
      `http://127.0.0.1:${port}`,
      randomGets(() => `/api/v1/agents/bulk?ids=${Array.from({ length: 50 }, pickId).join(',')}`),
    );
    rss.endPhase('bulk');
    record('GET /agents/bulk (50 ids)', '≥ 1,500 req/s', `${fmt(bulk.rps)} req/s, p99 ${bulk.p99} ms`, bulk.rps >= 1500);

    const list = await load(
      `http://127.0.0.1:${port}`,
      randomGets(() => listPagePath(random)),
    );
    rss.endPhase('list pages');
    record('GET /agents (list pages)', '≥ 3,000 req/s', `${fmt(list.rps)} req/s, p99 ${list.p99} ms`, list.rps >= 3000);

    const connections = await load(
      `http://127.0.0.1:${port}`,
      randomGets(() => `/api/v1/agents/${pickId()}/connections`),
    );
    rss.endPhase('connections');
    record(
      'GET /agents/{id}/connections',
      '≥ 3,000 req/s',
      `${fmt(connections.rps)} req/s, p99 ${connections.p99} ms`,
      connections.rps >= 3000,
    );

    const searches = mixedSearches(agents, 2000);
    // Every other search a POST: the same searches by both forms.
    const mixedRequests = searches.map((s, i): RequestSpec => {
      if (i % 2 === 1) {
        return { method: 'POST', path: '/api/v1/agents/search', body: JSON.stringify({ query: s.q, limit: 20, ...filtersOf(s) }) };
      }
      const params = new URLSearchParams({ q: s.q, limit: '20' });
      if (s.type) params.set('type', s.type);
      if (s.min_trust !== undefined) params.set('min_trust', String(s.min_trust));
      if (s.capabilities) params.set('capabilities', s.capabilities.join(','));
      return { method: 'GET', path: `/api/v1/agents/search?${params}` };
    });
    const searchLoad = await load(`http://127.0.0.1:${port}`, mixedRequests);
    rss.endPhase('search');
    record(
      'search over HTTP (GET + POST, mixed, top 20)',
      '≥ 1,500 req/s, p99 ≤ 50 ms',
      `${fmt(searchLoad.rps)} req/s, p99 ${searchLoad.p99} ms`,
      searchLoad.rps >= 1500 && searchLoad.p99 <= 50,
    );

    // Each query class on its own (issue 13): ≥ 20 % of raw node:http and p99 ≤ 25 ms at 100,000 agents
    // (≥ 1,000 req/s and p99 ≤ 50 ms at 1,000,000), with the result cache off. Their ratios are to the highest of
    // three raw loads: the first, one just before the classes and one just after. This machine's speed drifts
    // within a run (raw read 15,121–25,952 req/s across runs of one hour), and a slow moment of a single baseline
    // would flatter every ratio; the highest is the strictest bar.
    const rawBefore = await load(baseline.origin, [{ method: 'GET', path: '/' }]);
    const uncachedLoads = await loadClasses(`http://127.0.0.1:${port}`, agents);
    rss.endPhase('search classes, cache off');
    const rawAfter = await load(baseline.origin, [{ method: 'GET', path: '/' }]);
    const classBaseline = Math.max(baselineLoad.rps, rawBefore.rps, rawAfter.rps);
    record(
      'raw node:http just before and after the search classes',
      '—',
      `${fmt(rawBefore.rps)} and ${fmt(rawAfter.rps)} req/s: the classes' baseline is the highest of three, ${fmt(classBaseline)}`,
      null,
    );
    recordClasses(uncachedLoads, classBaseline, 'cache off');

    const peakRss = rss.stop();
    record('server RSS under load (peak)', `≤ ${goals.rssMb} MB`, `${peakRss.toFixed(0)} MB`, peakRss <= goals.rssMb);

    // 4. Quality, over HTTP: each query has one right answer.
    const quality = await measureQuality(base, agents, Boolean(options.smoke));
    record('typo queries: target in top 5', '≥ 95 %', `${quality.typo.toFixed(1)} % of ${quality.typoCount}`, quality.typo >= 95);
    record('exact queries: target in top 5', '≥ 99 %', `${quality.exact.toFixed(1)} % of ${quality.exactCount}`, quality.exact >= 99);
    record(
      'filters respected exactly',
      '100 %',
      `${quality.filterViolations} violations in ${quality.filterChecks} results`,
      quality.filterViolations === 0,
    );

    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));

    // The same classes with the result cache on (informative: the goals are for the engine alone).
    const cachedPort = await freePort();
    const cachedServer = spawnServer(cachedPort, dataDir, { cache: true, databaseArgs });
    children.push(cachedServer);
    const cachedBase = `http://127.0.0.1:${cachedPort}/api/v1`;
    await waitForHealth(`${cachedBase}/health`, 60_000);
    await waitFor(cachedBase, (body) => body.agents_indexed >= options.agents && body.idle);
    recordClasses(await loadClasses(`http://127.0.0.1:${cachedPort}`, agents), classBaseline, 'cache on');
    cachedServer.kill('SIGTERM');
    await new Promise((resolve) => cachedServer.once('exit', resolve));

    const judged = evaluate();
    record(
      'judged query set (bench/quality): hit@5',
      '≥ 95 %',
      `${(judged.hitAt5 * 100).toFixed(1)} % of ${judged.queries}`,
      judged.hitAt5 >= 0.95,
    );
    record('judged query set (bench/quality): MRR@5', '≥ 0.8', judged.mrrAt5.toFixed(3), judged.mrrAt5 >= 0.8);

    // 5. In-process: search latency and write throughput on the same data dir.
    const inProcess = await measureInProcess({ dataDir, databaseUrl: store.databaseUrl }, agents, searches, Boolean(options.smoke));
    record(
      'search in-process p50 / p99',
      'p99 ≤ 5 ms',
      `${inProcess.searchP50.toFixed(2)} / ${inProcess.searchP99.toFixed(2)} ms`,
      inProcess.searchP99 <= 5,
    );
    record(
      'writes in-process (reviews + agent updates)',
      '≥ 1,000 /s',
      `${fmt(inProcess.writesPerSecond)} /s`,
      inProcess.writesPerSecond >= 1000,
    );
    record('new agent findable by the next search', 'yes', inProcess.freshWriteFound ? 'yes' : 'no', inProcess.freshWriteFound);
    for (const [kind, p99] of inProcess.classP99)
      record(`search class: ${kind}, serial p99 in-process (cache off)`, '≤ 5 ms', `${p99.toFixed(2)} ms`, p99 <= 5);
  } finally {
    noteLoad('at end');
    cleanUp();
  }

  printTable();
  const resultsDir = path.join(root, 'bench', 'results');
  fs.mkdirSync(resultsDir, { recursive: true });
  const results =
    JSON.stringify({ options, machine: { cpus: os.cpus().length, node: process.version }, loadAverages, rows }, null, 2) + '\n';
  // SQLite's files keep their old names; PostgreSQL's carry the store's name.
  const suffix = options.store === 'postgres' ? '-postgres' : '';
  fs.writeFileSync(path.join(resultsDir, options.smoke ? `smoke${suffix}.json` : `latest${suffix}.json`), results);
  if (!options.smoke) fs.writeFileSync(path.join(resultsDir, `search-${options.agents}${suffix}.json`), results);
  const unmet = rows.filter((row) => row.met === false);
  if (unmet.length && !options.smoke) {
    console.error(`${unmet.length} goal(s) not met`);
    process.exitCode = 1;
  }
}

/** Each search class loaded on its own: its req/s and p99, in SEARCH_CLASSES order. */
async function loadClasses(origin: string, agents: BenchAgent[]): Promise<{ rps: number; p99: number }[]> {
  const loads: { rps: number; p99: number }[] = [];
  for (const kind of SEARCH_CLASSES) loads.push(await load(origin, classRequests(agents, kind)));
  return loads;
}

/** The classes' loads (as loadClasses returns them) against the baseline's req/s. */
function recordClasses(loads: { rps: number; p99: number }[], baselineRps: number, cache: 'cache off' | 'cache on'): void {
  SEARCH_CLASSES.forEach((kind, i) => {
    const classLoad = loads[i]!;
    const ratio = classLoad.rps / baselineRps;
    const met = classLoad.rps >= goals.classRps && ratio >= goals.classRatio && classLoad.p99 <= goals.classP99;
    record(
      `search class: ${kind} (${cache})`,
      huge
        ? `≥ ${goals.classRps} req/s, p99 ≤ ${goals.classP99} ms`
        : `≥ ${goals.classRatio * 100} % of baseline, p99 ≤ ${goals.classP99} ms`,
      `${fmt(classLoad.rps)} req/s = ${(ratio * 100).toFixed(1)} %, p99 ${classLoad.p99} ms`,
      cache === 'cache off' ? met : null,
    );
  });
}

/** The load generator, a process of its own (bench/lib/load-client.ts says why). */
const loadClient = startLoadClient();

/** One load of `options.connections` connections for `options.duration` seconds, cycling through `requests`. */
async function load(origin: string, requests: RequestSpec[]): Promise<{ rps: number; p99: number; failures: number }> {
  const result = await loadClient.run({ url: origin, requests, connections: options.connections, seconds: options.duration });
  if (result.failures > 0) console.error(`    (${result.failures} errors/timeouts/non-2xx)`);
  return result;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en');

function printTable(): void {
  const header = ['what', 'goal', 'measured', 'met'];
  const lines = rows.map((row) => [row.what, row.goal, row.measured, row.met === null ? '—' : row.met ? 'yes' : 'NO']);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((line) => line[i]!.length)));
  const format = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(
    `\nAgent Directory benchmark: ${options.agents.toLocaleString('en')} agents on ${options.store === 'postgres' ? 'PostgreSQL 15' : 'SQLite'}, ${options.connections} connections, ${options.duration} s per load, ${os.cpus().length} cores, Node ${process.version}, load average ${loadAverages.map((l) => `${l.load1} ${l.at}`).join(', ')}`,
  );
  console.log(format(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const line of lines) console.log(format(line));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
