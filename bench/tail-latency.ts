/**
 * Where a load's latency tail comes from: one server (SQLite, 100,000 agents, cache off, as `npm run bench` runs it)
 * under the bench's search classes at 50 connections, with inside the server (a preload answering over IPC):
 * its GC pauses by kind (PerformanceObserver 'gc'), its event-loop delay (monitorEventLoopDelay), each request's
 * time from parsed to finished (diagnostics_channel http.server.request.start / response.finish), its event-loop
 * utilisation; and in the load generator: autocannon's latency percentiles (and, with --client inproc, its own
 * event-loop delay).
 *
 * Variants run alternating on the same data dir, one server at a time:
 *   npx tsx bench/tail-latency.ts --variant main=/work/main --variant new=. --phases "class one,class two" --rounds 3
 *   npx tsx bench/tail-latency.ts --variant cap=. --variant nocap=.:--heap-growing-percent=100
 * A variant is name=root[:node flags separated by commas]; the data dir belongs to the first variant's checkout
 * (build out/api in each root first). Autocannon runs in its own process, as the bench runs it; --client inproc runs it
 * in this one (holding the generated agents), as the bench did before.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Command } from 'commander';
import pg from 'pg';
import { createRandom, generateAgents, listPagePath, SEARCH_CLASSES, writeAgentsJsonl } from './lib/dataset';
import { startBenchStore } from './lib/bench-store';
import { classRequests, startLoadClient, type RequestSpec } from './lib/load-client';
import { runLoad } from './lib/run-load';
import { freePort, runToEnd, spawnServer, waitFor, waitForHealth } from './lib/server-process';

const here = path.resolve(import.meta.dirname, '..');
const options = new Command('tail-latency')
  .option('--variant <name=root[:flags]>', 'a server to measure (repeatable)', (v, all: string[]) => [...all, v], [] as string[])
  .option('--agents <n>', 'agents', (v) => Number(v), 100_000)
  .option('--work <dir>', 'where the JSONL and the data dir are kept', path.join(os.tmpdir(), 'agentdir-tail'))
  .option('--duration <s>', 'seconds per load', (v) => Number(v), 10)
  .option('--connections <n>', 'connections per load', (v) => Number(v), 50)
  .option('--phases <list>', 'comma-separated prefixes of the phases (class one common word, …, list)', 'class one')
  .option('--rounds <n>', 'rounds (each runs every variant on every phase)', (v) => Number(v), 1)
  .option('--cold', 'no warm-up load before a phase (the bench has none: a list phase then starts with its pages uncached)')
  .option('--repeat <n>', 'runs of each phase per server start', (v) => Number(v), 1)
  .option('--client <where>', 'child (as the bench) or inproc', 'child')
  .option('--store <s>', 'sqlite, or postgres: a PostgreSQL 15 started for this run as the bench starts it, imported afresh', 'sqlite')
  .parse()
  .opts<{
    variant: string[];
    agents: number;
    work: string;
    duration: number;
    connections: number;
    phases: string;
    rounds: number;
    client: 'inproc' | 'child';
    cold?: boolean;
    repeat: number;
    store: string;
  }>();

const PROBE = `
const { PerformanceObserver, monitorEventLoopDelay, performance, constants } = require('node:perf_hooks');
const dc = require('node:diagnostics_channel');
const kinds = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' };
let gcs = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) gcs.push([kinds[e.detail.kind] || String(e.detail.kind), e.duration, e.startTime]); })
  .observe({ entryTypes: ['gc'] });
const eld = monitorEventLoopDelay({ resolution: 1 });
eld.enable();
const starts = new WeakMap();
let service = [];
// Event-loop turns: a check-phase callback each turn marks where one ends; each request is counted in the turn it started in.
let turnStarts = [];
let turnOf = [];
let ticking = false;
// With each mark, this thread's time on the CPU and waiting for one (runnable, not running), from /proc (Linux), in ms.
const fs = require('node:fs');
let turnCpu = [];
const schedstat = () => { try { return fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map((x) => Number(x) / 1e6); } catch { return [0, 0]; } };
const tick = () => { turnStarts.push(performance.now()); const [run, wait] = schedstat(); turnCpu.push(run, wait); if (ticking) setImmediate(tick); };
let slow = [];
dc.subscribe('http.server.request.start', ({ request }) => starts.set(request, performance.now()));
dc.subscribe('http.server.response.finish', ({ request }) => {
  const t = starts.get(request);
  if (t === undefined) return;
  const ms = performance.now() - t;
  service.push(ms);
  turnOf.push(t);
  if (ms > 5) slow.push([request.method + ' ' + request.url, ms]);
});
let elu = performance.eventLoopUtilization();
process.on('message', (m) => {
  if (!m || m.probe !== 'tail') return;
  // Turns are marked only during a load (between a probe with turns: true and the next): the marks keep the loop spinning.
  if (m.turns && !ticking) setImmediate(tick);
  ticking = Boolean(m.turns);
  const answer = { gcs, eld: { p50: eld.percentile(50) / 1e6, p99: eld.percentile(99) / 1e6, max: eld.max / 1e6, mean: eld.mean / 1e6 },
    service, starts: turnOf, turnStarts, turnCpu, slow, elu: performance.eventLoopUtilization(elu).utilization };
  gcs = []; service = []; turnOf = []; turnStarts = []; turnCpu = []; slow = []; eld.reset(); elu = performance.eventLoopUtilization();
  process.send({ probe: 'tail', ...answer });
});
`;

interface Variant {
  name: string;
  root: string;
  flags: string[];
}
const variants: Variant[] = options.variant.map((spec) => {
  const [name, rest] = [spec.slice(0, spec.indexOf('=')), spec.slice(spec.indexOf('=') + 1)];
  const [root, flags = ''] = rest.split(':');
  return { name, root: path.resolve(root!), flags: flags.split(',').filter(Boolean) };
});
if (variants.length === 0) variants.push({ name: 'this', root: here, flags: [] });

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const f1 = (n: number) => n.toFixed(1);

async function main(): Promise<void> {
  fs.mkdirSync(options.work, { recursive: true });
  const agents = generateAgents(options.agents);
  const jsonl = path.join(options.work, `agents-${options.agents}.jsonl`);
  if (!fs.existsSync(jsonl)) await writeAgentsJsonl(jsonl, agents);
  const store = await startBenchStore(options.store === 'postgres' ? 'postgres' : 'sqlite');
  process.once('exit', () => store.stop());
  const postgres = store.kind === 'postgres';
  const dataDir = path.join(options.work, `data-${options.agents}${postgres ? `-pg-${process.pid}` : ''}`);
  const databaseArgs = store.databaseArgs;
  if (postgres || !fs.existsSync(dataDir)) {
    console.error(`importing into ${dataDir}…`);
    await runToEnd('node', [path.join(variants[0]!.root, 'out/api/cli.js'), 'import', jsonl, '--data-dir', dataDir, ...databaseArgs]);
  }
  const pgStats = async (sql: string) => {
    if (!store.databaseUrl) return '';
    const client = new pg.Client({ connectionString: store.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query(sql);
      return JSON.stringify(rows);
    } finally {
      await client.end();
    }
  };
  const vacuumStats = () =>
    pgStats(`SELECT last_vacuum, last_autovacuum, last_analyze, last_autoanalyze, now() FROM pg_stat_user_tables WHERE relname = 'agents'`);
  if (postgres) console.log(`after import: ${await vacuumStats()}`);
  const probeFile = path.join(options.work, 'probe.cjs');
  fs.writeFileSync(probeFile, PROBE);

  const random = createRandom(99);
  const phases: [string, RequestSpec[]][] = [
    ...SEARCH_CLASSES.map((kind): [string, RequestSpec[]] => [
      `class ${kind}`,
      classRequests(agents, kind),
    ]),
    [
      'list',
      Array.from({ length: 20_000 }, (): RequestSpec => ({ method: 'GET', path: listPagePath(random) })),
    ],
  ];
  const chosen = options.phases.split(',').map((p) => p.trim());
  const selected = phases.filter(([name]) => chosen.some((c) => name.startsWith(c)));

  const client = options.client === 'child' ? startLoadClient() : undefined;
  const clientEld = monitorEventLoopDelay({ resolution: 1 });
  const load = (url: string, requests: RequestSpec[], seconds = options.duration) => {
    const job = { url, requests, connections: options.connections, seconds };
    return client ? client.run(job) : runLoad(job);
  };

  const results = new Map<string, { rps: number[]; p99: number[] }>();
  for (let round = 0; round < options.rounds; round++) {
    for (const variant of round % 2 ? [...variants].reverse() : variants) {
      const port = await freePort();
      const server: ChildProcess = spawnServer(port, dataDir, {
        nodeArgs: [...variant.flags, '-r', probeFile],
        root: variant.root,
        databaseArgs,
        ipc: true,
      });
      const exited = new Promise((resolve) => server.once('exit', resolve));
      const base = `http://127.0.0.1:${port}/api/v1`;
      await waitForHealth(`${base}/health`, 60_000);
      await waitFor(base, (p) => p.agents_indexed >= options.agents && p.idle);
      const probe = (turns = false) =>
        new Promise<{ gcs: [string, number, number][]; eld: Record<string, number>; service: number[]; starts: number[]; turnStarts: number[]; turnCpu: number[]; slow: [string, number][]; elu: number }>(
          (resolve) => {
          const onMessage = (m: { probe?: string }) => {
            if (m?.probe !== 'tail') return;
            server.off('message', onMessage);
            resolve(m as never);
          };
          server.on('message', onMessage);
          server.send({ probe: 'tail', turns });
          },
        );
      for (const [phase, requests] of selected.flatMap((p) => Array.from({ length: options.repeat }, () => p))) {
        // A short warm-up so that the JIT and the first full GC after start-up are not in the figures.
        if (!options.cold) await load(`http://127.0.0.1:${port}`, requests.slice(0, 200), 3).catch(() => undefined);
        await probe(true);
        clientEld.reset();
        clientEld.enable();
        const seqBefore = postgres ? await pgStats('SELECT max(change_seq) AS seq FROM agents') : '';
        // PostgreSQL: what the server's connections are doing, sampled every 20 ms during the load.
        const activity = new Map<string, { samples: number; longest: number }>();
        let sampling = postgres;
        const sampler = (async () => {
          if (!postgres) return;
          const watcher = new pg.Client({ connectionString: store.databaseUrl });
          await watcher.connect();
          while (sampling) {
            const { rows } = await watcher.query<{ q: string; ms: number; state: string; wait: string | null }>(
              `SELECT left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 90) AS q, extract(epoch FROM clock_timestamp() - query_start) * 1000 AS ms, state, wait_event_type AS wait
               FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
            );
            for (const row of rows) {
              const k = `${row.state}${row.wait ? `/${row.wait}` : ''} ${row.state === 'active' ? row.q : ''}`;
              const a = activity.get(k) ?? { samples: 0, longest: 0 };
              a.samples++;
              if (row.state === 'active') a.longest = Math.max(a.longest, row.ms);
              activity.set(k, a);
            }
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          await watcher.end();
        })();
        const cpuBefore = [cpuMs(`/proc/${server.pid}/stat`), cpuMs(`/proc/${server.pid}/task/${server.pid}/stat`)];
        const r = await load(`http://127.0.0.1:${port}`, requests);
        const cpuAll = cpuMs(`/proc/${server.pid}/stat`) - cpuBefore[0]!;
        const cpuMain = cpuMs(`/proc/${server.pid}/task/${server.pid}/stat`) - cpuBefore[1]!;
        sampling = false;
        await sampler;
        if (postgres) {
          console.log(`    change_seq ${seqBefore} -> ${await pgStats('SELECT max(change_seq) AS seq FROM agents')}; connections sampled (state, query: samples, longest ms):`);
          for (const [k, a] of [...activity].sort((x, y) => y[1].samples - x[1].samples).slice(0, 12))
            console.log(`      ${a.samples} ${Math.round(a.longest)} ${k}`);
        }
        clientEld.disable();
        const p = await probe();
        const byKind = new Map<string, { n: number; total: number; max: number }>();
        for (const [kind, ms] of p.gcs) {
          const k = byKind.get(kind) ?? { n: 0, total: 0, max: 0 };
          k.n++;
          k.total += ms;
          k.max = Math.max(k.max, ms);
          byKind.set(kind, k);
        }
        const turns = turnBreakdown(p);
        const service = [...p.service].sort((a, b) => a - b);
        const key = `${phase} | ${variant.name}`;
        const agg = results.get(key) ?? { rps: [], p99: [] };
        agg.rps.push(r.rps);
        agg.p99.push(r.p99);
        results.set(key, agg);
        if (postgres) console.log(`    ${await vacuumStats()}`);
        console.log(
          `${key}: ${Math.round(r.rps)} req/s, latency p50 ${r.p50} p90 ${r.p90} p99 ${r.p99} max ${r.max} ms${r.failures ? `, ${r.failures} failures` : ''} (load ${os.loadavg()[0]!.toFixed(2)})\n` +
            `    server CPU per request ${f1((cpuAll * 1000) / (r.rps * options.duration))} µs, of which other threads than the main one (GC helpers, libuv) ${((100 * (cpuAll - cpuMain)) / cpuAll).toFixed(0)} %\n` +
            `    server: ELU ${p.elu.toFixed(2)}, loop delay p50 ${f1(p.eld.p50!)} p99 ${f1(p.eld.p99!)} max ${f1(p.eld.max!)} ms; ` +
            `service p50 ${f1(quantile(service, 0.5))} p99 ${f1(quantile(service, 0.99))} max ${f1(quantile(service, 1))} ms\n` +
            `    gc: ${[...byKind].map(([kind, k]) => `${kind} ${k.n}× total ${Math.round(k.total)} max ${f1(k.max)} ms`).join('; ')}\n` +
            `    turns: ${turns}` +
            // The loop measured is this process's: the load generator's only when it runs here.
            (client
              ? ''
              : `\n    client loop delay p50 ${f1(clientEld.percentile(50) / 1e6)} p99 ${f1(clientEld.percentile(99) / 1e6)} max ${f1(clientEld.max / 1e6)} ms`),
        );
      }
      server.kill('SIGTERM');
      await exited;
    }
  }
  console.log('\nmedians over rounds:');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const [key, agg] of results) console.log(`  ${key}: ${Math.round(median(agg.rps))} req/s, p99 ${median(agg.p99)} ms`);
  client?.close();
  store.stop();
  if (postgres) fs.rmSync(dataDir, { recursive: true, force: true });
}

/** A process's or thread's CPU time so far (user + system), in ms, from its /proc stat file (clock ticks at 100 Hz). */
function cpuMs(file: string): number {
  const fields = fs.readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * The server's event-loop turns during the load: their length, requests per turn, and each request's turn length
 * (what a request waits is about the turn it is served in); for the longest 1 % of turns (by requests in them),
 * how their time splits into request handling (the sum of the services that started in them), GC pauses, and
 * the rest (the loop's own work, parsing, writes, time off the CPU).
 */
function turnBreakdown(p: {
  gcs: [string, number, number][];
  service: number[];
  starts: number[];
  turnStarts: number[];
  turnCpu: number[];
  slow: [string, number][];
}): string {
  const bounds = p.turnStarts;
  if (bounds.length < 3) return 'not sampled';
  const n = bounds.length - 1;
  const requests = new Array<number>(n).fill(0);
  const work = new Array<number>(n).fill(0);
  const gc = new Array<number>(n).fill(0);
  const find = (t: number) => {
    let lo = 0;
    let hi = n - 1;
    if (t < bounds[0]! || t >= bounds[n]!) return -1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (bounds[mid]! <= t) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  p.starts.forEach((t, i) => {
    const turn = find(t);
    if (turn < 0) return;
    requests[turn]!++;
    work[turn]! += p.service[i]!;
  });
  for (const [, ms, t] of p.gcs) {
    const turn = find(t);
    if (turn >= 0) gc[turn]! += ms;
  }
  const length = (i: number) => bounds[i + 1]! - bounds[i]!;
  const busy = [...Array(n).keys()].filter((i) => requests[i]! > 0);
  const lengths = busy.map(length).sort((a, b) => a - b);
  const perRequest = busy.flatMap((i) => Array<number>(requests[i]!).fill(length(i))).sort((a, b) => a - b);
  const sizes = busy.map((i) => requests[i]!).sort((a, b) => a - b);
  const slowest = [...perRequest].reverse().slice(0, Math.ceil(perRequest.length / 100));
  const cutoff = slowest.at(-1) ?? 0;
  const slowTurns = busy.filter((i) => length(i) >= cutoff);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const slowLength = sum(slowTurns.map(length));
  const slowWork = sum(slowTurns.map((i) => work[i]!));
  const slowGc = sum(slowTurns.map((i) => gc[i]!));
  const share = (x: number) => `${((100 * x) / slowLength).toFixed(0)} %`;
  const cpu = (i: number) => p.turnCpu[2 * (i + 1)]! - p.turnCpu[2 * i]!;
  const waited = (i: number) => p.turnCpu[2 * (i + 1) + 1]! - p.turnCpu[2 * i + 1]!;
  const typical = busy.filter((i) => length(i) < cutoff);
  const typicalLength = sum(typical.map(length));
  const slowest5 = [...p.slow].sort((a, b) => b[1] - a[1]).slice(0, 3);
  return (
    `${busy.length} with requests, ${sizes[Math.floor(sizes.length / 2)]} requests each (p99 ${quantile(sizes, 0.99)}); ` +
    `length p50 ${f1(quantile(lengths, 0.5))} p99 ${f1(quantile(lengths, 0.99))} ms; a request's turn p50 ${f1(quantile(perRequest, 0.5))} ` +
    `p99 ${f1(quantile(perRequest, 0.99))} ms; its slowest 1 % of requests' turns (${slowTurns.length}, ≥ ${f1(cutoff)} ms): ` +
    `handling ${share(slowWork)}, gc ${share(slowGc)}, rest ${share(slowLength - slowWork - slowGc)}; ` +
    `main thread on the CPU ${share(sum(slowTurns.map(cpu)))}, runnable but waiting for a CPU ${share(sum(slowTurns.map(waited)))} ` +
    `(the other turns: ${((100 * sum(typical.map(cpu))) / typicalLength).toFixed(0)} % and ${((100 * sum(typical.map(waited))) / typicalLength).toFixed(0)} %)\n` +
    `    requests over 5 ms: ${p.slow.length}; slowest ${slowest5.map(([what, ms]) => `${f1(ms)} ms ${what.slice(0, 70)}`).join('; ')}`
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
