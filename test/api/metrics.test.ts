import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentInput, startTestServer, type TestServer } from '../helpers/test-server';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * GET /metrics on a live server: Prometheus' own `promtool check metrics`
 * accepts the scrape, the counters move as requests are made, and only
 * loopback clients or the admin token get in.
 */

const ADMIN_TOKEN = 'metrics-admin-token-0123456789';

let server: TestServer;
let receiver: WebhookReceiver;
let agentId: string;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  server = await startTestServer({
    adminToken: ADMIN_TOKEN,
    allowPrivateUrls: true,
    webhooks: { pollIntervalMs: 100 },
    rateLimit: { enabled: true, writes: 2, anonymousReads: 1_000 },
  });
  receiver.secret = (await server.services.webhooks.add({ url: receiver.url, events: ['review.created'] }, { actor: 'test' })).secret;
  agentId = (await server.services.agents.edits.create(agentInput({ name: 'Metered Agent' }), { emitEvents: false })).id;
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

async function scrape(): Promise<string> {
  const response = await fetch(`${server.origin}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of one sample, e.g. sample(text, 'agentdir_http_requests_total', { route: '/api/v1/agents/:id' }); 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => have[key] === value)) total += Number(match[3]);
  }
  return total;
}

function promtool(text: string): { status: number | null; output: string } {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (result.error) throw new Error(`promtool is needed (Debian package "prometheus"): ${result.error.message}`);
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('GET /metrics', () => {
  it('passes promtool check metrics on a live scrape', async () => {
    await fetch(`${server.apiBaseUrl}/agents/${agentId}`);
    const text = await scrape();
    const { status, output } = promtool(text);
    expect(output).toBe('');
    expect(status).toBe(0);
    // Default metrics (memory) and ours are there.
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample(text, 'agentdir_build_info')).toBe(1);
    expect(sample(text, 'agentdir_search_index_documents')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'agentdir_search_index_last_refresh_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 600);
    expect(text).toMatch(/^agentdir_mail_queue_depth \d+$/m);
  });

  it('counts requests and latency by route pattern and status, never by raw URL', async () => {
    const route = { method: 'GET', route: '/api/v1/agents/:id' };
    const before = await scrape();
    for (let i = 0; i < 5; i++) expect((await fetch(`${server.apiBaseUrl}/agents/${agentId}`)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await fetch(`${server.apiBaseUrl}/agents/no-such-agent-${i}`)).status).toBe(404);
    expect((await fetch(`${server.origin}/no/such/route-${Date.now()}`)).status).toBe(404);
    const after = await scrape();

    const moved = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(moved('agentdir_http_requests_total', { ...route, status_code: '200' })).toBe(5);
    expect(moved('agentdir_http_requests_total', { ...route, status_code: '404' })).toBe(3);
    expect(moved('agentdir_http_request_duration_seconds_count', { ...route, status_code: '200' })).toBe(5);
    expect(moved('agentdir_http_request_duration_seconds_bucket', { ...route, status_code: '200', le: '+Inf' })).toBe(5);
    expect(moved('agentdir_http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    expect(after).not.toContain('no-such-agent');
    expect(after).not.toContain('route-');
  });

  it('counts rate-limit rejections by policy', async () => {
    const before = sample(await scrape(), 'agentdir_rate_limit_rejections_total', { policy: 'writes' });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await server.post('/newsletter', { email: `metrics-${i}@example.com` });
      statuses.push(response.status);
    }
    expect(statuses.filter((status) => status === 429)).toHaveLength(2);
    const after = await scrape();
    expect(sample(after, 'agentdir_rate_limit_rejections_total', { policy: 'writes' }) - before).toBe(2);
    expect(sample(after, 'agentdir_http_requests_total', { route: '/api/v1/newsletter', status_code: '429' })).toBe(2);
  });

  it('counts sign-in refusals under their own policy', async () => {
    const limited = await startTestServer({ rateLimit: { enabled: true, writes: 1_000 }, accounts: { signInMaxFailures: 2 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push((await limited.post('/sessions', { email: 'nobody@example.test', password: 'wrong password 123' })).status);
      }
      expect(statuses).toEqual([401, 401, 429, 429]);
      const text = await (await fetch(`${limited.origin}/metrics`)).text();
      expect(sample(text, 'agentdir_rate_limit_rejections_total', { policy: 'sign-in' })).toBe(2);
      expect(sample(text, 'agentdir_rate_limit_rejections_total', { policy: 'writes' })).toBe(0);
    } finally {
      await limited.close();
    }
  });

  it('reports the mail outbox', async () => {
    const before = sample(await scrape(), 'agentdir_mail_messages');
    for (let i = 0; i < 2; i++) {
      await server.services.store.transaction(() =>
        server.services.mail.queueInTransaction({
          kind: 'test.metrics',
          to: `reader-${i}@example.com`,
          subject: 'Metrics',
          paragraphs: ['Hello'],
        }),
      );
    }
    const after = await scrape();
    expect(sample(after, 'agentdir_mail_messages') - before).toBe(2);
    // Each gauge reads the outbox in its own query, and the mail worker moves these two mails from pending
    // to sending to sent meanwhile: the two gauges agree when nothing moved between the two queries (at the
    // latest once the outbox is at rest), not within every scrape.
    await expect
      .poll(async () => {
        const text = await scrape();
        const waiting =
          sample(text, 'agentdir_mail_messages', { status: 'pending' }) + sample(text, 'agentdir_mail_messages', { status: 'sending' });
        return sample(text, 'agentdir_mail_queue_depth') - waiting;
      })
      .toBe(0);
  });

  it('counts webhook attempts by outcome and reports the queue', async () => {
    const before = await scrape();
    expect(sample(before, 'agentdir_webhook_queue_depth')).toBe(0);
    await server.services.reviews.create(agentId, { rating: 5, comment: null, reviewer_name: null });
    await receiver.waitFor((hits) => hits.some((hit) => hit.body?.event === 'review.created'));
    // The attempt is recorded just after the receiver answered.
    let after = await scrape();
    for (let i = 0; i < 50 && sample(after, 'agentdir_webhook_attempts_total', { outcome: 'succeeded' }) === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = await scrape();
    }
    expect(sample(after, 'agentdir_webhook_attempts_total', { outcome: 'succeeded' })).toBe(1);
    expect(sample(after, 'agentdir_webhook_deliveries', { status: 'succeeded' })).toBe(1);
    expect(sample(after, 'agentdir_webhook_queue_depth')).toBe(0);
  });
});

describe('who may read /metrics', () => {
  it('refuses a remote client without the admin token, and serves one with it', async () => {
    const remote = { method: 'GET' as const, url: '/metrics', remoteAddress: '203.0.113.7' };
    const refused = await server.app.inject(remote);
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.json()).toMatchObject({ code: 'unauthorized' });
    expect((await server.app.inject({ ...remote, headers: { authorization: 'Bearer wrong-token-0123456789' } })).statusCode).toBe(401);
    const allowed = await server.app.inject({ ...remote, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.body).toContain('agentdir_http_requests_total');
  });

  it('is closed to loopback too in token mode, and absent when off', async () => {
    const tokenOnly = await startTestServer({ adminToken: ADMIN_TOKEN, metrics: 'token' });
    const off = await startTestServer({ adminToken: ADMIN_TOKEN, metrics: 'off' });
    try {
      expect((await fetch(`${tokenOnly.origin}/metrics`)).status).toBe(401);
      const withToken = await fetch(`${tokenOnly.origin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(withToken.status).toBe(200);
      // Each server has its own registry: the other server's requests are not in it.
      expect(sample(await withToken.text(), 'agentdir_http_requests_total', { route: '/api/v1/agents/:id' })).toBe(0);
      expect((await fetch(`${off.origin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(404);
    } finally {
      await tokenOnly.close();
      await off.close();
    }
  });
});
