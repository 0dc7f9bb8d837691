import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A real `serve` process on a free port, for tests of what several processes share. */
export interface ServeProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>`, where tRPC (`/trpc`) and the console live. */
  origin: string;
  /** `<origin>/api/v1`. */
  api: string;
  output: () => string;
  /** SIGTERM, resolved once the process has exited. */
  stop: () => Promise<void>;
}

/**
 * Starts `serve` (from the sources, through tsx) on 127.0.0.1 and port 0 with `args`,
 * and resolves once it prints where it listens; rejects with its output if it exits
 * first or does not listen within `timeoutMs`.
 */
export function startServeProcess(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<ServeProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src-api/serve.ts', '--host', '127.0.0.1', '--port', '0', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not listen within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /Agent Directory API: (http:\/\/[^\s]+)\/api\/v1/.exec(output);
      if (listening) {
        clearTimeout(timer);
        resolve({ child, origin: listening[1]!, api: `${listening[1]}/api/v1`, output: () => output, stop });
      }
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
}

/** Background jobs in progress on the server at `origin` (warm-ups, trust refresh), from its /metrics (read from loopback). */
export async function backgroundJobs(origin: string): Promise<number> {
  const metrics = await (await fetch(`${origin}/metrics`)).text();
  const jobs = /^agentdir_background_jobs (\d+)$/m.exec(metrics)?.[1];
  if (jobs === undefined) throw new Error(`${origin}/metrics has no agentdir_background_jobs`);
  return Number(jobs);
}

/** Waits until the server at `origin` has settled: no background job in progress. */
export async function waitUntilSettled(origin: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await backgroundJobs(origin)) > 0) {
    if (Date.now() > deadline) throw new Error(`${origin} still had background jobs after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
