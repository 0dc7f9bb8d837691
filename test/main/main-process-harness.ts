import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { makeTempDir } from '../helpers/temp-dir';

export const root = path.resolve(import.meta.dirname, '../..');
export const mainBundle = path.join(root, 'out/main/index.js');
const registerFakeElectron = path.join(import.meta.dirname, 'fixtures/register-fake-electron.mjs');

/** A port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The built main process (out/main/index.js) running under plain Node with
 * fixtures/fake-electron.mjs in place of `electron`; `ask` queries what the
 * stand-in recorded and drives the handlers the main process installed.
 */
export class MainProcess {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private output = '';
  readonly exited: Promise<number | null>;

  private constructor(
    private readonly child: ChildProcess,
    readonly userData: string,
  ) {
    child.stdout!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.on('message', (message: { id?: number; ok?: boolean; value?: unknown; error?: string }) => {
      if (message.id === undefined) return;
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.ok) waiter?.resolve(message.value);
      else waiter?.reject(new Error(message.error));
    });
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /**
   * `args` are the app's command line; `--local` by default (a returning user who hosts the directory here), since
   * with no choice made the app first asks with its connection screen. `userData` reuses a folder (a second start).
   */
  static start(env: Record<string, string>, args: string[] = ['--local'], userData?: string): MainProcess {
    userData ??= makeTempDir('agentdir-electron-');
    const child = fork(mainBundle, args, {
      cwd: root,
      execArgv: ['--import', registerFakeElectron],
      env: { ...process.env, FAKE_ELECTRON_USER_DATA: userData, FAKE_ELECTRON_APP_PATH: root, ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    return new MainProcess(child, userData);
  }

  /** The API base URL the main process printed once listening. */
  async apiBaseUrl(timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = /Agent Directory API: (\S+)/.exec(this.output);
      if (match) return match[1]!;
      if (this.child.exitCode !== null) throw new Error(`main process exited (${this.child.exitCode}):\n${this.output}`);
      if (Date.now() > deadline) throw new Error(`main process did not start the API in time:\n${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  ask<T = any>(command: string, args: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.child.send({ id, command, args });
    });
  }

  get log(): string {
    return this.output;
  }

  kill({ keepUserData = false } = {}): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
    if (!keepUserData) fs.rmSync(this.userData, { recursive: true, force: true });
  }
}
