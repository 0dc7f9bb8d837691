import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { projectPath } from '../lib/project-root';
import { PostgresConnectError } from './postgres-error';
import * as schema from './schema-pg';

/**
 * The PostgreSQL store (contract section 8), beside the SQLite client
 * (client.ts): a pool over one database, brought up to date at start with the
 * migrations generated from schema-pg.ts. Services still run on SQLite this
 * version; `cli copy-data` is the first user.
 */
export type PgDb = NodePgDatabase<typeof schema> & { $client: pg.Pool };

/** Where the generated PostgreSQL migrations live: resources/migrations-pg, beside the SQLite ones. */
export function defaultPgMigrationsFolder(): string {
  return projectPath('resources', 'migrations-pg');
}

/**
 * The advisory lock every process takes around migrating: a fixed 64-bit key
 * (the bytes of "agentdir"), so other applications sharing the server do not collide with it.
 */
export const MIGRATION_LOCK_KEY = '7018690069353752946';

/** How long to wait for a TCP connection before saying the server is unreachable. */
const CONNECT_TIMEOUT_MS = 10_000;

export interface OpenPostgresOptions {
  migrationsFolder?: string;
  /** Connections in the pool (node-postgres' default: 10). */
  max?: number;
}

/** The connection settings of a postgres:// URL, with a bounded connect time. */
export function postgresConfig(url: string): pg.ClientConfig {
  return { connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS };
}

/** Opens a pool on `url` after bringing the database up to date (migratePostgres). */
export async function openPostgres(url: string, options: OpenPostgresOptions = {}): Promise<PgDb> {
  await migratePostgres(url, options.migrationsFolder);
  const pool = new pg.Pool({ ...postgresConfig(url), ...(options.max !== undefined && { max: options.max }) });
  // An idle connection the server drops (restart, idle timeout) must not crash the process: the next query reconnects.
  pool.on('error', () => {});
  return drizzle(pool, { schema }) as PgDb;
}

/**
 * Applies the pending PostgreSQL migrations, once even when several processes
 * start at the same moment on an empty database: each takes a session-level
 * advisory lock on its own connection first, so they migrate one after
 * another; the first applies everything in one transaction and the others find
 * nothing left to do. (drizzle's migrator alone would race on
 * `CREATE SCHEMA drizzle` and on reading the applied list.)
 */
export async function migratePostgres(url: string, migrationsFolder = defaultPgMigrationsFolder()): Promise<void> {
  const client = await connectPostgres(url);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await migrate(drizzle(client), { migrationsFolder });
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await client.end();
  }
}

/** One connected client, or an error that says where and why in one line (the URL's password left out). */
export async function connectPostgres(url: string, config: pg.ClientConfig = {}): Promise<pg.Client> {
  const client = new pg.Client({ ...postgresConfig(url), ...config });
  // A connection lost later surfaces as the failing query's error; without a listener it would crash the process.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw new PostgresConnectError(`cannot connect to PostgreSQL at ${describePostgresUrl(url)}: ${connectReason(error)}`, {
      cause: error,
    });
  }
  return client;
}

export { PostgresConnectError };

/** `user@host:port/database`, never the password. */
export function describePostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username ? `${decodeURIComponent(parsed.username)}@` : '';
    return `${user}${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname || '/'}`;
  } catch {
    return 'the given URL';
  }
}

function connectReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNREFUSED') return 'connection refused (is the server running?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'unknown host';
  if (code === 'ETIMEDOUT') return 'timed out';
  if (code === '3D000') return 'no such database';
  if (code === '28P01' || code === '28000') return 'authentication failed';
  const message = error instanceof Error ? error.message : String(error);
  return message === 'timeout expired' || message === 'Connection terminated due to connection timeout' ? 'timed out' : message;
}
