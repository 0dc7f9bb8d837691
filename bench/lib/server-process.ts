/**
 * The processes a bench run starts and watches: our server (built, from out/), the raw node:http
 * baseline, its RSS, and the waits for it to listen and to settle.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const root = path.resolve(import.meta.dirname, '../..');

export interface ServerOptions {
  /** `--search-cache on` (off by default: the goals are met without it). */
  cache?: boolean;
  /** The store's flags, such as `--database-url` (SQLite in the data dir when empty). */
  databaseArgs?: string[];
  /** More of the server's own flags (`--batch-answers off`). */
  serverArgs?: string[];
  /** Node's own flags, before the script (`--expose-gc`, `-r probe.cjs`, `--trace-gc`). */
  nodeArgs?: string[];
  /** The checkout whose out/api/serve.js runs (another one for an A/B). */
  root?: string;
  /** Show the server's stdout (what node flags print there); it is dropped by default. */
  stdout?: boolean;
  /** An IPC channel, for a preload that answers the bench's questions inside the server. */
  ipc?: boolean;
}

export function spawnServer(port: number, dataDir: string, options: ServerOptions = {}): ChildProcess {
  return spawn(
    'node',
    [
      ...(options.nodeArgs ?? []),
      'out/api/serve.js',
      '--port',
      String(port),
      '--data-dir',
      dataDir,
      '--no-demo-data',
      '--rate-limit',
      'off',
      '--search-cache',
      options.cache ? 'on' : 'off',
      ...(options.databaseArgs ?? []),
      ...(options.serverArgs ?? []),
    ],
    {
      cwd: options.root ?? root,
      stdio: ['ignore', options.stdout ? 'inherit' : 'ignore', 'inherit', ...(options.ipc ? (['ipc'] as const) : [])],
    },
  );
}

/** Samples the server's RSS every 200 ms: the peak of the whole run, and of each phase (logged, to see which load costs memory). */
export function trackRss(pid: number) {
  let peak = 0;
  let phasePeak = 0;
  const sample = () => {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peak = Math.max(peak, kb / 1024);
      phasePeak = Math.max(phasePeak, kb / 1024);
    } catch {
      // The process is gone; keep the peak we saw.
    }
  };
  const timer = setInterval(sample, 200);
  sample();
  return {
    endPhase: (name: string) => {
      sample();
      console.error(`    (server RSS peak during ${name}: ${phasePeak.toFixed(0)} MB)`);
      phasePeak = 0;
    },
    stop: () => {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

export function runToEnd(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`))));
  });
}

export interface ServerProgress {
  /** From /health. */
  agents_indexed: number;
  /** No background job in progress: `agentdir_background_jobs` is 0 in /metrics (read from loopback). */
  idle: boolean;
}

export async function health(base: string): Promise<ServerProgress> {
  const [body, metrics] = await Promise.all([
    fetch(`${base}/health`).then((response) => response.json() as Promise<{ agents_indexed: number }>),
    fetch(`${base.replace(/\/api\/v1$/, '')}/metrics`).then((response) => response.text()),
  ]);
  const jobs = /^agentdir_background_jobs (\d+)$/m.exec(metrics)?.[1];
  if (jobs === undefined) throw new Error(`${base}: /metrics has no agentdir_background_jobs`);
  return { agents_indexed: body.agents_indexed, idle: Number(jobs) === 0 };
}

/** Polls /health and /metrics until `done` holds (at most 10 minutes). */
export async function waitFor(base: string, done: (progress: ServerProgress) => boolean): Promise<void> {
  const started = performance.now();
  while (!done(await health(base))) {
    if (performance.now() - started > 600_000) throw new Error(`${base}/health: not settled after 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function waitForHealth(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** Waits until the server listens, has indexed `agents` and is idle (warm-ups and trust refresh done), as the bench waits. */
export async function waitSettled(origin: string, agents: number): Promise<void> {
  await waitForHealth(`${origin}/api/v1/health`, 120_000);
  await waitFor(`${origin}/api/v1`, (progress) => progress.agents_indexed >= agents && progress.idle);
}

/** A process's CPU time so far, user + system, in µs (from /proc: clock ticks of 10 ms). */
export function processCpuMicros(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/**
 * A node:http server given as source (`node -e`, its arguments after it), in a process of its own, once it
 * answers on `/`: the raw baseline (BASELINE_SERVER) and http-floor.ts's working servers.
 */
export async function startInlineServer(source: string, ...args: Array<string | number>): Promise<{ child: ChildProcess; origin: string }> {
  const port = await freePort();
  const child = spawn('node', ['-e', source, String(port), ...args.map(String)], { stdio: 'ignore' });
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(`${origin}/`, 10_000);
  } catch (error) {
    child.kill();
    throw error;
  }
  return { child, origin };
}

/** The raw node:http baseline (BASELINE_SERVER) in a process of its own, once it answers. */
export const startBaseline = () => startInlineServer(BASELINE_SERVER);

/** The baseline: raw node:http answering a fixed 1 KB JSON body. */
export const BASELINE_SERVER = `
const http = require('node:http');
const body = JSON.stringify({ id: 'baseline', name: 'Baseline', description: 'x'.repeat(940) });
http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}).listen(Number(process.argv[1]), '127.0.0.1');
`;
