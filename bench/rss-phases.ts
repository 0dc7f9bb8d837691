/**
 * Where the server's memory goes, phase by phase: the loads of `npm run bench` (100,000 agents) against one server,
 * with after each phase its peak RSS (as the bench samples it), its RSS split (anonymous / file), and V8's own figures
 * (heap used, external, array buffers) read inside the server through a preload that answers over IPC.
 * Optionally a heap snapshot after chosen phases (for a diff of what is retained).
 *
 *   npx tsx bench/rss-phases.ts                                   # this checkout (build out/api first)
 *   npx tsx bench/rss-phases.ts --root /work/wt/base-pre16        # another checkout's out/api, on its own data dir
 *   npx tsx bench/rss-phases.ts --snapshots /tmp/snaps --snapshot-after idle,search
 *
 * One server at a time; the data dir (one per checkout: the schema may differ) is imported once and kept.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Command } from 'commander';
import {
  classSearches,
  createRandom,
  filtersOf,
  generateAgents,
  listPagePath,
  mixedSearches,
  SEARCH_CLASSES,
  writeAgentsJsonl,
} from './lib/dataset';
import { freePort, processCpuMicros, runToEnd, spawnServer, waitFor, waitForHealth } from './lib/server-process';

const here = path.resolve(import.meta.dirname, '..');
const options = new Command('rss-phases')
  .option('--root <dir>', 'checkout whose out/api is run', here)
  .option('--agents <n>', 'agents', (v) => Number(v), 100_000)
  .option('--work <dir>', 'where the JSONL and the data dirs are kept', path.join(os.tmpdir(), 'agentdir-rss'))
  .option('--duration <s>', 'seconds per load', (v) => Number(v), 10)
  .option('--connections <n>', 'connections per load', (v) => Number(v), 50)
  .option('--phases <list>', 'comma-separated subset of the phases (default all)')
  .option('--snapshots <dir>', 'write heap snapshots here')
  .option('--snapshot-after <list>', 'phases after which to write a snapshot (idle = before any load)', '')
  .option('--node-args <args>', 'extra node flags for the server', '')
  .option(
    '--quiet-amounts',
    "each phase sends as many requests as that phase served in a quiet-machine bench (main, e51a125's log), not --duration seconds: the garbage a phase leaves depends on how many requests it served",
  )
  .option('--no-gc', 'no forced GC between phases (as the bench runs): the "after gc" figures are left out')
  .parse()
  .opts<{
    root: string;
    agents: number;
    work: string;
    duration: number;
    connections: number;
    phases?: string;
    snapshots?: string;
    snapshotAfter: string;
    nodeArgs: string;
    gc: boolean;
    quietAmounts?: boolean;
  }>();

/** Requests per phase in the quiet-machine bench of main (e51a125: req/s × 10 s). */
const QUIET_AMOUNTS: Record<string, number> = {
  byId: 78_540,
  bulk: 29_960,
  list: 27_580,
  connections: 15_950,
  search: 20_680,
  'class one common word': 34_820,
  'class two common words': 24_120,
  'class three common words': 17_360,
  'class typo': 42_980,
  'class prefix': 29_380,
  'class exact distinctive word': 35_930,
  'class filtered POST': 21_260,
};

const PROBE = `
const v8 = require('node:v8');
let peaks = {};
setInterval(() => {
  const m = process.memoryUsage();
  for (const k of Object.keys(m)) peaks[k] = Math.max(peaks[k] || 0, m[k]);
}, 100).unref();
process.on('message', (m) => {
  if (!m || m.probe !== 'rss-phases') return;
  if (m.gc && global.gc) global.gc();
  const answer = { memory: process.memoryUsage(), peaks, heap: v8.getHeapStatistics(), spaces: v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]) };
  peaks = {};
  if (m.snapshot) answer.snapshot = v8.writeHeapSnapshot(m.snapshot);
  process.send({ probe: 'rss-phases', ...answer });
});
`;

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

