/**
 * Where a bench run keeps its directory (`npm run bench -- --store sqlite|postgres`): SQLite, the
 * data dir's file (the default), or PostgreSQL 15 in a server this run starts on a free port and
 * stops at the end (apt package postgresql; as the tests start it, but with fsync on).
 */
import { startPostgres, type TestPostgres } from '../../test/helpers/postgres-server';

export type BenchStoreKind = 'sqlite' | 'postgres';

export interface BenchStore {
  kind: BenchStoreKind;
  /** The `--database` flag for `serve` and `cli`, none for SQLite (the data dir's file). */
  databaseArgs: string[];
  /** The `databaseUrl` of the run's Config (in-process measures). */
  databaseUrl: string | undefined;
  stop(): void;
}

export async function startBenchStore(kind: BenchStoreKind): Promise<BenchStore> {
  if (kind === 'sqlite') return { kind, databaseArgs: [], databaseUrl: undefined, stop: () => {} };
  // Durable as SQLite's WAL with synchronous=NORMAL (our setting): fsync on, commits not waited for
  // (a crash loses the last commits, never the database). A natural-language collation, as most
  // installations have: text the directory sorts in byte order must say so (db/pg-columns.ts).
  const postgres: TestPostgres = await startPostgres({ settings: { fsync: 'on', synchronous_commit: 'off', shared_buffers: '512MB' } });
  postgres.query(`CREATE DATABASE bench TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
  const url = postgres.urlOf('bench');
  return { kind, databaseArgs: ['--database', url], databaseUrl: url, stop: () => postgres.stop() };
}
