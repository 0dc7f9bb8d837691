/**
 * Where a load's req/s goes on this machine: for raw node:http, GET /agents/{id} and each search class, the
 * server's and the load generator's CPU time per request under the bench's load (50 connections, the client in
 * its own process), read from /proc. Server and client share the machine's cores, so a class's req/s is bounded
 * by the two together: a search answer of 20 hits (~16 KB) costs the client about twice what raw's 1 KB does.
 *
 *   npx tsx bench/http-cost.ts [--agents 100000] [--seconds 5] [--classes one,three]
 *
 * The database is the one bench/search-service-ab.ts generates (run that first for a new size); the server is
 * `out/api/serve.js` (run `npm run build:api` first). Not a test.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { argument, chosenClasses, loadAverage } from './lib/cli';
import { generateAgents } from './lib/dataset';
import { classRequests, startLoadClient, type RequestSpec } from './lib/load-client';
import { freePort, processCpuMicros, spawnServer, startBaseline, waitSettled } from './lib/server-process';

const size = Number(argument('agents') ?? 100_000);
const seconds = Number(argument('seconds') ?? 5);
const dataDir = path.join(os.tmpdir(), `agentdir-search-service-ab-${size}`);
if (!fs.existsSync(path.join(dataDir, 'ready'))) throw new Error(`${dataDir}: run bench/search-service-ab.ts --agents ${size} first`);

const agents = generateAgents(size);
const port = await freePort();
const server = spawnServer(port, dataDir, {});
const origin = `http://127.0.0.1:${port}`;
await waitSettled(origin, size);
const baseline = await startBaseline();
const client = startLoadClient();

console.log(`${size.toLocaleString('en')} agents, 50 connections, ${seconds} s a load, ${os.cpus().length} cores, load ${loadAverage()}`);
console.log('what                      req/s   p99   server µs/req   client µs/req');
async function measure(name: string, url: string, pid: number, requests: RequestSpec[]): Promise<void> {
  // One second first: the JIT and the caches settle outside the figures.
  await client.run({ url, requests, connections: 50, seconds: 1 });
  const serverBefore = processCpuMicros(pid);
  const clientBefore = processCpuMicros(client.pid);
  const result = await client.run({ url, requests, connections: 50, seconds });
  const perRequest = (micros: number) => (micros / result.total).toFixed(1).padStart(15);
  console.log(
    `${name.padEnd(24)} ${String(Math.round(result.rps)).padStart(6)} ${String(result.p99).padStart(5)} ${perRequest(processCpuMicros(pid) - serverBefore)} ${perRequest(processCpuMicros(client.pid) - clientBefore)}`,
  );
}
try {
  await measure('raw node:http (1 KB)', baseline.origin, baseline.child.pid!, [{ method: 'GET', path: '/' }]);
  const byId = agents.slice(0, 20_000).map((agent): RequestSpec => ({ method: 'GET', path: `/api/v1/agents/${agent.id}` }));
  await measure('GET /agents/{id}', origin, server.pid!, byId);
  for (const kind of chosenClasses()) await measure(kind, origin, server.pid!, classRequests(agents, kind));
} finally {
  client.close();
  server.kill();
  baseline.child.kill();
}