async function main(): Promise<void> {
  fs.mkdirSync(options.work, { recursive: true });
  const random = createRandom(99);
  const agents = generateAgents(options.agents);
  const jsonl = path.join(options.work, `agents-${options.agents}.jsonl`);
  if (!fs.existsSync(jsonl)) await writeAgentsJsonl(jsonl, agents);
  const dataDir = path.join(options.work, `data-${options.agents}-${path.basename(options.root)}`);
  if (!fs.existsSync(dataDir)) {
    console.error(`importing into ${dataDir}…`);
    await runToEnd('node', [path.join(options.root, 'out/api/cli.js'), 'import', jsonl, '--data-dir', dataDir]);
  }
  const probeFile = path.join(options.work, 'probe.cjs');
  fs.writeFileSync(probeFile, PROBE);

  const port = await freePort();
  const nodeArgs = options.nodeArgs.split(' ').filter(Boolean);
  const server: ChildProcess = spawnServer(port, dataDir, {
    nodeArgs: ['--expose-gc', ...nodeArgs, '-r', probeFile],
    root: options.root,
    stdout: nodeArgs.length > 0,
    ipc: true,
  });
  process.once('exit', () => server.kill('SIGKILL'));
  const base = `http://127.0.0.1:${port}/api/v1`;
  await waitForHealth(`${base}/health`, 60_000);
  const indexed = async () => ((await (await fetch(`${base}/health`)).json()) as { agents_indexed: number }).agents_indexed;
  while ((await indexed()) < options.agents) await new Promise((resolve) => setTimeout(resolve, 100));
  // Older checkouts have no background-jobs gauge: settle for a fixed wait there.
  await waitFor(base, (p) => p.idle).catch(() => new Promise((resolve) => setTimeout(resolve, 8000)));

  const probe = (gc: boolean, snapshot?: string) =>
    new Promise<{ memory: NodeJS.MemoryUsage; peaks: NodeJS.MemoryUsage; spaces: [string, number][]; snapshot?: string }>((resolve) => {
      const onMessage = (m: { probe?: string }) => {
        if (m?.probe !== 'rss-phases') return;
        server.off('message', onMessage);
        resolve(m as never);
      };
      server.on('message', onMessage);
      server.send({ probe: 'rss-phases', gc, snapshot });
    });
  const status = () => {
    const text = fs.readFileSync(`/proc/${server.pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0) / 1024;
    return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), hwm: kb('VmHWM') };
  };
  /** The server's CPU time so far (user + system), in ms. */
  const cpuMs = () => processCpuMicros(server.pid!) / 1000;
  let phasePeak = 0;
  const timer = setInterval(() => (phasePeak = Math.max(phasePeak, status().rss)), 200);

  const snapshotAfter = new Set(options.snapshotAfter.split(',').filter(Boolean));
  const report = async (phase: string) => {
    phasePeak = Math.max(phasePeak, status().rss);
    const s = status();
    const before = await probe(false);
    const after = options.gc ? await probe(true) : before;
    const s2 = status();
    let snapshot = '';
    if (options.snapshots && snapshotAfter.has(phase)) {
      fs.mkdirSync(options.snapshots, { recursive: true });
      const file = path.join(options.snapshots, `${path.basename(options.root)}-${phase.replace(/\W+/g, '_')}.heapsnapshot`);
      snapshot = ` snapshot ${(await probe(true, file)).snapshot}`;
    }
    const m = before.memory;
    const p = before.peaks;
    console.log(
      `${''.padEnd(28)} phase peaks: heapTotal ${mb(p.heapTotal)} heapUsed ${mb(p.heapUsed)} external ${mb(p.external)} arrayBuffers ${mb(p.arrayBuffers)}`,
    );
    console.log(
      `${phase.padEnd(28)} peak ${phasePeak.toFixed(0)} | now rss ${s.rss.toFixed(0)} (anon ${s.anon.toFixed(0)}, file ${s.file.toFixed(0)}) ` +
        `heapUsed ${mb(m.heapUsed)} heapTotal ${mb(m.heapTotal)} external ${mb(m.external)} arrayBuffers ${mb(m.arrayBuffers)} | after gc: ` +
        `rss ${s2.rss.toFixed(0)} heapUsed ${mb(after.memory.heapUsed)} external ${mb(after.memory.external)} arrayBuffers ${mb(after.memory.arrayBuffers)}${snapshot}`,
    );
    phasePeak = 0;
  };

  let amount: number | undefined;
  const load = async (nextRequest: () => string | { method: 'POST'; path: string; body: string }) => {
    const result = await autocannon({
      url: `http://127.0.0.1:${port}`,
      connections: options.connections,
      ...(amount ? { amount } : { duration: options.duration }),
      requests: [
        {
          setupRequest: (request) => {
            const spec = nextRequest();
            if (typeof spec === 'string') return { ...request, method: 'GET', path: spec };
            return { ...request, method: spec.method, path: spec.path, body: spec.body, headers: { 'content-type': 'application/json' } };
          },
        },
      ],
    });
    return { rps: result.requests.average, total: result.requests.total };
  };

  const pickId = () => agents[random.int(agents.length)]!.id;
  const searches = mixedSearches(agents, 2000);
  let next = 0;
  const phases: [string, () => Promise<{ rps: number; total: number }>][] = [
    ['byId', () => load(() => `/api/v1/agents/${pickId()}`)],
    ['bulk', () => load(() => `/api/v1/agents/bulk?ids=${Array.from({ length: 50 }, pickId).join(',')}`)],
    ['list', () => load(() => listPagePath(random))],
    ['connections', () => load(() => `/api/v1/agents/${pickId()}/connections`)],
    [
      'search',
      () =>
        load(() => {
          const s = searches[next++ % searches.length]!;
          if (next % 2 === 0)
            return { method: 'POST', path: '/api/v1/agents/search', body: JSON.stringify({ query: s.q, limit: 20, ...filtersOf(s) }) };
          const params = new URLSearchParams({ q: s.q, limit: '20' });
          if (s.type) params.set('type', s.type);
          if (s.min_trust !== undefined) params.set('min_trust', String(s.min_trust));
          if (s.capabilities) params.set('capabilities', s.capabilities.join(','));
          return `/api/v1/agents/search?${params}`;
        }),
    ],
    ...SEARCH_CLASSES.map((kind): [string, () => Promise<{ rps: number; total: number }>] => [
      `class ${kind}`,
      () => {
        const queries = classSearches(agents, kind, 1000);
        let at = 0;
        return load(() => {
          const s = queries[at++ % queries.length]!;
          if (kind === 'filtered POST')
            return { method: 'POST', path: '/api/v1/agents/search', body: JSON.stringify({ q: s.q, limit: 20, ...filtersOf(s) }) };
          return `/api/v1/agents/search?${new URLSearchParams({ q: s.q, limit: '20' })}`;
        });
      },
    ]),
  ];
  const chosen = options.phases?.split(',');
  console.log(`${options.root} (load ${os.loadavg()[0]!.toFixed(2)})`);
  await report('idle');
  for (const [name, run] of phases) {
    if (chosen && !chosen.some((c) => name.startsWith(c))) continue;
    amount = options.quietAmounts ? QUIET_AMOUNTS[name] : undefined;
    const cpuBefore = cpuMs();
    const { rps, total } = await run();
    const cpu = cpuMs() - cpuBefore;
    console.log(`  ${name}: ${Math.round(rps)} req/s, ${total} requests, server CPU ${((cpu * 1000) / total).toFixed(1)} µs/request`);
    await report(name);
  }
  console.log(`VmHWM ${status().hwm.toFixed(0)} MB (load ${os.loadavg()[0]!.toFixed(2)})`);
  clearInterval(timer);
  server.kill('SIGTERM');
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
