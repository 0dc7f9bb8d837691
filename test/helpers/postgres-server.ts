import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './redis-server';

export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** Runs one SQL statement with psql and returns its unaligned, tuples-only output (in `database`, default postgres). */
  query(sql: string, database?: string): string;
  /** The URL of another database on the same server. */
  urlOf(database: string): string;
  stop(): void;
}

/** Debian's PostgreSQL 15 binaries (apt package postgresql). */
const BIN = '/usr/lib/postgresql/15/bin';
const OS_USER = 'postgres';

/** Runs a PostgreSQL program as the postgres user: the server refuses to run as root. */
function asPostgres(program: string, args: string[]): string {
  const command = path.join(BIN, program);
  const asRoot = process.getuid?.() === 0;
  return execFileSync(asRoot ? 'runuser' : command, asRoot ? ['-u', OS_USER, '--', command, ...args] : args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs one SQL statement with psql on the database of `url`; its unaligned, tuples-only output. */
export function psql(url: string, sql: string): string {
  return execFileSync(path.join(BIN, 'psql'), ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', sql], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

export interface PostgresOptions {
  /**
   * Server settings (-c name=value) over the tests' own: fsync=off, as a test server loses nothing worth
   * keeping when the machine stops. The bench runs with fsync on (bench/lib/bench-store.ts).
   */
  settings?: Record<string, string>;
}

/**
 * A real PostgreSQL 15 on 127.0.0.1 and a free port: a fresh cluster in a temp
 * dir (initdb, trust authentication for local connections only), started with
 * pg_ctl as the `postgres` user, its socket in the same dir. `stop()` stops it
 * and removes the dir.
 */
export async function startPostgres(options: PostgresOptions = {}): Promise<TestPostgres> {
  if (!fs.existsSync(path.join(BIN, 'postgres'))) {
    throw new Error(`PostgreSQL 15 is not installed (${BIN}): apt-get install postgresql`);
  }
  // Another process may take the free port between freePort() and the server's bind: then try another port.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePort(options);
    } catch (error) {
      if (attempt === 3 || !/could not bind|Address already in use/i.test((error as Error).message)) throw error;
    }
  }
}

function startOnFreePort(options: PostgresOptions): Promise<TestPostgres> {
  return freePort().then((port) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-postgres-'));
    const data = path.join(dir, 'data');
    if (process.getuid?.() === 0) execFileSync('chown', ['-R', `${OS_USER}:${OS_USER}`, dir]);
    let started = false;
    const stop = () => {
      if (started) {
        try {
          asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
        } catch {
          // already stopped
        }
        started = false;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    };
    try {
      asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync']);
      asPostgres('pg_ctl', [
        '-D',
        data,
        '-l',
        path.join(dir, 'server.log'),
        '-o',
        Object.entries({ fsync: 'off', ...options.settings }).reduce(
          (flags, [name, value]) => `${flags} -c ${name}=${value}`,
          `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${dir}`,
        ),
        '-w',
        '-t',
        '120',
        'start',
      ]);
      started = true;
    } catch (error) {
      const log = fs.existsSync(path.join(dir, 'server.log')) ? fs.readFileSync(path.join(dir, 'server.log'), 'utf8') : '';
      stop();
      const stderr = (error as { stderr?: string }).stderr ?? '';
      throw new Error(`PostgreSQL did not start: ${(error as Error).message}\n${stderr}\n${log}`);
    }
    const urlOf = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
    const url = urlOf('postgres');
    return {
      url,
      urlOf,
      port,
      query: (sql: string, database = 'postgres') => psql(urlOf(database), sql),
      stop,
    };
  });
}
