/**
 * On-CPU profile of the bundled server (`node out/api/serve.js`, as the bench runs it) under one search class's
 * load: `perf record -e cpu-clock` of the server process only, with V8's perf map, so kernel time (the socket
 * writes) and JavaScript are counted by CPU time, not by wall time as --cpu-prof does (a write that wakes the
 * load generator and is preempted there counts there in full). Prints the server's CPU per request.
 *
 *   npx tsx bench/http-perf.ts [--agents 100000] [--classes one] [--seconds 8] [--root DIR] [--out /tmp/http.perf]
 *   perf report -i /tmp/http.perf --no-children --sort dso,sym
 * Not a test.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { generateAgents } from './lib/dataset';
import { classRequests, startLoadClient } from './lib/load-client';
import { freePort, processCpuMicros, spawnServer, waitSettled } from './lib/server-process';
import { argument, chosenClasses } from './lib/cli';

const size = Number(argument('agents') ?? 100_000);
const seconds = Number(argument('seconds') ?? 8);
const out = argument('out') ?? path.join(os.tmpdir(), 'http.perf');
const root = argument('root');
const kind = chosenClasses()[0]!;
const dataDir = path.join(os.tmpdir(), `agentdir-search-service-ab-${size}`);

const port = await freePort();
const server = spawnServer(port, dataDir, { root, nodeArgs: ['--perf-basic-prof-only-functions'] });
const origin = `http://127.0.0.1:${port}`;
await waitSettled(origin, size);
const agents = generateAgents(size);
const requests = classRequests(agents, kind);
const loadClient = startLoadClient();
const load = (secs: number) => loadClient.run({ url: origin, requests, connections: 50, seconds: secs });
await load(2);
const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', '4000', '-g', '-p', String(server.pid), '-o', out], { stdio: 'ignore' });
await new Promise((resolve) => setTimeout(resolve, 300));
const before = processCpuMicros(server.pid!);
const result = await load(seconds);
const cpu = (processCpuMicros(server.pid!) - before) / result.total;
perf.kill('SIGINT');
await new Promise((resolve) => perf.once('exit', resolve));
console.log(
  `${kind}: ${Math.round(result.rps)} req/s p99 ${result.p99} ms ${cpu.toFixed(1)} µs CPU/req, load ${os.loadavg()[0]!.toFixed(1)}; perf data in ${out}`,
);
loadClient.close();
server.kill('SIGTERM');
