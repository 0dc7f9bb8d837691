import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src-api/errors';
import { agentInput, startTestServer, type TestServer } from '../helpers/test-server';
import {
  deliveriesOf,
  eventually,
  receiverVerifies,
  standardVerifies,
  startWebhookReceiver,
  waitForDeliveryStatus,
  type WebhookReceiver,
} from '../helpers/webhook-receiver';

/** Endpoint management, the delivery log and its filters, and redelivery (same event id). */

let server: TestServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  server = await startTestServer({ allowPrivateUrls: true, webhooks: { retryDelaysMs: [30], jitter: 0, timeoutMs: 1_000 } });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

async function errorOf(run: () => unknown): Promise<AppError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected an AppError');
}

describe('endpoints', () => {
  it('add: validates URL and kinds, returns a whsec_ secret with 256 bits, audits with the actor', async () => {
    const created = await server.services.webhooks.add(
      { url: 'https://hooks.example.com/in', events: ['review.created', 'agent.registered', 'review.created'], description: ' CRM sync ' },
      { actor: 'alice' },
    );
    expect(created).toMatchObject({
      url: 'https://hooks.example.com/in',
      events: ['review.created', 'agent.registered'],
      description: 'CRM sync',
      active: true,
      disabled_reason: null,
      consecutive_failures: 0,
      version: 1,
    });
    expect(created.id).toMatch(/^whk_/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64url')).toHaveLength(32);
    const audit = (await server.services.audit.list({ page: 1, limit: 5, entityId: created.id })).items;
    expect(audit[0]).toMatchObject({ actor: 'alice', action: 'webhook.create' });
    expect(JSON.stringify(audit)).not.toContain(created.secret);

    for (const bad of [
      { url: 'ftp://example.com/x' },
      { url: '/relative' },
      { url: 'https://example.com', events: ['agent.deleted'] },
      { url: 'https://example.com', extra: 1 },
    ]) {
      const error = await errorOf(() => server.services.webhooks.add(bad as never, { actor: 'alice' }));
      expect(error.code).toBe('validation_failed');
      expect(error.extra.errors?.length).toBeGreaterThan(0);
    }
    await server.services.webhooks.remove(created.id, { actor: 'alice' });
  });

  it('list and get never show the secret; revealSecret does, audited', async () => {
    const created = await server.services.webhooks.add({ url: 'https://hooks.example.com/list' }, { actor: 'alice' });
    const listed = (await server.services.webhooks.list()).find((e) => e.id === created.id)!;
    expect(listed).not.toHaveProperty('secret');
    expect(await server.services.webhooks.get(created.id)).not.toHaveProperty('secret');
    expect(JSON.stringify(await server.services.webhooks.list())).not.toContain('whsec_');
    expect((await server.services.webhooks.revealSecret(created.id, { actor: 'bob' })).secret).toBe(created.secret);
    expect((await server.services.audit.list({ page: 1, limit: 5, entityId: created.id, actor: 'bob' })).items[0]!.action).toBe(
      'webhook.reveal_secret',
    );
    await server.services.webhooks.remove(created.id, { actor: 'alice' });
  });

  it('update bumps the version and refuses a stale one; unknown ids are 404', async () => {
    const created = await server.services.webhooks.add({ url: 'https://hooks.example.com/v1' }, { actor: 'alice' });
    const updated = await server.services.webhooks.update(
      created.id,
      { url: 'https://hooks.example.com/v2', events: ['agent.verified'] },
      { actor: 'alice', expectedVersion: 1 },
    );
    expect(updated).toMatchObject({ url: 'https://hooks.example.com/v2', events: ['agent.verified'], version: 2 });
    expect(
      (await errorOf(() => server.services.webhooks.update(created.id, { description: 'late' }, { actor: 'bob', expectedVersion: 1 })))
        .code,
    ).toBe('stale_version');
    expect((await errorOf(() => server.services.webhooks.update(created.id, { url: 'javascript:alert(1)' }, { actor: 'bob' }))).code).toBe(
      'validation_failed',
    );
    expect((await errorOf(() => server.services.webhooks.get('whk_nope'))).status).toBe(404);
    expect((await errorOf(() => server.services.webhooks.remove('whk_nope', { actor: 'bob' }))).status).toBe(404);
    await server.services.webhooks.remove(created.id, { actor: 'alice' });
  });

  it('rotateSecret: X-Service-Signature uses the new secret; webhook-signature both, during the overlap', async () => {
    const endpoint = await server.services.webhooks.add({ url: receiver.url }, { actor: 'alice' });
    const rotated = await server.services.webhooks.rotateSecret(endpoint.id, { actor: 'alice' });
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect(rotated.version).toBe(2);
    receiver.secret = endpoint.secret; // the old one
    const before = receiver.received.length;
    await server.services.agents.edits.create(agentInput({ name: 'Rotation Check' }), { emitEvents: true });
    await receiver.waitFor((hits) => hits.length > before, 10_000, 'the delivery after rotation');
    const hit = receiver.received.at(-1)!;
    expect(hit.signatureValid).toBe(false);
    expect(receiverVerifies(rotated.secret, hit.rawBody, String(hit.headers['x-service-signature']))).toBe(true);
    expect(hit.standardValid).toBe(true); // the old secret, still valid for 24 h
    expect(standardVerifies(rotated.secret, hit.rawBody, hit.headers)).toBe(true);
    receiver.secret = rotated.secret;
    await server.services.webhooks.remove(endpoint.id, { actor: 'alice' });
  });
});

describe('delivery log and redelivery', () => {
  let endpointId: string;
  let otherEndpointId: string;
  let failingReceiver: WebhookReceiver;

  beforeAll(async () => {
    failingReceiver = await startWebhookReceiver({ respond: () => ({ status: 500, body: 'down' }) });
    const endpoint = await server.services.webhooks.add(
      { url: receiver.url, events: ['agent.registered', 'review.created'] },
      { actor: 'alice' },
    );
    receiver.secret = endpoint.secret;
    endpointId = endpoint.id;
    const other = await server.services.webhooks.add({ url: failingReceiver.url, events: ['review.created'] }, { actor: 'alice' });
    failingReceiver.secret = other.secret;
    otherEndpointId = other.id;

    const agent = await server.services.agents.edits.create(agentInput({ name: 'Logged Agent' }), { emitEvents: true });
    const review = await server.post(`/agents/${agent.id}/reviews`, { rating: 3 });
    expect(review.status).toBe(201);
    await waitForDeliveryStatus(server.services, otherEndpointId, ['failed']);
    await eventually(
      async () =>
        (await deliveriesOf(server.services, endpointId)).filter((d) => d.status === 'succeeded').length === 2 ? true : undefined,
      'both deliveries to the healthy endpoint',
    );
  });
  afterAll(() => failingReceiver?.close());

  it('lists deliveries newest first with filters: endpoint, status, event kind, since, tests', async () => {
    const all = await server.services.webhooks.listDeliveries({ limit: 100 });
    expect(all.total).toBeGreaterThanOrEqual(3);
    const mine = await server.services.webhooks.listDeliveries({ endpointId, limit: 100 });
    expect(mine.items.map((d) => d.event_type).sort()).toEqual(['agent.registered', 'review.created']);
    expect(mine.items.every((d) => d.endpoint_url === receiver.url && d.status === 'succeeded')).toBe(true);
    expect(mine.items[0]!.created_at >= mine.items[1]!.created_at).toBe(true);

    const failed = await server.services.webhooks.listDeliveries({ status: 'failed', limit: 100 });
    expect(failed.items.map((d) => d.endpoint_id)).toEqual([otherEndpointId]);
    expect((await server.services.webhooks.listDeliveries({ eventType: 'agent.registered', endpointId, limit: 100 })).total).toBe(1);
    expect((await server.services.webhooks.listDeliveries({ since: new Date(Date.now() + 60_000).toISOString() })).total).toBe(0);
    expect((await server.services.webhooks.listDeliveries({ isTest: true })).total).toBe(0);
    const paged = await server.services.webhooks.listDeliveries({ page: 2, limit: 1, endpointId });
    expect(paged).toMatchObject({ page: 2, limit: 1, total: 2 });
    expect(paged.items).toHaveLength(1);
    // Past the end: no row carries the total, which is still counted.
    expect(await server.services.webhooks.listDeliveries({ page: 3, limit: 1, endpointId })).toMatchObject({ items: [], total: 2 });
    expect((await errorOf(() => server.services.webhooks.listDeliveries({ status: 'lost' as never }))).code).toBe('validation_failed');
  });

  it('shows every attempt of a delivery: request, status, latency, response excerpt, error', async () => {
    const [failed] = (await server.services.webhooks.listDeliveries({ endpointId: otherEndpointId })).items;
    const detail = await server.services.webhooks.getDelivery(failed!.id);
    expect(detail.attempts).toHaveLength(2);
    for (const attempt of detail.attempts) {
      expect(attempt).toMatchObject({ status_code: 500, response_excerpt: 'down', error: 'the receiver answered 500' });
      expect(attempt.request_headers).toMatchObject({ 'Content-Type': 'application/json', 'X-Service-Event': 'review.created' });
      expect(JSON.parse(attempt.request_body)).toMatchObject({ id: detail.event_id, event: 'review.created' });
    }
    expect((await errorOf(() => server.services.webhooks.getDelivery('dlv_nope'))).status).toBe(404);
  });

  it('redeliver: a new delivery of the same event, same id and bytes, new delivery id', async () => {
    const [original] = (await server.services.webhooks.listDeliveries({ endpointId, eventType: 'review.created' })).items;
    const firstHit = receiver.received.find((h) => h.deliveryId === original!.id)!;
    const again = await server.services.webhooks.redeliver(original!.id, { actor: 'carol' });
    expect(again).toMatchObject({ event_id: original!.event_id, endpoint_id: endpointId, status: 'pending', attempt_count: 0 });
    expect(again.id).not.toBe(original!.id);
    await receiver.waitFor((hits) => hits.some((h) => h.deliveryId === again.id), 10_000, 'the redelivery');
    const secondHit = receiver.received.find((h) => h.deliveryId === again.id)!;
    expect(secondHit.eventId).toBe(firstHit.eventId);
    expect(secondHit.rawBody.equals(firstHit.rawBody)).toBe(true);
    expect(secondHit.headers['x-service-signature']).toBe(firstHit.headers['x-service-signature']);
    expect(secondHit.signatureValid).toBe(true);
    expect(secondHit.standardValid).toBe(true);
    expect((await server.services.audit.list({ page: 1, limit: 5, actor: 'carol' })).items[0]!.action).toBe('webhook.redeliver');
  });

  it('redeliverFailed: everything failed since a time, per endpoint, skipping disabled endpoints', async () => {
    const since = new Date(Date.now() - 60_000).toISOString();
    failingReceiver.respond = () => ({ status: 200, body: 'back up' });
    const before = failingReceiver.received.length;
    const result = await server.services.webhooks.redeliverFailed({ since, endpointId: otherEndpointId }, { actor: 'carol' });
    expect(result).toMatchObject({ skipped: 0 });
    expect(result.redelivered).toHaveLength(1);
    await failingReceiver.waitFor((hits) => hits.length === before + 1, 10_000, 'the redelivered review');
    const hit = failingReceiver.received.at(-1)!;
    expect(hit.signatureValid).toBe(true);
    expect(hit.standardValid).toBe(true);
    expect(hit.eventId).toBe(failingReceiver.received[0]!.eventId);
    const redelivered = await eventually(async () => {
      const delivery = await server.services.webhooks.getDelivery(result.redelivered[0]!);
      return delivery.status === 'succeeded' ? delivery : undefined;
    }, 'the redelivery to succeed');
    expect(redelivered.attempts).toHaveLength(1);

    // Nothing failed since a minute from now; a disabled endpoint's failures are skipped, not sent.
    expect(
      (await server.services.webhooks.redeliverFailed({ since: new Date(Date.now() + 60_000).toISOString() }, { actor: 'carol' }))
        .redelivered,
    ).toEqual([]);
    await server.services.webhooks.setActive(otherEndpointId, false, { actor: 'carol' });
    const skipped = await server.services.webhooks.redeliverFailed({ since }, { actor: 'carol' });
    expect(skipped).toEqual({ redelivered: [], skipped: 1 });
    const [failedBefore] = (await server.services.webhooks.listDeliveries({ endpointId: otherEndpointId })).items;
    expect((await errorOf(() => server.services.webhooks.redeliver(failedBefore!.id, { actor: 'carol' }))).code).toBe('conflict');
  });

  it('remove deletes the endpoint and its log; the events stay', async () => {
    const [delivery] = (await server.services.webhooks.listDeliveries({ endpointId: otherEndpointId })).items;
    await server.services.webhooks.remove(otherEndpointId, { actor: 'carol' });
    expect((await server.services.webhooks.listDeliveries({ endpointId: otherEndpointId })).total).toBe(0);
    expect((await errorOf(() => server.services.webhooks.getDelivery(delivery!.id))).status).toBe(404);
    expect(await server.services.events.get(delivery!.event_id)).toBeDefined();
    const audit = (await server.services.audit.list({ page: 1, limit: 10, entityId: otherEndpointId })).items;
    expect(audit[0]).toMatchObject({ action: 'webhook.delete', actor: 'carol' });
  });
});
