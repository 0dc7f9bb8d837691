import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { is } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPgMigrationsFolder, migratePostgres } from '../../src-api/db/client-pg';
import * as pgSchema from '../../src-api/db/schema-pg';
import { startPostgres, type TestPostgres } from '../helpers/postgres-server';

/**
 * Contract section 8: the PostgreSQL store's generated migrations are applied at
 * start, once even when several processes start at once on an empty database.
 * A real PostgreSQL 15 (Debian's, run as the postgres user on a free port).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const MIGRATIONS = (
  JSON.parse(fs.readFileSync(path.join(defaultPgMigrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] }
).entries.length;
const TABLES = Object.values(pgSchema)
  .filter((value) => is(value, PgTable))
  .map((table) => getTableConfig(table).name)
  .sort();

let postgres: TestPostgres;
let databases = 0;
beforeAll(async () => {
  postgres = await startPostgres();
}, 180_000);
afterAll(() => postgres?.stop());

/** A new empty database on the server: its name. */
function newDatabase(): string {
  const name = `migrate_${++databases}`;
  postgres.query(`CREATE DATABASE ${name}`);
  return name;
}

/** The tables of the public schema and the count of recorded migrations, as psql sees them. */
function state(database: string): { tables: string[]; migrations: number } {
  const tables = postgres.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename", database);
  return {
    tables: tables.split('\n').filter((line) => line !== ''),
    migrations: Number(postgres.query('SELECT count(*) FROM drizzle.__drizzle_migrations', database)),
  };
}

/** migrate-process.ts in its own Node process: exit code and output. */
function migrateInProcess(url: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/postgres/migrate-process.ts', url], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('PostgreSQL migrations', () => {
  it('there is a PostgreSQL table for every table of the schema, and at least one migration', () => {
    expect(TABLES.length).toBeGreaterThanOrEqual(20);
    expect(MIGRATIONS).toBeGreaterThanOrEqual(1);
  });

  it('an empty database gets every table; migrating it again changes nothing', async () => {
    const database = newDatabase();
    await migratePostgres(postgres.urlOf(database));
    const first = state(database);
    expect(first).toEqual({ tables: TABLES, migrations: MIGRATIONS });

    postgres.query(
      "INSERT INTO newsletter_subscribers (id, email, email_key, created_at) VALUES ('s1', 'A@x.org', 'a@x.org', 'now')",
      database,
    );
    await migratePostgres(postgres.urlOf(database));
    expect(state(database)).toEqual(first);
    // The row is still there, with the SQL default of its status column.
    expect(postgres.query('SELECT id, status FROM newsletter_subscribers', database)).toBe('s1|subscribed');
  }, 60_000);

  it('three processes migrating one empty database at once: all succeed, one schema, each migration recorded once', async () => {
    const database = newDatabase();
    const url = postgres.urlOf(database);
    const results = await Promise.all([0, 1, 2].map(() => migrateInProcess(url)));
    for (const result of results) expect(result, result.output).toMatchObject({ code: 0, output: 'migrated\n' });
    expect(state(database)).toEqual({ tables: TABLES, migrations: MIGRATIONS });
    // Nothing holds the migration lock any more.
    expect(postgres.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'", database)).toBe('0');
  }, 120_000);

  it('an unreachable server is one clear error naming the server (never the password)', async () => {
    const url = `postgres://someone:secret-word@127.0.0.1:${postgres.port + 1}/nothing`;
    // Another server may listen on port+1 by chance: the message is checked only when the connection is refused.
    const error = (await migratePostgres(url).catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).not.toContain('secret-word');
    if (error.message.includes('refused')) {
      expect(error.message).toBe(
        `cannot connect to PostgreSQL at someone@127.0.0.1:${postgres.port + 1}/nothing: connection refused (is the server running?)`,
      );
    }
  }, 60_000);
});
