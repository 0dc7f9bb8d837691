import path from 'node:path';
import { connectPostgres, migratePostgres } from '../../src-api/db/client-pg';

/**
 * Which store the API, webhook and CLI suites run on: SQLite (the default) or, with
 * AGENTDIR_TEST_STORE=postgres, PostgreSQL 15. Then test/global-setup.ts starts one
 * real server for the whole run and migrates a template database once; each data
 * dir gets a fresh database copied from it (CREATE DATABASE … TEMPLATE: no migrations).
 */
export type TestStore = 'sqlite' | 'postgres';

export function testStore(): TestStore {
  const value = process.env.AGENTDIR_TEST_STORE ?? 'sqlite';
  if (value !== 'sqlite' && value !== 'postgres') throw new Error(`AGENTDIR_TEST_STORE must be sqlite or postgres, got "${value}"`);
  return value;
}

/** True when the suites run on PostgreSQL: for `it.skipIf(onPostgres)` on what only SQLite has (say why beside it). */
export const onPostgres = testStore() === 'postgres';

/** The template every test database is copied from. */
export const TEMPLATE_DATABASE = 'agentdir_template';

/** Base URL of the run's PostgreSQL (global-setup sets it), e.g. postgres://postgres@127.0.0.1:5433 */
function serverUrl(): string {
  const url = process.env.AGENTDIR_TEST_POSTGRES_URL;
  if (!url)
    throw new Error('AGENTDIR_TEST_STORE=postgres, but no PostgreSQL was started (test/global-setup.ts sets AGENTDIR_TEST_POSTGRES_URL)');
  return url;
}

const urlOf = (database: string) => `${serverUrl()}/${database}`;

/** Creates the template database, migrated (global-setup, once per run). */
export async function createTemplateDatabase(url: string): Promise<void> {
  const admin = await connectPostgres(`${url}/postgres`);
  try {
    // A natural-language collation (the server's default is C), as in test/postgres: a text sort that
    // forgets COLLATE "C" differs from SQLite's byte order here rather than in production.
    await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
  } finally {
    await admin.end();
  }
  await migratePostgres(`${url}/${TEMPLATE_DATABASE}`);
}

let created = 0;
const databases = new Map<string, Promise<string>>();

/**
 * The PostgreSQL database of a data dir (AGENTDIR_TEST_STORE=postgres): made on first use, a copy of
 * the template, and the same one every time after, so a server restarted on the data dir, and the
 * CLI run with `--data-dir` (test/cli/cli-helpers.ts), find what the last one wrote. Left to the
 * end of the run, when the whole server goes.
 */
export function databaseOf(dataDir: string): Promise<string> {
  const key = path.resolve(dataDir);
  let url = databases.get(key);
  if (!url) {
    url = createTestDatabase();
    databases.set(key, url);
  }
  return url;
}

async function createTestDatabase(): Promise<string> {
  const name = `test_${process.pid}_${++created}`;
  const admin = await connectPostgres(urlOf('postgres'));
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`);
  } finally {
    await admin.end();
  }
  return urlOf(name);
}
