import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { agentInput, startTestServer, type TestServer } from '../helpers/test-server';
import { onPostgres } from '../helpers/test-store';
import { trpcClient } from '../helpers/trpc';

/** backup.* over real HTTP with the admin token: the console's backup card. */
const ADMIN_TOKEN = 'test-admin-token-backup-0123456789';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(
    { adminToken: ADMIN_TOKEN },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken) },
  );
});
afterAll(() => server.close());

const { query, mutation } = trpcClient(() => server.origin, ADMIN_TOKEN);

describe('backup.last and backup.create', () => {
  // Backups copy the SQLite file; on PostgreSQL the console's card says to use pg_dump instead (below).
  it.skipIf(onPostgres)(
    'has no last backup at first, then records the one it makes into <data-dir>/backups/ (mode 0600, audited)',
    async () => {
      expect(await query('backup.last')).toMatchObject({ status: 200, data: null });
      await server.services.agents.edits.create(agentInput({ name: 'Backed Up Agent' }), { emitEvents: false });

      const created = await mutation('backup.create');
      expect(created.status).toBe(200);
      expect(created.data).toMatchObject({ agents: 1, change_cursor: expect.any(Number) });
      const file = created.data.file as string;
      expect(path.dirname(file)).toBe(path.join(server.dataDir, 'backups'));
      expect(path.basename(file)).toMatch(/^agent-directory-\d{8}T\d{6}Z\.sqlite$/);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(file).size).toBe(created.data.bytes);

      // The copy is a self-contained database holding the agent.
      const copy = new Database(file, { readonly: true });
      try {
        expect(copy.prepare('SELECT name FROM agents').all()).toEqual([{ name: 'Backed Up Agent' }]);
        expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
      } finally {
        copy.close();
      }

      expect(await query('backup.last')).toMatchObject({ status: 200, data: { ...created.data, exists: true } });
      const audit = await server.services.audit.list({ page: 1, limit: 5, action: 'backup.create' });
      // Audited under whoever the token stands for.
      const { actor } = (await query('system.whoami')).data as { actor: string };
      expect(audit.items.map((entry) => [entry.actor, entry.action, entry.entityId])).toEqual([
        [actor, 'backup.create', path.basename(file)],
      ]);
    },
  );

  it.runIf(onPostgres)('refuses on PostgreSQL, saying what to use instead, and has no last backup', async () => {
    const refused = await mutation('backup.create');
    expect(refused.status).toBe(422);
    expect(refused.error.message).toContain('this directory is on PostgreSQL: back it up with pg_dump');
    expect(await query('backup.last')).toMatchObject({ status: 200, data: null });
    expect(await server.services.audit.list({ page: 1, limit: 5, action: 'backup.create' })).toMatchObject({ total: 0 });
  });

  it('needs the admin token', async () => {
    const response = await fetch(`${server.origin}/trpc/backup.create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(401);
  });
});
