import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startPostgres } from './helpers/postgres-server';
import { createTemplateDatabase, testStore } from './helpers/test-store';

/**
 * One temp folder per `vitest run`: makeTempDir (test/helpers/test-server.ts) makes each test's data
 * dir inside it, and the run removes it at the end. Without it a run left about 600 SQLite data dirs
 * in /tmp. Workers inherit the variables: they are started after this runs.
 *
 * With AGENTDIR_TEST_STORE=postgres, also one PostgreSQL 15 for the run, with a migrated template
 * database each test server's database is copied from (test/helpers/test-store.ts).
 */
export default async function setup(): Promise<() => void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-tests-'));
  // Traversable like /tmp itself, for servers that drop privileges (nginx workers); each data dir inside stays 0700.
  fs.chmodSync(root, 0o755);
  process.env.AGENTDIR_TEST_TMP = root;
  const postgres = testStore() === 'postgres' ? await startPostgres() : undefined;
  if (postgres) {
    const base = `postgres://postgres@127.0.0.1:${postgres.port}`;
    try {
      await createTemplateDatabase(base);
    } catch (error) {
      postgres.stop();
      throw error;
    }
    process.env.AGENTDIR_TEST_POSTGRES_URL = base;
  }
  return () => {
    postgres?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  };
}
