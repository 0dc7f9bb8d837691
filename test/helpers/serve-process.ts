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
