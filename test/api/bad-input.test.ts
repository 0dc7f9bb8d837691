import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableCounts } from '../helpers/store-rows';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';

/**
 * Every kind of bad input a public API meets, against every write endpoint
 * and the id-taking reads: each must get its 4xx problem+json (never a 5xx,
 * a stack trace or a path) and must leave the database exactly as it was.
 */
let server: TestServer;
let agentId: string;

beforeAll(async () => {
  server = await startTestServer();
  agentId = (await server.services.agents.edits.create(agentInput({ name: 'Target Agent' }), { emitEvents: false })).id;
});
afterAll(() => server.close());

interface Case {
  name: string;
  method: 'GET' | 'POST';
  path: string | (() => string);
  /** A string is sent as-is; anything else as JSON. */
  body?: unknown;
  contentType?: string | null;
  status: number;
  code?: string;
  /** JSON pointer expected in `errors`, for validation failures. */
  pointer?: string;
}

const json10k = 'x'.repeat(10_240);
const twoMiB = JSON.stringify({ rating: 5, comment: 'y'.repeat(2 * 1024 * 1024) });
const deeplyNested = '['.repeat(100_000) + ']'.repeat(100_000);

const reviewPath = () => `/agents/${agentId}/reviews`;

const cases: Case[] = [
  // Malformed and non-JSON bodies
  { name: 'malformed JSON', method: 'POST', path: reviewPath, body: '{"rating": 5,', status: 400, code: 'malformed_json' },
  {
    name: 'JSON with trailing garbage',
    method: 'POST',
    path: '/newsletter',
    body: '{"email":"a@b.co"} x',
    status: 400,
    code: 'malformed_json',
  },
  { name: 'deeply nested JSON', method: 'POST', path: '/newsletter', body: deeplyNested, status: 400 },
  {
    name: 'text/plain body',
    method: 'POST',
    path: '/newsletter',
    body: 'email=a@b.co',
    contentType: 'text/plain',
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: 'form-encoded body',
    method: 'POST',
    path: '/submit',
    body: 'name=x&tagline=y',
    contentType: 'application/x-www-form-urlencoded',
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: 'XML body',
    method: 'POST',
    path: '/claims',
    body: '<claim/>',
    contentType: 'application/xml',
    status: 415,
    code: 'unsupported_media_type',
  },
  { name: 'body over 1 MiB', method: 'POST', path: reviewPath, body: twoMiB, status: 413, code: 'payload_too_large' },
  // Wrong shapes and types
  { name: 'array instead of object', method: 'POST', path: '/newsletter', body: [], status: 400, code: 'validation_failed' },
  { name: 'JSON null body', method: 'POST', path: '/newsletter', body: 'null', status: 400, code: 'validation_failed' },
  { name: 'missing body', method: 'POST', path: '/submit', body: undefined, status: 400, code: 'validation_failed' },
  {
    name: 'rating as a string',
    method: 'POST',
    path: reviewPath,
    body: { rating: '5' },
    status: 400,
    code: 'validation_failed',
    pointer: '/rating',
  },
  { name: 'rating as a fraction', method: 'POST', path: reviewPath, body: { rating: 3.5 }, status: 400, pointer: '/rating' },
  { name: 'rating out of range', method: 'POST', path: reviewPath, body: { rating: 6 }, status: 400, pointer: '/rating' },
  { name: 'rating missing', method: 'POST', path: reviewPath, body: { comment: 'great' }, status: 400, pointer: '/rating' },
  { name: 'unknown field', method: 'POST', path: reviewPath, body: { rating: 4, stars: 4 }, status: 400, code: 'validation_failed' },
  { name: 'comment of 10 KB', method: 'POST', path: reviewPath, body: { rating: 4, comment: json10k }, status: 400, pointer: '/comment' },
  { name: 'reviewer name of 10 KB', method: 'POST', path: reviewPath, body: { rating: 4, reviewer_name: json10k }, status: 400 },
  { name: 'e-mail that is not one', method: 'POST', path: '/newsletter', body: { email: 'not-an-email' }, status: 400, pointer: '/email' },
  { name: 'e-mail as a number', method: 'POST', path: '/newsletter', body: { email: 42 }, status: 400, pointer: '/email' },
  {
    name: 'submission without source_url',
    method: 'POST',
    path: '/submit',
    body: { name: 'X', tagline: 'Y' },
    status: 400,
    pointer: '/source_url',
  },
  {
    name: 'javascript: URL',
    method: 'POST',
    path: '/submit',
    body: { name: 'X', tagline: 'Y', source_url: 'javascript:alert(1)' },
    status: 400,
    pointer: '/source_url',
  },
  {
    name: 'relative URL',
    method: 'POST',
    path: '/submit',
    body: { name: 'X', tagline: 'Y', source_url: '/x' },
    status: 400,
    pointer: '/source_url',
  },
  { name: 'ftp URL', method: 'POST', path: '/submit', body: { name: 'X', tagline: 'Y', source_url: 'ftp://example.com/x' }, status: 400 },
  {
    name: 'unknown agent type',
    method: 'POST',
    path: '/submit',
    body: { name: 'X', tagline: 'Y', source_url: 'https://example.com/x', type: 'robot' },
    status: 400,
    pointer: '/type',
  },
  {
    name: 'name of 10 KB',
    method: 'POST',
    path: '/submit',
    body: { name: json10k, tagline: 'Y', source_url: 'https://example.com/y' },
    status: 400,
  },
  { name: 'claim with missing fields', method: 'POST', path: '/claims', body: { agent_id: 'x' }, status: 400, code: 'validation_failed' },
  { name: 'search limit too large', method: 'POST', path: '/agents/search', body: { query: 'x', limit: 1000 }, status: 400 },
  { name: 'search query as a number', method: 'POST', path: '/agents/search', body: { query: 5 }, status: 400, pointer: '/query' },
  { name: 'search with unknown field', method: 'POST', path: '/agents/search', body: { query: 'x', sort: 'name' }, status: 400 },
  // Odd ids
  { name: 'path traversal id', method: 'GET', path: '/agents/..%2Fx', status: 400 },
  { name: 'broken percent-encoding', method: 'GET', path: '/agents/%E0%A4%A', status: 400 },
  { name: 'NUL byte id', method: 'GET', path: '/agents/abc%00def', status: 400 },
  { name: 'SQL-looking id', method: 'GET', path: `/agents/${encodeURIComponent("x' OR '1'='1")}`, status: 400 },
  { name: 'id of 10 KB', method: 'GET', path: `/agents/${json10k}`, status: 414 },
  { name: 'review for a traversal id', method: 'POST', path: '/agents/..%2F..%2Fetc/reviews', body: { rating: 5 }, status: 400 },
  {
    name: 'review for a SQL-looking id',
    method: 'POST',
    path: `/agents/${encodeURIComponent('1;DROP TABLE agents')}/reviews`,
    body: { rating: 5 },
    status: 400,
  },
  {
    name: 'review for an unknown agent',
    method: 'POST',
    path: '/agents/no-such-agent/reviews',
    body: { rating: 5 },
    status: 404,
    code: 'not_found',
  },
  {
    name: 'claim for an SQL-looking agent id',
    method: 'POST',
    path: '/claims',
    body: { agent_id: "' OR 1=1 --", claimant_name: 'A', claimant_email: 'a@b.co' },
    status: 400,
  },
  { name: 'verify an odd claim id', method: 'POST', path: '/claims/%00/verify', status: 400 },
  { name: 'connections of a NUL id', method: 'GET', path: '/agents/%00/connections', status: 400 },
  // Query strings
  { name: 'limit 0', method: 'GET', path: '/agents?limit=0', status: 400 },
  { name: 'limit 101', method: 'GET', path: '/agents?limit=101', status: 400 },
  { name: 'page 0', method: 'GET', path: '/agents?page=0', status: 400 },
  { name: 'limit not a number', method: 'GET', path: '/agents?limit=abc', status: 400 },
  {
    name: 'bulk with 51 ids',
    method: 'GET',
    path: `/agents/bulk?ids=${Array.from({ length: 51 }, (_, i) => `a${i}`).join(',')}`,
    status: 400,
    code: 'too_many_ids',
  },
  { name: 'bulk with an odd id', method: 'GET', path: '/agents/bulk?ids=a,..%2Fb', status: 400 },
  { name: 'search min_trust over 100', method: 'GET', path: '/agents/search?q=x&min_trust=500', status: 400 },
  { name: 'unknown route', method: 'GET', path: '/agents/x/y/z', status: 404, code: 'not_found' },
];

