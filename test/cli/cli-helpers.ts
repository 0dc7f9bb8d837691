import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../src-api/db/open-store';
import type { Store } from '../../src-api/db/store';
import { countRows } from '../helpers/store-rows';
import { makeTempDir } from '../helpers/test-server';
import { databaseOf, onPostgres } from '../helpers/test-store';

export { makeTempDir };

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Each CLI run is a fresh Node process (about 0.5 s, several on a busy machine); tests run a few in a row. */
export const CLI_TEST_TIMEOUT = 120_000;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real CLI in a child process, as `npm run cli` does, from the repository
 * root. `node --import tsx` starts about twice as fast as `npx tsx` (no extra process).
 * AGENTDIR_* variables of the test environment are not passed on. With
 * AGENTDIR_TEST_STORE=postgres, a command given a data dir (`--data-dir`, or
 * AGENTDIR_DATA_DIR in `env`) and no database (`--database`, AGENTDIR_DATABASE_URL)
 * runs on that data dir's PostgreSQL database (test/helpers/test-store.ts), the one
 * a test server on it uses and `withStore` reads.
 */
export async function runCli(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliResult> {
  const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AGENTDIR_')));
  const dataDir = args.includes('--data-dir') ? args[args.indexOf('--data-dir') + 1] : env.AGENTDIR_DATA_DIR;
  const database =
    onPostgres && dataDir && !args.includes('--database') && env.AGENTDIR_DATABASE_URL === undefined
      ? { AGENTDIR_DATABASE_URL: await databaseOf(path.resolve(dataDir)) }
      : {};
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'src-api/cli.ts', ...args],
      { cwd: repoRoot, env: { ...cleanEnv, ...database, ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    // What the command reads from stdin (e.g. --password-stdin); nothing otherwise.
    child.stdin?.end(input ?? '');
  });
}

/** Writes `content` to a new file in `dir` and returns its path. */
export function writeFile(dir: string, name: string, content: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

export const jsonl = (records: unknown[]): string => records.map((record) => JSON.stringify(record)).join('\n') + '\n';

/**
 * The data dir's database as the CLI (runCli) and a test server on it see it: its SQLite file, or
 * with AGENTDIR_TEST_STORE=postgres its PostgreSQL database. Opened for `read` (after the CLI process
 * has exited) and closed after it, as another process would.
 */
export async function withStore<T>(dataDir: string, read: (store: Store) => Promise<T>): Promise<T> {
  const resolved = path.resolve(dataDir);
  const opened = await openStore({ dataDir: resolved, databaseUrl: onPostgres ? await databaseOf(resolved) : undefined });
  try {
    return await read(opened.store);
  } finally {
    await opened.close();
  }
}

/**
 * The rows of a query built on the data dir's store, typed the same on both stores (camelCase keys,
 * booleans, JSON parsed): e.g. `select(dataDir, ({ db, t }) => db.select().from(t.agents).orderBy(t.agents.id))`.
 */
export function select<Row>(dataDir: string, build: (store: Store) => { all(): Row[] }): Promise<Row[]> {
  return withStore(dataDir, (store) => store.rows(build(store)));
}

/** Rows in `table` of the data dir's database. */
export function count(dataDir: string, table: string): Promise<number> {
  return withStore(dataDir, (store) => countRows(store, table));
}

/** A valid import record. */
export function record(n: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `Agent ${n}`,
    tagline: `Agent ${n} does useful things`,
    description: `Agent ${n} is a test agent with a long enough description to count as complete in the trust score.`,
    author: 'Test Author',
    capabilities: ['testing', `skill-${n}`],
    categories: ['quality'],
    type: 'coding',
    source_url: `https://example.com/agents/agent-${n}`,
    ...overrides,
  };
}

/** `Imported 3 agents: 2 created, 1 updated, 0 unchanged (0.1 s)` */
export const SUMMARY = /^Imported ([\d,]+) agents?: ([\d,]+) created, ([\d,]+) updated, ([\d,]+) unchanged \(\d+\.\d s\)\n$/;
