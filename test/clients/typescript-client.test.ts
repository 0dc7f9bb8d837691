import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentDirectoryError,
  createAgentDirectoryClient,
  isAgentDirectoryError,
  MAX_BULK_IDS,
  retryAfterSeconds,
  signWebhook,
  verifyWebhook,
  type Agent,
  type AgentDirectoryClient,
  type NewsletterSignUp,
  type NewsletterSubscription,
} from '../../clients/typescript/src/index';
import { generateSchemaSource, SCHEMA_FILE } from '../../clients/typescript/schema-source.mjs';
import { newsletterTokenFromOutbox } from '../helpers/newsletter';
import { startServeProcess } from '../helpers/serve-process';
import { makeTempDir } from '../helpers/temp-dir';
import { agentInput, startTestServer, type TestServer } from '../helpers/test-server';

/** A local origin: serves `files` on GET, records POSTs (the claim's well-known file, webhook deliveries). */
interface LocalSite {
  origin: string;
  files: Map<string, string>;
  posts: { headers: http.IncomingHttpHeaders; body: Buffer }[];
  close(): Promise<void>;
}

async function startSite(): Promise<LocalSite> {
  const files = new Map<string, string>();
  const posts: LocalSite['posts'] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'POST') {
        posts.push({ headers: request.headers, body: Buffer.concat(chunks) });
        response.writeHead(200).end();
        return;
      }
      const body = files.get((request.url ?? '/').split('?')[0] ?? '/');
      response.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/plain' }).end(body ?? 'not found');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    files,
    posts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Records every request a client sends (method and URL). */
function spyFetch() {
  const calls: { method: string; url: string }[] = [];
  const fetch = (request: Request) => {
    calls.push({ method: request.method, url: request.url });
    return globalThis.fetch(request);
  };
  return { calls, fetch };
}

async function expectProblem(promise: Promise<unknown>, status: number, code: string): Promise<AgentDirectoryError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(isAgentDirectoryError(error), `expected an AgentDirectoryError, got ${String(error)}`).toBe(true);
  const problem = error as AgentDirectoryError;
  expect(problem.status).toBe(status);
  expect(problem.code).toBe(code);
  expect(problem.title).toBeTruthy();
  expect(problem.detail).toBeTruthy();
  return problem;
}

const SECRET = 'whsec_test_secret';
const BODY =
  '{"id":"evt_01","event":"agent.registered","timestamp":"2025-01-01T00:00:00Z",' +
  '"data":{"agent_id":"agt_1","name":"Demo","source_url":"https://example.com/demo"}}';
// The same known-answer vector as clients/python/tests/test_webhooks.py (computed with Python's hmac).
const SIGNATURE = 'sha256=a21bfada495b3a78716c43470e637274b42a8139424fea88dd0736062b8116a9';

let server: TestServer;
let site: LocalSite;
let client: AgentDirectoryClient;
let sample: Agent[];

beforeAll(async () => {
  server = await startTestServer({ demoData: true, allowPrivateUrls: true });
  site = await startSite();
  client = createAgentDirectoryClient({ baseUrl: server.apiBaseUrl });
  sample = (await client.list({ limit: 100 })).agents;
});

afterAll(async () => {
  await server?.close();
  await site?.close();
});

describe('TypeScript client: schema', () => {
  it('the committed schema.d.ts matches the live OpenAPI document', async () => {
    const document = await (await fetch(`${server.apiBaseUrl}/openapi.json`)).json();
    const expected = await generateSchemaSource(document);
    const committed = fs.readFileSync(SCHEMA_FILE, 'utf8');
    const [a, b] = [committed.split('\n'), expected.split('\n')];
    const line = a.findIndex((text, i) => text !== b[i]);
    const where =
      committed === expected
        ? ''
        : ` (first difference at line ${line < 0 ? a.length + 1 : line + 1}: ${JSON.stringify(b[line < 0 ? a.length : line] ?? '<end of file>')})`;
    expect(
      committed === expected,
      `clients/typescript/src/schema.d.ts is stale: run \`node clients/typescript/generate.mjs\`${where}`,
    ).toBe(true);
  });
});

