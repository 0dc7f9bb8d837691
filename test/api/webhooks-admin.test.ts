import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { trpcClient } from '../helpers/trpc';
import { receiverVerifies, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * webhooks.* over real HTTP with the admin token, as the console's web build
 * calls them, against a real receiver on 127.0.0.1. Retries wait a minute, so
 * a first failed attempt stays pending and redelivery is what sends it again.
 */
const ADMIN_TOKEN = 'test-admin-token-webhooks-0123456789';

let server: TestServer;
let receiver: WebhookReceiver;
let agentId: string;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  server = await startTestServer(
    { adminToken: ADMIN_TOKEN, allowPrivateUrls: true, webhooks: { retryDelaysMs: [60_000], jitter: 0 } },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken) },
  );
  agentId = (await server.services.agents.edits.create(agentInput({ name: 'Hooked Agent' }), { emitEvents: false })).id;
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

// The answers are checked field by field; typed loosely on purpose.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
interface Answer {
  status: number;
  body: Json;
}

const { query, mutation } = trpcClient(() => server.origin, ADMIN_TOKEN);

function data(answer: Answer): Json {
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.result.data;
}

/** Polls an async check until it returns a value. */
async function pollFor<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function listed(id: string): Promise<Json> {
  return data(await query('webhooks.list')).endpoints.find((endpoint: { id: string }) => endpoint.id === id);
}

/** Posts a review through the public API (one review.created event); returns the event's id. */
async function postReview(rating: number): Promise<string> {
  const response = await server.post(`/agents/${agentId}/reviews`, { rating, comment: 'webhook admin test' });
  expect(response.status).toBe(201);
  const review = await json(response);
  const event = (await server.services.events.listRecent(50)).find(
    (row) => row.type === 'review.created' && row.data.review_id === review.id,
  );
  expect(event).toBeDefined();
  return event!.id;
}

/** Waits for the endpoint's delivery of `eventId` (the newest one) to reach `status` after an attempt. */
function deliveryIn(endpointId: string, eventId: string, status: string): Promise<Json> {
  return pollFor(async () => {
    const { deliveries } = data(await query('webhooks.deliveries', { endpointId, isTest: false, limit: 100 }));
    const delivery = deliveries.find((candidate: Json) => candidate.event_id === eventId);
    // Attempted at least once: a new delivery is pending before its first attempt too.
    return delivery?.status === status && delivery.attempt_count > 0 ? delivery : undefined;
  }, `the delivery of ${eventId} to be ${status}`);
}

async function auditActions(entityId: string): Promise<string[]> {
  const { entries } = data(await query('audit.list', { entityId, limit: 100 }));
  return entries.filter((entry: Json) => entry.actor === 'admin-token').map((entry: Json) => entry.action);
}

describe('webhooks.list', () => {
  it('lists endpoints with their latest delivery and the event kinds, never a secret', async () => {
    const created = data(await mutation('webhooks.create', { url: receiver.url, description: 'list test' }));
    receiver.secret = created.secret;
    receiver.respond = () => ({ status: 200, body: 'ok' });
    const list = data(await query('webhooks.list'));
    expect(list.eventKinds).toEqual(['agent.registered', 'agent.updated', 'agent.verified', 'review.created', 'claim.approved']);
    expect(await listed(created.id)).toMatchObject({ url: receiver.url, events: [], active: true, last_delivery: null });
    expect(JSON.stringify(list)).not.toContain(created.secret);

    const test = data(await mutation('webhooks.sendTest', { id: created.id, event: 'agent.updated' }));
    expect(test).toMatchObject({ ok: true, status_code: 200 });
    expect(await listed(created.id)).toMatchObject({
      last_delivery: { id: test.delivery_id, is_test: true, status: 'succeeded', event_type: 'agent.updated', last_status_code: 200 },
    });

    // A real event afterwards becomes the latest.
    const eventId = await postReview(4);
    const entry = await pollFor(async () => {
      const candidate = await listed(created.id);
      return candidate.last_delivery?.event_id === eventId && candidate.last_delivery.status === 'succeeded' ? candidate : undefined;
    }, 'the review delivery to be listed');
    expect(entry.last_delivery).toMatchObject({ is_test: false, event_type: 'review.created', last_status_code: 200 });

    data(await mutation('webhooks.remove', { id: created.id }));
    expect(await listed(created.id)).toBeUndefined();
  });
});

