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
