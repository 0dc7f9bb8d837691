import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { json, startTestServer, type TestServer } from '../helpers/test-server';
import { trpcClient } from '../helpers/trpc';

/** keys.* over real HTTP with the admin token, as the console's web build calls it, and the keys against the public API. */
const ADMIN_TOKEN = 'test-admin-token-keys-0123456789';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(
    { adminToken: ADMIN_TOKEN, rateLimit: { enabled: true } },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken) },
  );
});
afterAll(() => server.close());

const { query, mutation } = trpcClient(() => server.origin, ADMIN_TOKEN);

const listAgents = (key: string) => server.api('/agents?limit=1', { headers: { 'x-api-key': key } });

describe('keys.create', () => {
  it('issues a key once: the answer has the key, the list only its prefix', async () => {
    const { status, body } = await mutation('keys.create', { name: '  Partner integration  ' });
    expect(status).toBe(200);
    const created = body.result.data;
    expect(created).toMatchObject({ name: 'Partner integration', revoked_at: null, last_used_at: null });
    expect(created.id).toMatch(/^key_/);
    expect(created.key).toMatch(/^adk_[A-Za-z0-9_-]{20,}$/);
    expect(created.key.startsWith(created.prefix)).toBe(true);
    expect(created.created_at).toMatch(/Z$/);

    const listed = (await query('keys.list')).body.result.data.keys;
    const entry = listed.find((key: { id: string }) => key.id === created.id);
    expect(entry).toEqual({
      id: created.id,
      name: 'Partner integration',
      prefix: created.prefix,
      created_at: created.created_at,
      revoked_at: null,
      last_used_at: null,
    });
    // Neither the key nor its hash ever comes back.
    expect(JSON.stringify(listed)).not.toContain(created.key);
    expect(JSON.stringify(listed)).not.toMatch(/hash/i);
  });

  it.each([
    ['an empty name', { name: '   ' }, '/name'],
    ['a name over 100 characters', { name: 'x'.repeat(101) }, '/name'],
    ['no name', {}, '/name'],
    ['an unknown field', { name: 'ok', scope: 'all' }, '/'],
  ])('refuses %s with validation_failed and issues nothing', async (_what, input, pointer) => {
    const before = (await query('keys.list')).body.result.data.keys.length;
    const { status, body } = await mutation('keys.create', input);
    expect(status).toBe(400);
    expect(body.error.data.code).toBe('validation_failed');
    expect(body.error.data.errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer);
    expect((await query('keys.list')).body.result.data.keys.length).toBe(before);
  });
});

describe('a key issued in the console, against the public API', () => {
  it('reads with the keyed limit, records last use, and stops with invalid_api_key once revoked', async () => {
    const created = (await mutation('keys.create', { name: 'lifecycle' })).body.result.data;

    const ok = await listAgents(created.key);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('ratelimit-policy')).toBe('"reads-key";q=1000;w=60');
    // Without a key the same endpoint spends the anonymous budget.
    expect((await server.api('/agents?limit=1')).headers.get('ratelimit-policy')).toBe('"reads";q=100;w=60');

    const used = (await query('keys.list')).body.result.data.keys.find((key: { id: string }) => key.id === created.id);
    expect(used.last_used_at).toMatch(/Z$/);

    const revoked = await mutation('keys.revoke', { id: created.id });
    expect(revoked.status).toBe(200);
    expect(revoked.body.result.data).toMatchObject({ id: created.id, revoked_at: expect.stringMatching(/Z$/) });

    const refused = await listAgents(created.key);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(await json(refused)).toMatchObject({ status: 401, code: 'invalid_api_key' });
    // As a bearer token too: never a silent downgrade to anonymous.
    const bearer = await server.api('/agents?limit=1', { headers: { authorization: `Bearer ${created.key}` } });
    expect(bearer.status).toBe(401);
  });
});

describe('keys.revoke', () => {
  it('is idempotent: revoking again keeps the first revocation time and audits once', async () => {
    const created = (await mutation('keys.create', { name: 'twice' })).body.result.data;
    const first = (await mutation('keys.revoke', { id: created.id })).body.result.data;
    const second = await mutation('keys.revoke', { id: created.id });
    expect(second.status).toBe(200);
    expect(second.body.result.data.revoked_at).toBe(first.revoked_at);
    const audit = (await query('audit.list', { entityId: created.id })).body.result.data;
    expect(audit.entries.map((entry: { action: string }) => entry.action)).toEqual(['key.revoke', 'key.create']);
  });

  it('answers not_found for an unknown key and validation_failed for a malformed id', async () => {
    const unknown = await mutation('keys.revoke', { id: 'key_doesnotexist' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.data.code).toBe('not_found');
    const malformed = await mutation('keys.revoke', { id: '../etc' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.data.code).toBe('validation_failed');
  });

  it('audits issue and revoke with the admin as actor, before and after', async () => {
    const created = (await mutation('keys.create', { name: 'audited' })).body.result.data;
    await mutation('keys.revoke', { id: created.id });
    const entries = (await query('audit.list', { entityType: 'api_key', entityId: created.id })).body.result.data.entries;
    const [revoke, create] = entries;
    expect(create).toMatchObject({ actor: 'admin-token', action: 'key.create', entityType: 'api_key', before: null });
    expect(create.after).toMatchObject({ id: created.id, name: 'audited', revoked_at: null });
    expect(revoke).toMatchObject({ actor: 'admin-token', action: 'key.revoke' });
    expect(revoke.before).toMatchObject({ revoked_at: null });
    expect(revoke.after.revoked_at).toMatch(/Z$/);
    // The audit log never holds the key itself.
    expect(JSON.stringify(entries)).not.toContain(created.key);
  });
});

describe('without the admin token', () => {
  it('lists, issues and revokes nothing', async () => {
    const list = await fetch(`${server.origin}/trpc/keys.list`);
    expect(list.status).toBe(401);
    const create = await fetch(`${server.origin}/trpc/keys.create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'sneaky' }),
    });
    expect(create.status).toBe(401);
    expect((await server.services.keys.list()).some((key) => key.name === 'sneaky')).toBe(false);
  });
});
