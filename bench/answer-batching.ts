/**
 * What answer batching (`transport.batchAnswers`, see src-api/http/transport.ts) is worth: two servers on the same
 * database, one with `--batch-answers off`, loaded in turns (50 connections, the client in its own process; which
 * goes first alternates by round), so that a machine whose speed drifts slows both alike. The server not under
 * load is stopped (SIGSTOP) meanwhile: left running, its own background work after a heavy load (GC) shared the
 * two cores with the other's load and made either variant's `GET /agents/{id}` read up to a third slower. Per load: the median
 * req/s, p99 and server CPU a request of each, and the ratio.
 *
 *   npx tsx bench/answer-batching.ts [--agents 100000] [--rounds 6] [--seconds 2] [--classes two,three]
 *
 * The database is the one bench/search-service-ab.ts generates (run that first for a new size); the servers run
 * `out/api/serve.js` (run `npm run build:api` first). Not a test: numbers depend on the machine.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { argument, chosenClasses, loadAverage } from './lib/cli';
import { generateAgents } from './lib/dataset';
import { classRequests, startLoadClient, type RequestSpec } from './lib/load-client';
import { freePort, processCpuMicros, spawnServer, waitSettled } from './lib/server-process';

const size = Number(argument('agents') ?? 100_000);
const rounds = Number(argument('rounds') ?? 6);
const seconds = Number(argument('seconds') ?? 2);
const dataDir = path.join(os.tmpdir(), `agentdir-search-service-ab-${size}`);
if (!fs.existsSync(path.join(dataDir, 'ready'))) throw new Error(`${dataDir}: run bench/search-service-ab.ts --agents ${size} first`);

const variants = [
  { name: 'each at once', args: ['--batch-answers', 'off'] },
  { name: 'batched', args: [] },
];
const servers = [];
for (const variant of variants) {
  const port = await freePort();
  const child = spawnServer(port, dataDir, { serverArgs: variant.args });
  const origin = `http://127.0.0.1:${port}`;
  await waitSettled(origin, size);
  servers.push({ ...variant, child, origin });
}
const agents = generateAgents(size);
const loads: [string, RequestSpec[]][] = [
  ['GET /agents/{id}', agents.slice(0, 20_000).map((agent): RequestSpec => ({ method: 'GET', path: `/api/v1/agents/${agent.id}` }))],
  ...chosenClasses().map((kind): [string, RequestSpec[]] => [kind, classRequests(agents, kind)]),
];
const client = startLoadClient();
console.log(`${size.toLocaleString('en')} agents, 50 connections, ${rounds} rounds of ${seconds} s a load, load ${loadAverage()}`);
/** Per load and variant, each round's req/s, p99 and server µs a request. */
const figures = new Map<string, { rps: number[]; p99: number[]; cpu: number[] }>();
try {
  for (let round = 0; round < rounds; round++) {
    for (const [name, requests] of loads) {
      for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
        // The other server stopped meanwhile: its own background work (GC, warm-ups) does not share the cores.
        const other = servers.find((candidate) => candidate !== server)!;
        other.child.kill('SIGSTOP');
        // One second first: the JIT and the caches settle outside the figures.
        await client.run({ url: server.origin, requests, connections: 50, seconds: 1 });
        const before = processCpuMicros(server.child.pid!);
        const result = await client.run({ url: server.origin, requests, connections: 50, seconds });
        const entry = figures.get(`${name}|${server.name}`) ?? { rps: [], p99: [], cpu: [] };
        entry.rps.push(result.rps);
        entry.p99.push(result.p99);
        entry.cpu.push((processCpuMicros(server.child.pid!) - before) / result.total);
        figures.set(`${name}|${server.name}`, entry);
        other.child.kill('SIGCONT');
      }
    }
  }
} finally {
  client.close();
  for (const server of servers) server.child.kill();
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
console.log('what                      answers          req/s   p99   server µs/req   batched / each at once');
for (const [name] of loads) {
  const once = figures.get(`${name}|each at once`)!;
  const batched = figures.get(`${name}|batched`)!;
  for (const [variant, entry] of [
    ['each at once', once],
    ['batched', batched],
  ] as const) {
    const ratio = variant === 'batched' ? `x${(median(batched.rps) / median(once.rps)).toFixed(2)} req/s` : '';
    console.log(
      `${name.padEnd(25)} ${variant.padEnd(14)} ${String(Math.round(median(entry.rps))).padStart(7)} ${String(median(entry.p99)).padStart(5)} ${median(entry.cpu).toFixed(1).padStart(15)}   ${ratio}`,
    );
  }
}
console.log(`load ${loadAverage()}`);