describe('changing an endpoint', () => {
  it('checks the version, audits every change with the admin as actor, and rotates the secret the preview signs with', async () => {
    const created = data(await mutation('webhooks.create', { url: 'https://hooks.example.com/a', events: ['review.created'] }));
    expect(created.secret).toMatch(/^whsec_/);
    expect(data(await query('webhooks.get', { id: created.id }))).not.toHaveProperty('secret');

    const updated = data(
      await mutation('webhooks.update', {
        id: created.id,
        expectedVersion: 1,
        description: 'Partner sync',
        events: ['review.created', 'agent.updated'],
      }),
    );
    expect(updated).toMatchObject({ version: 2, description: 'Partner sync', events: ['review.created', 'agent.updated'] });

    // A console that still shows version 1 is told, and nothing changes.
    const stale = await mutation('webhooks.update', { id: created.id, expectedVersion: 1, url: 'https://elsewhere.example.com' });
    expect(stale.status).toBe(409);
    expect(stale.body.error.data.code).toBe('stale_version');
    expect(data(await query('webhooks.get', { id: created.id })).url).toBe('https://hooks.example.com/a');
    expect((await mutation('webhooks.setActive', { id: created.id, active: false, expectedVersion: 1 })).status).toBe(409);
    expect((await mutation('webhooks.rotateSecret', { id: created.id, expectedVersion: 1 })).body.error.data.code).toBe('stale_version');

    const disabled = data(
      await mutation('webhooks.setActive', { id: created.id, active: false, reason: 'maintenance', expectedVersion: 2 }),
    );
    expect(disabled).toMatchObject({ active: false, disabled_reason: 'maintenance', version: 3 });
    expect(await listed(created.id)).toMatchObject({ active: false, disabled_reason: 'maintenance' });
    const enabled = data(await mutation('webhooks.setActive', { id: created.id, active: true, expectedVersion: 3 }));
    expect(enabled).toMatchObject({ active: true, disabled_reason: null, consecutive_failures: 0 });

    const before = data(await query('webhooks.preview', { id: created.id, event: 'review.created' })).previews[0];
    const rotated = data(await mutation('webhooks.rotateSecret', { id: created.id, expectedVersion: enabled.version }));
    expect(rotated.secret).not.toBe(created.secret);
    const after = data(await query('webhooks.preview', { id: created.id, event: 'review.created' })).previews[0];
    expect(after.body).toBe(before.body);
    expect(after.signature).not.toBe(before.signature);
    expect(receiverVerifies(rotated.secret, Buffer.from(after.body), after.signature)).toBe(true);
    expect(data(await mutation('webhooks.revealSecret', { id: created.id })).secret).toBe(rotated.secret);

    data(await mutation('webhooks.remove', { id: created.id }));
    expect((await query('webhooks.get', { id: created.id })).status).toBe(404);
    expect((await auditActions(created.id)).sort()).toEqual(
      [
        'webhook.create',
        'webhook.update',
        'webhook.disable',
        'webhook.enable',
        'webhook.rotate_secret',
        'webhook.reveal_secret',
        'webhook.delete',
      ].sort(),
    );
  });

  it.each([
    ['a URL that is not http(s)', { url: 'ftp://example.com/hooks' }, '/url'],
    ['a relative URL', { url: '/hooks' }, '/url'],
    ['an unknown event kind', { url: 'https://example.com', events: ['agent.deleted'] }, '/events/0'],
    ['a description over 500 characters', { url: 'https://example.com', description: 'x'.repeat(501) }, '/description'],
    ['an unknown field', { url: 'https://example.com', secret: 'mine' }, '/'],
  ])('refuses %s with validation_failed', async (_what, input, pointer) => {
    const before = data(await query('webhooks.list')).endpoints.length;
    const { status, body } = await mutation('webhooks.create', input);
    expect(status).toBe(400);
    expect(body.error.data.code).toBe('validation_failed');
    expect(body.error.data.errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer);
    expect(data(await query('webhooks.list')).endpoints.length).toBe(before);
  });
});

