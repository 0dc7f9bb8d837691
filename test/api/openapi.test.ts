import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, type TestServer } from '../helpers/test-server';

let server: TestServer;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let document: any;

beforeAll(async () => {
  server = await startTestServer();
  const response = await server.api('/openapi.json');
  expect(response.status).toBe(200);
  document = await json(response);
});
afterAll(() => server.close());

/** "/api/v1/agents/:id" → "/agents/{id}" */
const toOpenApiPath = (url: string) => url.replace(/^\/api\/v1/, '').replace(/:(\w+)/g, '{$1}');

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toMatch(/^3\.1\./);
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes exactly the routes the server serves', () => {
    const served = new Set(
      server.app.apiRouteTable
        .filter((route) => !route.hidden && route.method !== 'HEAD' && route.method !== 'OPTIONS')
        .map((route) => `${route.method} ${toOpenApiPath(route.url)}`),
    );
    const documented = new Set<string>();
    for (const [path, operations] of Object.entries<Record<string, unknown>>(document.paths)) {
      for (const method of Object.keys(operations)) {
        if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) documented.add(`${method.toUpperCase()} ${toOpenApiPath(path)}`);
      }
    }
    expect([...documented].sort()).toEqual([...served].sort());
  });

  it('covers every endpoint of the contract', () => {
    const contract = [
      'GET /health',
      'GET /stats',
      'GET /agents',
      'GET /agents/search',
      'POST /agents/search',
      'GET /agents/bulk',
      'GET /agents/{id}',
      'GET /agents/{id}/reviews',
      'POST /agents/{id}/reviews',
      'GET /agents/{id}/connections',
      'POST /submit',
      'GET /submissions/{id}',
      'POST /claims',
      'POST /claims/{id}/verify',
      'POST /newsletter',
      'POST /newsletter/confirm',
      'POST /newsletter/unsubscribe',
      'GET /marketing/posts',
      'GET /marketing/ab-tests',
      'GET /marketing/metrics',
    ];
    const documented = Object.entries<Record<string, unknown>>(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${toOpenApiPath(path)}`),
    );
    for (const endpoint of contract) expect(documented).toContain(endpoint);
  });

  it('gives every operation a summary and documents its error responses', () => {
    for (const [path, operations] of Object.entries<Record<string, { summary?: string; responses?: Record<string, unknown> }>>(
      document.paths,
    )) {
      for (const [method, operation] of Object.entries(operations)) {
        expect(operation.summary, `${method} ${path}`).toBeTruthy();
        const codes = Object.keys(operation.responses ?? {});
        // Creations answer 201, accepted work (sign-up, reset, newsletter) 202, removals 204, the rest 200.
        expect(codes.filter((code) => /^2\d\d$/.test(code)).length, `${method} ${path}: ${codes.join(',')}`).toBeGreaterThan(0);
      }
    }
  });

  it.each(['/docs', '/docs/'])('serves a browsable reference at /api/v1%s whose assets all load', async (path) => {
    const page = `${server.apiBaseUrl}${path}`;
    const response = await fetch(page, { redirect: 'follow' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    const html = await response.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => new URL(match[1]!, page).href);
    expect(assets.some((url) => url.endsWith('/swagger-ui-bundle.js'))).toBe(true);
    for (const url of assets) {
      expect(new URL(url).pathname, url).toMatch(/^\/api\/v1\/docs\/static\//);
      const asset = await fetch(url);
      await asset.arrayBuffer(); // read to the end, so the connection goes idle and the server can close
      expect(asset.status, url).toBe(200);
    }
  });
});

describe('parameter constraints', () => {
  it('documents what the server enforces: min_trust 0–100, bulk ids, http(s) URLs', async () => {
    const parameter = (path: string, name: string) =>
      document.paths[path].get.parameters.find((p: { name: string }) => p.name === name).schema;
    expect(parameter('/api/v1/agents/search', 'min_trust')).toMatchObject({ type: 'number', minimum: 0, maximum: 100 });
    expect(parameter('/api/v1/agents/search', 'capabilities').anyOf[1]).toMatchObject({ type: 'array', maxItems: 20 });
    const ids = parameter('/api/v1/agents/bulk', 'ids');
    expect(ids.anyOf[0]).toMatchObject({ type: 'string', pattern: expect.any(String) });
    expect(ids.anyOf[1]).toMatchObject({ type: 'array', maxItems: 50 });
    const body = document.paths['/api/v1/submit'].post.requestBody.content['application/json'].schema;
    const submit = body.$ref ? document.components.schemas[body.$ref.split('/').pop()] : body;
    expect(submit.properties.source_url).toMatchObject({ format: 'uri', pattern: expect.stringContaining('[Hh][Tt][Tt][Pp][Ss]?://') });
    expect(submit.properties.contact_email).toMatchObject({ format: 'email' });
    // What the pattern refuses, the server refuses: WHATWG would read "http:x" as http://x/.
    for (const sourceUrl of ['http:example.com/agent', 'https:/example.com/agent', 'ftp://example.com/agent']) {
      const response = await server.post('/submit', { name: 'Odd URL', tagline: 'Has one', source_url: sourceUrl });
      expect(response.status, sourceUrl).toBe(400);
    }
  });

  it('refuses every value just outside a documented bound, enum or pattern of a public GET parameter with a 400', async () => {
    const probes: string[] = [];
    for (const [path, item] of Object.entries<Record<string, { parameters?: unknown[] }>>(document.paths)) {
      const operation = item.get;
      if (!operation || path.startsWith('/api/v1/me')) continue;
      const parameters = (operation.parameters ?? []) as Array<{ name: string; in: string; schema: Record<string, unknown> }>;
      const valid: Record<string, string> = {};
      for (const p of parameters) if (p.in === 'path') valid[p.name] = 'some-id';
      const bad = (p: (typeof parameters)[number]): string[] => {
        const s = p.schema;
        const out: string[] = [];
        if (typeof s.maximum === 'number') out.push(String(s.maximum + 1));
        if (typeof s.minimum === 'number') out.push(String(s.minimum - (s.type === 'integer' ? 1 : 0.5)));
        if (Array.isArray(s.enum)) out.push('not-one-of-them');
        if (typeof s.pattern === 'string') out.push('bad!value');
        if (typeof s.maxLength === 'number') out.push('x'.repeat(s.maxLength + 1));
        return out;
      };
      for (const p of parameters) {
        for (const value of bad(p)) {
          const params = { ...valid, [p.name]: value };
          let url = path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params[name]!));
          if (p.in === 'query') url += `?${new URLSearchParams({ [p.name]: value })}`;
          probes.push(`${p.name}=${value.slice(0, 20)}`);
          const response = await fetch(`${new URL(server.apiBaseUrl).origin}${url}`);
          expect(response.status, `GET ${url}`).toBe(400);
          expect((await json(response)).code, `GET ${url}`).toBe('validation_failed');
        }
      }
    }
    expect(probes.length).toBeGreaterThan(20);
  });
});