describe('TypeScript client: directory', () => {
  it('health and stats', async () => {
    const health = await client.health();
    expect(health.status).toBe('ok');
    expect(health.version).toMatch(/^\d+\.\d+\.\d+$/);
    const stats = await client.stats();
    expect(stats.total_agents).toBe(health.agents_indexed);
    expect(Object.values(stats.by_type).reduce((a, b) => a + b, 0)).toBe(stats.total_agents);
  });

  it('accepts the origin or the API base as baseUrl', async () => {
    const fromOrigin = createAgentDirectoryClient({ baseUrl: server.origin });
    expect((await fromOrigin.health()).status).toBe('ok');
    const withSlash = createAgentDirectoryClient({ baseUrl: `${server.apiBaseUrl}/` });
    expect((await withSlash.health()).status).toBe('ok');
  });

  it('get, and 404 / 400 as problem details', async () => {
    const first = sample[0]!;
    const agent = await client.get(first.id);
    expect(agent).toEqual(first);
    expect(agent.rating.count).toBeGreaterThanOrEqual(0);
    const notFound = await expectProblem(client.get('no-such-agent'), 404, 'not_found');
    expect(notFound.type).toBeTruthy();
    expect(notFound.response?.headers.get('content-type')).toContain('application/problem+json');
    await expectProblem(client.get('bad id!'), 400, 'validation_failed');
  });

  it('list pages and listAll follows every page', async () => {
    const page = await client.list({ limit: 7, page: 2, sort: 'name', order: 'asc' });
    expect(page.page).toBe(2);
    expect(page.agents).toHaveLength(7);
    const spy = spyFetch();
    const spied = createAgentDirectoryClient({ baseUrl: server.apiBaseUrl, fetch: spy.fetch });
    const all: Agent[] = [];
    for await (const agent of spied.listAll({ limit: 100 })) all.push(agent);
    expect(all).toHaveLength(page.total);
    expect(new Set(all.map((a) => a.id)).size).toBe(page.total);
    expect(spy.calls).toHaveLength(Math.ceil(page.total / 100));
    await expectProblem(client.list({ sort: 'popularity' as 'name' }), 400, 'validation_failed');
  });

  it('bulk splits 120 ids into 3 calls and keeps order and missing ids', async () => {
    const real = (await client.list({ limit: 100 })).agents
      .concat((await client.list({ limit: 100, page: 2 })).agents)
      .slice(0, 110)
      .map((a) => a.id);
    const fake = Array.from({ length: 10 }, (_, i) => `missing-${i}`);
    const ids = real.flatMap((agentId, i) => (i % 11 === 5 ? [agentId, fake[Math.floor(i / 11)]!] : [agentId]));
    expect(ids).toHaveLength(120);
    const spy = spyFetch();
    const spied = createAgentDirectoryClient({ baseUrl: server.apiBaseUrl, fetch: spy.fetch });
    const result = await spied.bulk(ids);
    expect(spy.calls).toHaveLength(Math.ceil(120 / MAX_BULK_IDS));
    expect(result.agents.map((a) => a.id)).toEqual(real);
    expect(result.missing).toEqual(fake);
    expect(await spied.bulk([])).toEqual({ agents: [], missing: [] });
  });

  it('search: GET without filters, POST with them', async () => {
    const target = sample[4]!;
    const spy = spyFetch();
    const spied = createAgentDirectoryClient({ baseUrl: server.apiBaseUrl, fetch: spy.fetch });
    const plain = await spied.search(target.name, { limit: 5 });
    expect(spy.calls[0]!.method).toBe('GET');
    expect(plain.agents.map((a) => a.id)).toContain(target.id);
    expect(plain.agents.length).toBeLessThanOrEqual(5);
    expect(typeof plain.agents[0]!.score).toBe('number');

    const withCapability = sample.find((a) => a.capabilities.length > 0)!;
    const capability = withCapability.capabilities[0]!;
    const filtered = await spied.search(capability, { limit: 50, type: withCapability.type, min_trust: 0, capabilities: [capability] });
    expect(spy.calls[1]!.method).toBe('POST');
    expect(filtered.agents.map((a) => a.id)).toContain(withCapability.id);
    for (const hit of filtered.agents) {
      expect(hit.type).toBe(withCapability.type);
      expect(hit.capabilities.map((c) => c.toLowerCase())).toContain(capability.toLowerCase());
    }
    await expectProblem(client.search('x', { limit: 0 }), 400, 'validation_failed');
  });

  it('a body over 1 MiB is a 413 problem, not a failed fetch', async () => {
    // The server answers from the headers while fetch is still sending, then reads the rest: before it did,
    // 27 of 30 such calls to a serve process failed with EPIPE. Its own process, as a reset needs the server
    // to answer while this one is still writing (in one process they take turns).
    const serve = await startServeProcess(['--data-dir', makeTempDir(), '--no-demo-data']);
    try {
      const remote = createAgentDirectoryClient({ baseUrl: serve.api });
      const huge = 'a'.repeat(4 * 1024 * 1024);
      for (let i = 0; i < 3; i++) await expectProblem(remote.search(huge, { type: 'coding' }), 413, 'payload_too_large');
    } finally {
      await serve.stop();
    }
  });

  it('connections', async () => {
    const agent = sample[2]!;
    const result = await client.connections(agent.id, 5);
    expect(result.agent_id).toBe(agent.id);
    expect(result.connections.length).toBeGreaterThan(0);
    expect(result.connections.length).toBeLessThanOrEqual(5);
    for (const connection of result.connections) {
      expect(connection.agent.id).not.toBe(agent.id);
      expect(
        connection.shared_categories.length + connection.shared_capabilities.length + (connection.same_author ? 1 : 0),
      ).toBeGreaterThan(0);
    }
    await expectProblem(client.connections('no-such-agent'), 404, 'not_found');
  });
});

