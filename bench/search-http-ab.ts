/**
 * Search over HTTP, A/B in one process: this checkout's server and another checkout's (`--base DIR`, node_modules
 * linked) both listen here, as `serve` starts them (startServer with the console's extensions, rate limits off),
 * over the same database; a child process loads one, then the other, alternating rounds, so a busy machine slows
 * both alike: compare the ratios. Answers to the first 300 queries of a class are first compared byte for byte (status, headers but Date, body).
 *
 *   npx tsx bench/search-http-ab.ts [--base /tmp/base] [--agents 100000] [--cache on|off] [--classes exact,prefix]
 *     [--rounds 4] [--seconds 5] [--connections 50] [--profile FILE]
 *
 * `--spawn`: each server is instead its checkout's bundle (`node out/api/serve.js`, as the bench runs it; run
 * `npm run build:api` in both first), in its own process. tsx (in-process) keeps function names with a helper call
 * per closure made, which the bundle does not: profile in-process, compare the ratios with --spawn.
 * `--profile FILE`: a CPU profile of this checkout's server during its timed loads only (in-process only).
 * The database is the one bench/search-service-ab.ts generates (run that first for a new size). Not a test.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import * as ownConfig from '../src-api/config';
import * as ownConsole from '../src-api/console/console.extensions';
import * as ownServer from '../src-api/server';
import { generateAgents } from './lib/dataset';
import { classRequests, startLoadClient } from './lib/load-client';
import { freePort, processCpuMicros, spawnServer, waitSettled } from './lib/server-process';
import { argument, chosenClasses } from './lib/cli';

const size = Number(argument('agents') ?? 100_000);
const rounds = Number(argument('rounds') ?? 4);
const seconds = Number(argument('seconds') ?? 5);
const connections = Number(argument('connections') ?? 50);
const cache = (argument('cache') ?? 'off') === 'on';
const baseDir = argument('base');
const profileFile = argument('profile');
const classes = chosenClasses();

const dataDir = path.join(os.tmpdir(), `agentdir-search-service-ab-${size}`);
if (!fs.existsSync(path.join(dataDir, 'ready'))) throw new Error(`${dataDir}: run bench/search-service-ab.ts --agents ${size} first`);

interface Variant {
  name: string;
  origin: string;
  /** CPU time the server has used so far (µs): per request, it varies far less with the machine's load than req/s. */
  cpuMicros: () => number;
  close: () => Promise<void>;
}

async function start(name: string, dir: string | undefined): Promise<Variant> {
  if (process.argv.includes('--spawn')) {
    const port = await freePort();
    const server = spawnServer(port, dataDir, { cache, root: dir });
    const origin = `http://127.0.0.1:${port}`;
    await waitSettled(origin, size);
    return {
      name,
      origin,
      cpuMicros: () => processCpuMicros(server.pid!),
      close: () => new Promise((resolve) => (server.kill('SIGTERM'), server.once('exit', () => resolve()))),
    };
  }
  const from = async <T>(module: string, own: T): Promise<T> => (dir ? ((await import(path.join(dir, module))) as T) : own);
  const { createConfig } = await from('src-api/config.ts', ownConfig);
  const { startServer } = await from('src-api/server.ts', ownServer);
  const { consoleExtensions } = await from('src-api/console/console.extensions.ts', ownConsole);
  const config = createConfig({ dataDir, demoData: false, port: 0, searchCache: cache, rateLimit: { enabled: false } } as never);
  const server = await startServer(config, { extensions: consoleExtensions });
  await waitSettled(server.origin, size);
  return {
    name,
    origin: server.origin,
    cpuMicros: () => {
      const { user, system } = process.cpuUsage();
      return user + system;
    },
    close: () => server.close(),
  };
}

const variants = [await start('this', undefined)];
if (baseDir) variants.unshift(await start('base', path.resolve(baseDir)));
const agents = generateAgents(size);
const loadClient = startLoadClient();

console.log(
  `${size.toLocaleString('en')} agents, cache ${cache ? 'on' : 'off'}, ${connections} connections, ${seconds} s per load, node ${process.version}, load ${os
    .loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')}`,
);
const session = new Session();
session.connect();
if (profileFile) await session.post('Profiler.enable');
for (const kind of classes) {
  const requests = classRequests(agents, kind);
  if (variants.length === 2) {
    for (const spec of requests.slice(0, 300)) {
      const [a, b] = await Promise.all(
        variants.map(async ({ origin }) => {
          const response = await fetch(`${origin}${spec.path}`, {
            method: spec.method,
            body: spec.body,
            headers: spec.body ? { 'content-type': 'application/json' } : {},
          });
          const headers = [...response.headers].filter(([name]) => name !== 'date').map(([name, value]) => `${name}: ${value}`);
          return `${response.status} ${headers.join('\n')} ${Buffer.from(await response.arrayBuffer()).toString('base64')}`;
        }),
      );
      if (a !== b) throw new Error(`${kind}: different answers for ${JSON.stringify(spec)}`);
    }
  }
  const results = variants.map(() => [] as { rps: number; p99: number; cpu: number }[]);
  for (let round = 0; round < rounds; round++) {
    for (const [v, variant] of variants.entries()) {
      const profiling = profileFile && variant.name === 'this';
      if (profiling) await session.post('Profiler.start');
      const cpuBefore = variant.cpuMicros();
      const result = await loadClient.run({ url: variant.origin, requests, connections, seconds });
      const cpu = (variant.cpuMicros() - cpuBefore) / result.total;
      if (profiling) {
        const { profile } = await session.post('Profiler.stop');
        fs.writeFileSync(
          profileFile.replace(/(\.cpuprofile)?$/, `-${kind.replace(/\W+/g, '-')}-${round}.cpuprofile`),
          JSON.stringify(profile),
        );
      }
      if (result.failures > 0) console.error(`  (${variant.name}: ${result.failures} failures)`);
      results[v]!.push({ ...result, cpu });
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const figures = variants.map(
    (variant, v) =>
      `${variant.name} ${Math.round(median(results[v]!.map((r) => r.rps)))} req/s p99 ${median(results[v]!.map((r) => r.p99))} ms ` +
      `${median(results[v]!.map((r) => r.cpu)).toFixed(1)} µs CPU/req`,
  );
  const ratioOf = (field: 'rps' | 'cpu') =>
    `${(median(results[1]!.map((r) => r[field])) / median(results[0]!.map((r) => r[field]))).toFixed(3)} (${results[1]!.map((r, i) => (r[field] / results[0]![i]![field]).toFixed(2)).join(' ')})`;
  const ratio = variants.length === 2 ? `; this/base req/s ${ratioOf('rps')}, CPU/req ${ratioOf('cpu')}` : '';
  console.log(`${kind.padEnd(24)} ${figures.join(', ')}${ratio}, load ${os.loadavg()[0]!.toFixed(1)}`);
}
loadClient.close();
for (const variant of variants) await variant.close();