describe('bad input', () => {
  it.each(cases)('$name → $status', async (testCase) => {
    const before = await tableCounts(server.services.store);
    const path = typeof testCase.path === 'function' ? testCase.path() : testCase.path;
    const headers: Record<string, string> = {};
    let body: string | undefined;
    if (testCase.body !== undefined) {
      body = typeof testCase.body === 'string' ? testCase.body : JSON.stringify(testCase.body);
      headers['content-type'] = testCase.contentType ?? 'application/json';
    }
    const response = await server.api(path, { method: testCase.method, headers, body });
    const text = await response.text();

    expect(response.status, text.slice(0, 300)).toBe(testCase.status);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    const problem = JSON.parse(text);
    expect(problem).toMatchObject({
      status: testCase.status,
      type: expect.any(String),
      title: expect.any(String),
      detail: expect.any(String),
    });
    expect(problem.code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    if (testCase.code) expect(problem.code).toBe(testCase.code);
    if (testCase.pointer) expect(problem.errors.map((e: { pointer: string }) => e.pointer)).toContain(testCase.pointer);
    // No internals leak: stack frames, file paths, SQL.
    expect(text).not.toMatch(/node_modules|\/work\/|\bat \S+ \(|SQLITE|SELECT |src-api/);
    expect(await tableCounts(server.services.store)).toEqual(before);
  });

  it('still serves normally afterwards', async () => {
    const response = await server.api(`/agents/${agentId}`);
    expect(response.status).toBe(200);
    expect((await json(response)).id).toBe(agentId);
  });
});