describe('the delivery log', () => {
  it('logs a failed attempt, redelivers it with the same event id, and filters by status, kind, since and origin', async () => {
    const created = data(await mutation('webhooks.create', { url: receiver.url, events: ['review.created'] }));
    receiver.secret = created.secret;
    receiver.respond = () => ({ status: 500, body: 'receiver is down' });
    const since = new Date().toISOString();

    const eventId = await postReview(2);
    const failed = await deliveryIn(created.id, eventId, 'pending');
    expect(failed).toMatchObject({ event_type: 'review.created', attempt_count: 1, last_status_code: 500, is_test: false });
    expect(Date.parse(failed.next_attempt_at)).toBeGreaterThan(Date.now() + 30_000);
    const detail = data(await query('webhooks.delivery', { id: failed.id }));
    expect(detail.attempts).toEqual([
      expect.objectContaining({
        attempt_number: 1,
        status_code: 500,
        response_excerpt: 'receiver is down',
        error: 'the receiver answered 500',
      }),
    ]);
    const sent = receiver.received.find((hit) => hit.eventId === eventId)!;
    expect(sent.signatureValid).toBe(true);
    expect(sent.standardValid).toBe(true);
    expect(detail.attempts[0].request_body).toBe(sent.rawBody.toString('utf8'));
    expect(detail.attempts[0].request_headers['X-Service-Signature']).toBe(sent.headers['x-service-signature']);
    expect((await listed(created.id)).consecutive_failures).toBe(1);

    receiver.respond = () => ({ status: 200, body: 'ok' });
    const again = data(await mutation('webhooks.redeliver', { id: failed.id }));
    expect(again).toMatchObject({ event_id: eventId, status: 'pending' });
    expect(again.id).not.toBe(failed.id);
    await pollFor(async () => {
      const delivery = data(await query('webhooks.delivery', { id: again.id }));
      return delivery.status === 'succeeded' ? delivery : undefined;
    }, 'the redelivery to succeed');
    const hits = receiver.received.filter((hit) => hit.eventId === eventId);
    expect(hits.map((hit) => hit.deliveryId)).toEqual([failed.id, again.id]);
    expect(hits.every((hit) => hit.signatureValid && hit.standardValid)).toBe(true);
    expect((await listed(created.id)).consecutive_failures).toBe(0);

    data(await mutation('webhooks.sendTest', { id: created.id, event: 'claim.approved' }));
    const page = async (input: Record<string, unknown>) => data(await query('webhooks.deliveries', { endpointId: created.id, ...input }));
    const all = await page({});
    expect(all.total).toBe(3);
    expect((await page({ status: 'succeeded' })).total).toBe(2);
    expect((await page({ status: 'pending' })).deliveries.map((d: Json) => d.id)).toEqual([failed.id]);
    expect((await page({ eventType: 'claim.approved' })).deliveries.map((d: Json) => d.is_test)).toEqual([true]);
    expect((await page({ isTest: false })).total).toBe(2);
    expect((await page({ since: new Date(Date.now() + 60_000).toISOString() })).total).toBe(0);
    expect((await page({ since })).total).toBe(3);
    const first = await page({ limit: 2, page: 1 });
    const second = await page({ limit: 2, page: 2 });
    expect(first.deliveries).toHaveLength(2);
    expect(second.deliveries).toHaveLength(1);
    expect(new Set([...first.deliveries, ...second.deliveries].map((d: Json) => d.id)).size).toBe(3);

    // A test send is never redelivered.
    const testDelivery = (await page({ isTest: true })).deliveries[0];
    const refused = await mutation('webhooks.redeliver', { id: testDelivery.id });
    expect(refused.status).toBe(409);
    expect(refused.body.error.data.code).toBe('conflict');

    expect(await auditActions(again.id)).toEqual(['webhook.redeliver']);
    data(await mutation('webhooks.remove', { id: created.id }));
    expect(data(await query('webhooks.deliveries', { endpointId: created.id })).total).toBe(0);
  });

  it('redelivers everything that failed since a time once the endpoint is enabled again (410 Gone disabled it)', async () => {
    const created = data(await mutation('webhooks.create', { url: receiver.url, events: ['review.created'] }));
    receiver.secret = created.secret;
    receiver.respond = () => ({ status: 410, body: 'gone' });
    const since = new Date(Date.now() - 1000).toISOString();

    const eventId = await postReview(5);
    const failed = await deliveryIn(created.id, eventId, 'failed');
    expect(failed.last_status_code).toBe(410);
    const endpoint = await listed(created.id);
    expect(endpoint).toMatchObject({ active: false, disabled_reason: 'the receiver answered 410 Gone' });

    // Disabled: nothing is sent, and the refusal says why.
    const whileDisabled = await mutation('webhooks.redeliver', { id: failed.id });
    expect(whileDisabled.status).toBe(409);
    expect(data(await mutation('webhooks.redeliverFailed', { endpointId: created.id, since }))).toEqual({ redelivered: [], skipped: 1 });

    receiver.respond = () => ({ status: 200, body: 'back' });
    data(await mutation('webhooks.setActive', { id: created.id, active: true, expectedVersion: endpoint.version }));
    const result = data(await mutation('webhooks.redeliverFailed', { endpointId: created.id, since }));
    expect(result).toMatchObject({ skipped: 0 });
    expect(result.redelivered).toHaveLength(1);
    await pollFor(async () => {
      const delivery = data(await query('webhooks.delivery', { id: result.redelivered[0] }));
      return delivery.status === 'succeeded' ? delivery : undefined;
    }, 'the redelivery to succeed');
    expect(receiver.received.filter((hit) => hit.eventId === eventId)).toHaveLength(2);

    // Nothing failed after now.
    expect(
      data(await mutation('webhooks.redeliverFailed', { endpointId: created.id, since: new Date(Date.now() + 1000).toISOString() })),
    ).toEqual({
      redelivered: [],
      skipped: 0,
    });
    expect(await auditActions(created.id)).toContain('webhook.redeliver_failed');
    data(await mutation('webhooks.remove', { id: created.id }));
  });

  it('answers the preview with the bytes and signature a test send delivers', async () => {
    const created = data(await mutation('webhooks.create', { url: receiver.url }));
    receiver.secret = created.secret;
    receiver.respond = () => ({ status: 202, body: '{"accepted":true}' });
    const preview = data(await query('webhooks.preview', { id: created.id }));
    expect(preview.previews.map((entry: Json) => entry.event)).toEqual(data(await query('webhooks.list')).eventKinds);
    expect(preview.verification.node).toContain('timingSafeEqual');
    expect(preview.verification.python).toContain('compare_digest');

    for (const entry of preview.previews) {
      const test = data(await mutation('webhooks.sendTest', { id: created.id, event: entry.event }));
      expect(test).toMatchObject({ ok: true, status_code: 202, response_excerpt: '{"accepted":true}', error: null });
      expect(test.latency_ms).toBeGreaterThanOrEqual(0);
      const hit = receiver.received.find((candidate) => candidate.deliveryId === test.delivery_id)!;
      expect(hit.rawBody.toString('utf8')).toBe(entry.body);
      expect(hit.headers['x-service-signature']).toBe(entry.signature);
      expect(hit.signatureValid).toBe(true);
      expect(hit.standardValid).toBe(true);
      expect(hit.isTest).toBe(true);
    }
    // Test sends never count against the endpoint.
    receiver.respond = () => ({ status: 503 });
    const failedTest = data(await mutation('webhooks.sendTest', { id: created.id, event: 'agent.registered' }));
    expect(failedTest).toMatchObject({ ok: false, status_code: 503, error: 'the receiver answered 503' });
    expect((await listed(created.id)).consecutive_failures).toBe(0);
    data(await mutation('webhooks.remove', { id: created.id }));
  });

  it('refuses bad filters and unknown ids', async () => {
    expect((await query('webhooks.deliveries', { status: 'lost' })).body.error.data.code).toBe('validation_failed');
    expect((await query('webhooks.deliveries', { since: 'yesterday' })).status).toBe(400);
    expect((await query('webhooks.deliveries', { limit: 101 })).status).toBe(400);
    expect((await query('webhooks.delivery', { id: 'dlv_missing' })).body.error.data.code).toBe('not_found');
    expect((await mutation('webhooks.redeliver', { id: 'dlv_missing' })).status).toBe(404);
    expect((await mutation('webhooks.sendTest', { id: 'whk_missing' })).status).toBe(404);
    const anonymous = await fetch(`${server.origin}/trpc/webhooks.list`);
    expect(anonymous.status).toBe(401);
  });
});
