import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { createConfig } from '../../src-api/config';
import { openDatabase, type Db } from '../../src-api/db/client';
import { createServices, type Services } from '../../src-api/services';
import { agentInput, makeTempDir, startTestServer, type TestServer } from '../helpers/test-server';
import { trpcClient } from '../helpers/trpc';
import path from 'node:path';

/** audit.* over real HTTP with the admin token: filters, paging, one entry, the filter choices. */
const ADMIN_TOKEN = 'test-admin-token-audit-012345678';

let server: TestServer;
let agentId: string;
let keyId: string;

const { query, mutation } = trpcClient(() => server.origin, ADMIN_TOKEN);

const list = async (input: Record<string, unknown> = {}) => {
  const { status, body } = await query('audit.list', input);
  expect(status, JSON.stringify(body)).toBe(200);
  return body.result.data as { entries: Array<Record<string, unknown>>; page: number; limit: number; total: number };
};

beforeAll(async () => {
  server = await startTestServer(
    { adminToken: ADMIN_TOKEN },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken) },
  );
  const agent = await server.services.agents.edits.create(agentInput({ name: 'Audited Agent' }), { emitEvents: false });
  agentId = agent.id;
  const current = (await query('agents.get', { id: agentId })).body.result.data;
  expect((await mutation('agents.update', { id: agentId, patch: { tagline: 'Edited' }, expectedVersion: current.version })).status).toBe(
    200,
  );
  keyId = (await mutation('keys.create', { name: 'audit test key' })).body.result.data.id;
  await mutation('keys.revoke', { id: keyId });
  // Another actor: the CLI.
  await server.services.keys.create('from the cli');
});
afterAll(() => server.close());

describe('audit.list', () => {
  it('lists newest first: who, what, which entity, before and after', async () => {
    const { entries, total } = await list();
    expect(total).toBe(4);
    expect(entries.map((entry) => entry.action)).toEqual(['key.create', 'key.revoke', 'key.create', 'agent.update']);
    const update = entries[3]!;
    expect(update).toMatchObject({ actor: 'admin-token', entityType: 'agent', entityId: agentId, createdAt: expect.stringMatching(/Z$/) });
    expect(update.before).toMatchObject({ tagline: 'Audited Agent does things' });
    expect(update.after).toMatchObject({ tagline: 'Edited' });
  });

  it('filters by actor, action, entity type and entity id, combined', async () => {
    expect((await list({ actor: 'cli' })).entries.map((entry) => entry.action)).toEqual(['key.create']);
    expect((await list({ action: 'key.revoke' })).entries.map((entry) => entry.entityId)).toEqual([keyId]);
    expect((await list({ entityType: 'agent' })).total).toBe(1);
    expect((await list({ entityType: 'api_key', actor: 'admin-token' })).total).toBe(2);
    expect((await list({ entityType: 'api_key', actor: 'admin-token', action: 'agent.update' })).total).toBe(0);
    expect((await list({ entityId: keyId })).total).toBe(2);
  });

  it('finds entries by any part of the entity id, case-insensitively', async () => {
    const part = agentId.slice(3, 12).toUpperCase();
    expect((await list({ q: part })).entries.map((entry) => entry.entityId)).toEqual([agentId]);
    expect((await list({ q: 'no-such-id' })).total).toBe(0);
    // "_" is a character, not LIKE's wildcard: every key id has one, no agent id does.
    expect((await list({ q: '_' })).entries.every((entry) => entry.entityType === 'api_key')).toBe(true);
  });

  it('pages, with the total of all matches', async () => {
    const first = await list({ limit: 3 });
    const second = await list({ limit: 3, page: 2 });
    expect(first).toMatchObject({ page: 1, limit: 3, total: 4 });
    expect(first.entries).toHaveLength(3);
    expect(second.entries).toHaveLength(1);
    expect(new Set([...first.entries, ...second.entries].map((entry) => entry.id)).size).toBe(4);
  });

  it('refuses bad filters with validation_failed and pointers', async () => {
    const bad = await query('audit.list', { from: 'yesterday', limit: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.code).toBe('validation_failed');
    expect(bad.body.error.data.errors.map((error: { pointer: string }) => error.pointer).sort()).toEqual(['/from', '/limit']);
    const backwards = await query('audit.list', { from: '2025-02-01T00:00:00Z', to: '2025-01-01T00:00:00Z' });
    expect(backwards.status).toBe(400);
    expect(backwards.body.error.data.errors[0].pointer).toBe('/to');
  });
});

describe('audit.get and audit.facets', () => {
  it('returns one entry, and not_found for an unknown id', async () => {
    const [newest] = (await list({ limit: 1 })).entries;
    expect((await query('audit.get', { id: newest!.id })).body.result.data).toEqual(newest);
    const missing = await query('audit.get', { id: 'aud_missing' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.data.code).toBe('not_found');
  });

  it('lists the actors, actions and entity types that occur, sorted', async () => {
    expect((await query('audit.facets')).body.result.data).toEqual({
      actors: ['admin-token', 'cli'],
      actions: ['agent.update', 'key.create', 'key.revoke'],
      entityTypes: ['agent', 'api_key'],
    });
  });

  it('needs the admin token', async () => {
    expect((await fetch(`${server.origin}/trpc/audit.list`)).status).toBe(401);
    expect((await fetch(`${server.origin}/trpc/audit.facets`)).status).toBe(401);
  });
});

describe('the time range (service, with a clock the test moves)', () => {
  let db: Db;
  let services: Services;
  let now = new Date('2025-01-01T00:00:00.000Z');

  beforeAll(async () => {
    const dataDir = makeTempDir();
    db = openDatabase(path.join(dataDir, 'audit.sqlite'));
    services = createServices({ db, config: createConfig({ dataDir }), clock: { now: () => now } });
    for (const iso of ['2025-01-01T09:00:00.000Z', '2025-01-02T09:00:00.000Z', '2025-01-03T09:00:00.000Z']) {
      now = new Date(iso);
      await services.keys.create(`key of ${iso.slice(0, 10)}`, 'mod');
    }
  });
  afterAll(() => db.$client.close());

  const days = async (query: { from?: string; to?: string }) =>
    (await services.audit.list({ page: 1, limit: 10, ...query })).items.map((entry) => entry.createdAt.slice(0, 10));

  it('includes "from" and excludes "to"', async () => {
    expect(await days({ from: '2025-01-02T09:00:00.000Z' })).toEqual(['2025-01-03', '2025-01-02']);
    expect(await days({ to: '2025-01-02T09:00:00.000Z' })).toEqual(['2025-01-01']);
    expect(await days({ from: '2025-01-01T12:00:00.000Z', to: '2025-01-03T00:00:00.000Z' })).toEqual(['2025-01-02']);
  });
});