describe('TypeScript client: writes', () => {
  it('reviews: add, page through all, validation errors', async () => {
    const agent = sample[10]!;
    const before = (await client.reviews(agent.id)).total;
    const review = await client.addReview(agent.id, { rating: 5, comment: 'Great', reviewer_name: 'Ada' });
    expect(review).toMatchObject({ agent_id: agent.id, rating: 5, comment: 'Great', reviewer_name: 'Ada' });
    await client.addReview(agent.id, { rating: 2 });
    await client.addReview(agent.id, { rating: 4, comment: 'Fine' });
    const all = [];
    for await (const item of client.allReviews(agent.id, { limit: 2 })) all.push(item);
    expect(all).toHaveLength(before + 3);
    expect(all.map((r) => r.id)).toContain(review.id);
    expect((await client.get(agent.id)).rating.count).toBe(agent.rating.count + 3);

    const invalid = await expectProblem(client.addReview(agent.id, { rating: 7 }), 400, 'validation_failed');
    expect(invalid.errors.map((e) => e.pointer)).toContain('/rating');
    await expectProblem(client.addReview('no-such-agent', { rating: 3 }), 404, 'not_found');
  });

  it('register and follow a submission; a known source_url is a 409', async () => {
    const url = `https://example.com/ts-client-${Date.now()}`;
    const submission = await client.register({
      name: 'TS Client Agent',
      tagline: 'Registered by the TypeScript client',
      source_url: url,
      capabilities: ['testing'],
      type: 'coding',
      contact_email: 'owner@example.com',
    });
    expect(submission.status).toBe('pending');
    expect(submission).not.toHaveProperty('contact_email');
    expect((await client.submission(submission.id)).status).toBe('pending');
    await expectProblem(client.register({ name: 'Again', tagline: 'Again', source_url: url }), 409, 'conflict');
    await expectProblem(client.register({ name: 'Copy', tagline: 'Copy', source_url: sample[0]!.source_url }), 409, 'conflict');
    const invalid = await expectProblem(client.register({ name: 'Bad', tagline: 'Bad', source_url: 'ftp://x' }), 400, 'validation_failed');
    expect(invalid.errors.map((e) => e.pointer)).toContain('/source_url');
    await expectProblem(client.submission('no-such-submission'), 404, 'not_found');
  });

  it('claim and verify through the well-known file; failures are 422 and 409', async () => {
    const row = await server.services.agents.edits.create(agentInput({ name: 'Claimable TS Agent', source_url: `${site.origin}/agent` }));
    const claim = await client.claim({ agent_id: row.id, claimant_name: 'Owner', claimant_email: 'owner@example.com' });
    expect(claim.status).toBe('pending');
    expect(claim.verification.url).toBe(`${site.origin}/.well-known/agent-directory-claim.txt`);
    expect(claim.verification.token).toBeTruthy();
    expect(await client.getClaim(claim.id)).not.toHaveProperty('verification.token');

    const failed = await expectProblem(client.verifyClaim(claim.id), 422, 'verification_failed');
    expect(failed.detail).toBeTruthy();
    expect((await client.getClaim(claim.id)).status).toBe('pending');

    site.files.set('/.well-known/agent-directory-claim.txt', `token: ${claim.verification.token}\n`);
    const verified = await client.verifyClaim(claim.id);
    expect(verified.status).toBe('verified');
    expect((await client.get(row.id)).verified).toBe(true);
    await expectProblem(client.verifyClaim(claim.id), 409, 'conflict');
    await expectProblem(client.verifyClaim('no-such-claim'), 404, 'not_found');
    await expectProblem(client.claim({ agent_id: 'no-such-agent', claimant_name: 'O', claimant_email: 'o@example.com' }), 404, 'not_found');
  });

  it('subscribe answers the same for every address; the mailed tokens confirm and unsubscribe', async () => {
    const address = `Reader.${Date.now()}@Example.com`;
    const first: NewsletterSignUp = await client.subscribe(address);
    expect(first).toEqual({ email: address, status: 'confirmation_sent' });
    const { store } = server.services;
    const confirmed: NewsletterSubscription = await client.confirmSubscription(await newsletterTokenFromOutbox(store, address, 'confirm'));
    expect(confirmed).toEqual({ email: address, status: 'subscribed' });
    // Known now: the same answer, echoing what was sent.
    expect(await client.subscribe(address.toUpperCase())).toEqual({ email: address.toUpperCase(), status: 'confirmation_sent' });
    expect(await client.unsubscribe(await newsletterTokenFromOutbox(store, address, 'unsubscribe'))).toEqual({
      email: address,
      status: 'unsubscribed',
    });
    await expectProblem(client.confirmSubscription('not-a-token'), 400, 'invalid_token');
    await expectProblem(client.subscribe('not an address'), 400, 'validation_failed');
  });
});

