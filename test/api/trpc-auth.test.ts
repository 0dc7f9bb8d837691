import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { makeTempDir } from '../helpers/temp-dir';

const ADMIN_TOKEN = 'test-admin-token-0123456789';

let server: TestServer;
let webRoot: string;

const trpc = (procedurePath: string, init: RequestInit = {}) => fetch(`${server.origin}/trpc/${procedurePath}`, init);
const asAdmin = (token = ADMIN_TOKEN): RequestInit => ({ headers: { authorization: `Bearer ${token}` } });
const query = (input: unknown) => `?input=${encodeURIComponent(JSON.stringify(input))}`;

beforeAll(async () => {
  webRoot = makeTempDir('agentdir-web-');
  server = await startTestServer(
    { adminToken: ADMIN_TOKEN },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken, { webRoot }) },
  );
  await server.services.agents.edits.create(agentInput({ name: 'Alpha Coder' }), { emitEvents: false });
});
afterAll(async () => {
  await server.close();
  fs.rmSync(webRoot, { recursive: true, force: true });
});

describe('/trpc authentication', () => {
  it('refuses a request without a token with a 401 problem', async () => {
    const response = await trpc('system.whoami');
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await json(response)).toMatchObject({ status: 401, code: 'unauthorized', title: 'Unauthorized' });
  });

  it('refuses a wrong token, a token of another length, and other schemes', async () => {
    const attempts: RequestInit[] = [
      asAdmin('test-admin-token-0123456780'),
      asAdmin('short'),
      { headers: { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` } },
      { headers: { 'x-api-key': ADMIN_TOKEN } },
    ];
    for (const init of attempts) {
      const response = await trpc('system.whoami', init);
      expect(response.status).toBe(401);
      expect((await json(response)).code).toBe('unauthorized');
    }
  });

  it('does not take an API key for the admin token', async () => {
    const { key } = await server.services.keys.create('not an admin');
    expect((await trpc('system.whoami', asAdmin(key))).status).toBe(401);
  });

  it('answers system.whoami with the right token, as admin', async () => {
    const response = await trpc('system.whoami', asAdmin());
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ result: { data: { actor: 'admin-token' } } });
  });

  it('sends no CORS headers, not even to a preflight', async () => {
    const origin = { origin: 'https://evil.example' };
    const responses = [
      await trpc('system.whoami', { headers: { ...origin, authorization: `Bearer ${ADMIN_TOKEN}` } }),
      await trpc('system.whoami', { headers: origin }),
      await trpc('system.whoami', {
        method: 'OPTIONS',
        headers: { ...origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      }),
    ];
    for (const response of responses) {
      expect([...response.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    }
    // The public API still allows any origin, so the difference is deliberate.
    const api = await server.api('/health', { headers: origin });
    expect(api.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('/trpc errors', () => {
  it('maps AppErrors to their status and our snake_case code', async () => {
    const response = await trpc(`agents.get${query({ id: 'no-such-agent' })}`, asAdmin());
    expect(response.status).toBe(404);
    const { error } = await json(response);
    expect(error.message).toBe('Agent "no-such-agent" not found');
    expect(error.data).toMatchObject({ code: 'not_found', trpcCode: 'NOT_FOUND', httpStatus: 404, path: 'agents.get' });
    expect(error.data.stack).toBeUndefined();
  });

  it('reports invalid input with pointers and the flattened zod error', async () => {
    const response = await trpc(`agents.list${query({ limit: 1000, sort: 'popularity' })}`, asAdmin());
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.data.code).toBe('validation_failed');
    expect(error.data.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/limit', '/sort']);
    expect(Object.keys(error.data.zodError.fieldErrors).sort()).toEqual(['limit', 'sort']);
  });

  it('keeps stale edits out (409 stale_version) and audits the ones that land', async () => {
    const [agent] = (await json(await trpc('agents.list', asAdmin()))).result.data.agents;
    const current = (await json(await trpc(`agents.get${query({ id: agent.id })}`, asAdmin()))).result.data;
    const update = (expectedVersion: number) =>
      trpc('agents.update', {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: agent.id, patch: { tagline: 'Edited by a moderator' }, expectedVersion }),
      });

    const edited = await update(current.version);
    expect(edited.status).toBe(200);
    const after = (await json(edited)).result.data;
    // Only the given field changed; the others keep their values.
    expect(after).toMatchObject({ tagline: 'Edited by a moderator', description: current.description, capabilities: current.capabilities });

    const stale = await update(current.version);
    expect(stale.status).toBe(409);
    expect((await json(stale)).error.data.code).toBe('stale_version');

    const audit = (await json(await trpc(`audit.list${query({ entityId: agent.id })}`, asAdmin()))).result.data;
    expect(audit.entries).toMatchObject([{ actor: 'admin-token', action: 'agent.update' }]);
  });

  it('searches like the public API', async () => {
    const response = await trpc(`agents.search${query({ query: 'alpha codr', limit: 5 })}`, asAdmin());
    expect(response.status).toBe(200);
    const { result } = await json(response);
    expect(result.data.agents[0]).toMatchObject({ name: 'Alpha Coder' });
  });

  it('answers an unknown procedure with not_found', async () => {
    const response = await trpc('agents.nope', asAdmin());
    expect(response.status).toBe(404);
    expect((await json(response)).error.data.code).toBe('not_found');
  });
});

describe('the public OpenAPI document', () => {
  it('does not describe /trpc or /console', async () => {
    const document = await json(await server.api('/openapi.json'));
    expect(Object.keys(document.paths).filter((route) => !route.startsWith('/api/v1'))).toEqual([]);
  });
});

describe('/console', () => {
  it('says how to build the console when there is no web build', async () => {
    const response = await fetch(`${server.origin}/console`);
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(await response.text()).toContain('npm run build:web');
  });

  it('serves the build with a strict CSP, and index.html for client-side routes', async () => {
    fs.mkdirSync(path.join(webRoot, 'assets'), { recursive: true });
    fs.writeFileSync(path.join(webRoot, 'index.html'), '<!doctype html><title>console</title>');
    fs.writeFileSync(path.join(webRoot, 'assets', 'app-1234.js'), 'console.log(1)');

    for (const route of ['/console', '/console/', '/console/overview', '/console/agents/some-id']) {
      const response = await fetch(`${server.origin}${route}`);
      expect(response.status, route).toBe(200);
      expect(await response.text()).toContain('<title>console</title>');
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-eval');
    }

    const asset = await fetch(`${server.origin}/console/assets/app-1234.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain('text/javascript');
    expect(asset.headers.get('cache-control')).toContain('immutable');

    expect((await fetch(`${server.origin}/console/assets/missing.js`)).status).toBe(404);
  });

  it('never serves files outside the build', async () => {
    const outside = path.join(path.dirname(webRoot), `${path.basename(webRoot)}-outside.txt`);
    fs.writeFileSync(outside, 'CONTENT-OUTSIDE-THE-BUILD');
    for (const attempt of [
      `/console/..%2f${path.basename(outside)}`,
      `/console/../${path.basename(outside)}`,
      '/console/%2e%2e/%2e%2e/etc/passwd',
      '/console/..%5c..%5cetc%5cpasswd',
    ]) {
      const response = await fetch(`${server.origin}${attempt}`);
      expect(await response.text(), attempt).not.toContain('CONTENT-OUTSIDE-THE-BUILD');
      expect(response.status, attempt).not.toBe(500);
    }
    fs.rmSync(outside, { force: true });
  });
});

describe('/dashboard', () => {
  it('serves the dashboard page for its client-side routes, with the same strict CSP', async () => {
    fs.mkdirSync(path.join(webRoot, 'dashboard'), { recursive: true });
    fs.writeFileSync(path.join(webRoot, 'dashboard', 'index.html'), '<!doctype html><title>dashboard</title>');
    for (const route of ['/dashboard', '/dashboard/', '/dashboard/keys', '/dashboard/verify-email?token=abc']) {
      const response = await fetch(`${server.origin}${route}`);
      expect(response.status, route).toBe(200);
      expect(await response.text()).toContain('<title>dashboard</title>');
      expect(response.headers.get('content-security-policy') ?? '').toContain("script-src 'self'");
    }
    // Its scripts come from /console/assets; it serves no files of its own, nor the console's page.
    expect((await fetch(`${server.origin}/dashboard/index.html`)).status).toBe(404);
    expect((await fetch(`${server.origin}/dashboard/assets/app-1234.js`)).status).toBe(404);
  });
});
