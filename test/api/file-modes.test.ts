import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { databasePath } from '../../src-api/config';
import { agentInput, makeTempDir, startTestServer, type TestServer } from '../helpers/test-server';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe('data dir permissions', () => {
  it('creates the data dir 0700 and the database, its WAL and SHM 0600', async () => {
    const dataDir = path.join(makeTempDir(), 'fresh-data');
    server = await startTestServer({ dataDir, adminToken: undefined });
    server.services.agents.create(agentInput({ name: 'Mode Check' }));
    const db = databasePath(server.services.config);
    expect(modeOf(dataDir)).toBe(0o700);
    for (const file of [db, `${db}-wal`, `${db}-shm`, path.join(dataDir, 'admin-token')]) expect(modeOf(file)).toBe(0o600);
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
    const db = databasePath(server.services.config);
    for (const file of [db, `${db}-wal`, `${db}-shm`]) expect(modeOf(file)).toBe(0o600);
  });
});