describe('TypeScript client: marketing', () => {
  it('posts, filters, A/B tests and metrics', async () => {
    const posts = await client.marketingPosts({ limit: 100 });
    expect(posts.page).toBe(1);
    for (const post of posts.posts) expect(post.title && post.body && post.tone && post.status).toBeTruthy();
    const tone = posts.posts[0]?.tone;
    if (tone) {
      const byTone = await client.marketingPosts({ tone, limit: 100 });
      expect(byTone.posts.every((post) => post.tone === tone)).toBe(true);
    }
    await expectProblem(client.marketingPosts({ status: 'draft' as 'published' }), 400, 'validation_failed');

    const tests = await client.abTests();
    for (const test of tests.ab_tests) {
      for (const variant of test.variants) expect(variant.conversions).toBeLessThanOrEqual(variant.impressions);
    }
    const metrics = await client.marketingMetrics();
    const byStatus = Object.values(metrics.publish_counts.by_status).reduce((a, b) => a + b, 0);
    expect(byStatus).toBe(metrics.publish_counts.total);
  });
});

describe('TypeScript client: keys, limits, transport', () => {
  it('an unknown key is a 401; an issued key works', async () => {
    const bad = createAgentDirectoryClient({ baseUrl: server.apiBaseUrl, apiKey: 'adk_unknown' });
    await expectProblem(bad.get(sample[0]!.id), 401, 'invalid_api_key');
    const { key } = await server.services.keys.create('ts-client-test');
    const good = createAgentDirectoryClient({ baseUrl: server.apiBaseUrl, apiKey: key });
    expect((await good.get(sample[0]!.id)).id).toBe(sample[0]!.id);
  });

  it('waits Retry-After on a 429 and retries', async () => {
    const limited = await startTestServer({ rateLimit: { enabled: true, windowMs: 3000 } });
    try {
      const probe = createAgentDirectoryClient({ baseUrl: limited.apiBaseUrl, maxRetries: 0 });
      let rateLimited: AgentDirectoryError | undefined;
      for (let i = 0; i < 40 && !rateLimited; i++) {
        await probe.subscribe(`probe-${i}@example.com`).catch((error: AgentDirectoryError) => (rateLimited = error));
      }
      expect(rateLimited?.status).toBe(429);
      expect(rateLimited?.code).toBe('rate_limited');
      expect(rateLimited?.retryAfter).toBeGreaterThanOrEqual(1);
      expect(rateLimited?.response?.headers.get('ratelimit-policy')).toBe('"writes";q=20;w=3');

      const waits: number[] = [];
      const patient = createAgentDirectoryClient({
        baseUrl: limited.apiBaseUrl,
        sleep: (ms) => {
          waits.push(ms);
          return new Promise((resolve) => setTimeout(resolve, ms));
        },
      });
      const subscription = await patient.subscribe('after-the-wait@example.com');
      expect(subscription.status).toBe('confirmation_sent');
      expect(waits.length).toBeGreaterThanOrEqual(1);
      expect(waits[0]).toBeGreaterThanOrEqual(1000);

      const impatient = createAgentDirectoryClient({ baseUrl: limited.apiBaseUrl, maxRetries: 0 });
      for (let i = 0; i < 25; i++) await impatient.subscribe(`again-${i}@example.com`).catch(() => undefined);
      const skipped: number[] = [];
      const tooLong = createAgentDirectoryClient({
        baseUrl: limited.apiBaseUrl,
        maxRetryWait: 0.5,
        sleep: async (ms) => void skipped.push(ms),
      });
      await expectProblem(tooLong.subscribe('never@example.com'), 429, 'rate_limited');
      expect(skipped).toEqual([]);
    } finally {
      await limited.close();
    }
  });

  it('no response is a transport_error', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const offline = createAgentDirectoryClient({ baseUrl: `http://127.0.0.1:${port}` });
    const error = await expectProblem(offline.health(), 0, 'transport_error');
    expect(error.cause).toBeDefined();
  });

  it('retryAfterSeconds reads Retry-After and RateLimit', () => {
    expect(retryAfterSeconds(new Headers({ 'retry-after': '41' }))).toBe(41);
    expect(retryAfterSeconds(new Headers({ ratelimit: '"writes";r=0;t=7' }))).toBe(7);
    expect(retryAfterSeconds(new Headers())).toBeUndefined();
  });
});

