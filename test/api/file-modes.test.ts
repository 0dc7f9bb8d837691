import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { databasePath } from '../../src-api/config';
import { openDatabase } from '../../src-api/db/client';
import { agentInput, makeTempDir, startTestServer, type TestServer } from '../helpers/test-server';
import { onPostgres } from '../helpers/test-store';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;
/** The SQLite file and its WAL and SHM; none on PostgreSQL, whose server keeps its own files. */
const databaseFiles = (server: TestServer) => {
  if (onPostgres) return [];
  const db = databasePath(server.services.config);
  return [db, `${db}-wal`, `${db}-shm`];
};

describe('data dir permissions', () => {
  it('leaves the mode of an existing folder named by --database sqlite:<path> (it may be shared, like /tmp)', () => {
    const shared = makeTempDir();
    fs.chmodSync(shared, 0o1777);
    const file = path.join(shared, 'copy.sqlite');
    const db = openDatabase(file);
    db.$client.close();
    expect(fs.statSync(shared).mode & 0o7777).toBe(0o1777);
    expect(modeOf(file)).toBe(0o600);
    // A folder that does not exist yet is created private.
    const fresh = path.join(shared, 'new-folder');
    openDatabase(path.join(fresh, 'agents.sqlite')).$client.close();
    expect(modeOf(fresh)).toBe(0o700);
  });

  it('creates the data dir 0700 and the database, its WAL and SHM 0600', async () => {
    const dataDir = path.join(makeTempDir(), 'fresh-data');
    server = await startTestServer({ dataDir, adminToken: undefined });
    await server.services.agents.edits.create(agentInput({ name: 'Mode Check' }));
    expect(modeOf(dataDir)).toBe(0o700);
    for (const file of [...databaseFiles(server), path.join(dataDir, 'admin-token')]) expect(modeOf(file)).toBe(0o600);
  });

  it('fixes the modes of an existing data dir, database and admin token file, keeping the token', async () => {
    const dataDir = path.join(makeTempDir(), 'old-data');
    fs.mkdirSync(dataDir, { mode: 0o755 });
    fs.chmodSync(dataDir, 0o755);
    const token = 'an-old-admin-token-0123456789';
    fs.writeFileSync(path.join(dataDir, 'admin-token'), `${token}\n`, { mode: 0o644 });
    fs.chmodSync(path.join(dataDir, 'admin-token'), 0o644);
    fs.writeFileSync(path.join(dataDir, 'agent-directory.sqlite'), '', { mode: 0o644 });
    fs.chmodSync(path.join(dataDir, 'agent-directory.sqlite'), 0o644);

    server = await startTestServer({ dataDir, adminToken: undefined });
    expect(server.adminToken).toBe(token);
    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(path.join(dataDir, 'admin-token'))).toBe(0o600);
    for (const file of databaseFiles(server)) expect(modeOf(file)).toBe(0o600);
  });
});