describe('TypeScript client: webhooks', () => {
  it('verifyWebhook: known vector, tampered body, malformed headers', () => {
    expect(signWebhook(SECRET, BODY)).toBe(SIGNATURE);
    expect(verifyWebhook(SECRET, BODY, SIGNATURE)).toBe(true);
    expect(verifyWebhook(SECRET, Buffer.from(BODY), SIGNATURE)).toBe(true);
    expect(verifyWebhook(SECRET, BODY, SIGNATURE.slice('sha256='.length))).toBe(true);
    expect(verifyWebhook(SECRET, BODY, SIGNATURE.toUpperCase().replace('SHA256=', 'sha256='))).toBe(true);
    expect(verifyWebhook(SECRET, BODY.replace('"Demo"', '"Evil"'), SIGNATURE)).toBe(false);
    expect(verifyWebhook(SECRET, `${BODY}\n`, SIGNATURE)).toBe(false);
    expect(verifyWebhook('whsec_other', BODY, SIGNATURE)).toBe(false);
    for (const header of [
      undefined,
      null,
      '',
      'sha256=',
      `sha1=${SIGNATURE.slice(7)}`,
      SIGNATURE.slice(0, -1),
      `${SIGNATURE}0`,
      `sha256=${'z'.repeat(64)}`,
      [SIGNATURE],
    ]) {
      expect(verifyWebhook(SECRET, BODY, header)).toBe(false);
    }
  });

  it('verifies a real delivery from the server', async () => {
    const endpoint = await server.services.webhooks.add({ url: `${site.origin}/hook`, events: ['review.created'] }, { actor: 'test' });
    const review = await client.addReview(sample[20]!.id, { rating: 4, comment: 'webhook check' });
    const deadline = Date.now() + 20_000;
    let delivery: LocalSite['posts'][number] | undefined;
    while (!delivery && Date.now() < deadline) {
      delivery = site.posts.find((post) => post.body.includes(review.id));
      if (!delivery) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(delivery, 'no review.created delivery arrived').toBeDefined();
    const signature = delivery!.headers['x-service-signature'];
    expect(verifyWebhook(endpoint.secret, delivery!.body, signature)).toBe(true);
    expect(verifyWebhook(endpoint.secret, Buffer.concat([delivery!.body, Buffer.from(' ')]), signature)).toBe(false);
    expect(JSON.parse(delivery!.body.toString('utf8')).event).toBe('review.created');
  });
});
