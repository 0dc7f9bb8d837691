import { eq } from 'drizzle-orm';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  buildWebhookRequest,
  generateWebhookSecret,
  sampleEvent,
  SECRET_OVERLAP_MS,
  signingSecrets,
} from '../../src-api/modules/webhooks/webhooks.payload';
import { agentInput, startTestServer, type TestServer } from '../helpers/test-server';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * The Standard Webhooks headers, checked with the official `standardwebhooks`
 * package: every delivery verifies; the timestamp is new on every attempt and
 * a replay is refused by the package's tolerance; a rotation keeps the old
 * secret valid for 24 h (both signatures), including for retries that were
 * already queued.
 */

let server: TestServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  server = await startTestServer({ allowPrivateUrls: true, webhooks: { retryDelaysMs: [1_200, 1_200], jitter: 0 } });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const verify = (secret: string, hit: ReceivedWebhook) =>
  new Webhook(secret).verify(hit.rawBody.toString('utf8'), hit.headers as Record<string, string>) as { id: string };

async function register(name: string): Promise<string> {
  return (await server.services.agents.edits.create(agentInput({ name }), { emitEvents: true })).id;
}

describe('Standard Webhooks headers', () => {
  it('every delivery carries webhook-id (the event id), webhook-timestamp (send time) and a v1 signature the package accepts', async () => {
    const endpoint = await server.services.webhooks.add({ url: receiver.url }, { actor: 'test' });
    receiver.secret = endpoint.secret;
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/); // standard base64, as the libraries decode it
    const before = receiver.received.length;
    await register('Standard One');
    await register('Standard Two');
    await receiver.waitFor((hits) => hits.length >= before + 2, 10_000, 'two deliveries');
    for (const hit of receiver.received.slice(before)) {
      const event = verify(endpoint.secret, hit);
      expect(hit.headers['webhook-id']).toBe(event.id);
      expect(hit.headers['webhook-id']).toBe(hit.eventId);
      expect(Math.abs(Number(hit.headers['webhook-timestamp']) - hit.receivedAtEpochMs / 1000)).toBeLessThan(5);
      expect(String(hit.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(hit.standardValid && hit.signatureValid).toBe(true);
    }
    await server.services.webhooks.remove(endpoint.id, { actor: 'test' });
  });

  it('a captured delivery replayed later is refused by the package tolerance; tampering with id or timestamp too', async () => {
    const endpoint = await server.services.webhooks.add({ url: receiver.url }, { actor: 'test' });
    receiver.secret = endpoint.secret;
    const before = receiver.received.length;
    await register('Replay Target');
    await receiver.waitFor((hits) => hits.length > before, 10_000, 'the delivery');
    const hit = receiver.received.at(-1)!;
    expect(() => verify(endpoint.secret, hit)).not.toThrow();

    // Six minutes later (the package allows five), the same bytes and headers are a replay.
    const later = vi.spyOn(Date, 'now').mockReturnValue(hit.receivedAtEpochMs + 6 * 60_000);
    try {
      expect(() => verify(endpoint.secret, hit)).toThrow(/too old/);
    } finally {
      later.mockRestore();
    }
    // Refreshing the timestamp breaks the signature; so does another id.
    const fresh = { ...hit, headers: { ...hit.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) + 1) } };
    expect(() => verify(endpoint.secret, fresh)).toThrow(WebhookVerificationError);
    const otherId = { ...hit, headers: { ...hit.headers, 'webhook-id': 'evt_other' } };
    expect(() => verify(endpoint.secret, otherId)).toThrow(WebhookVerificationError);
    await server.services.webhooks.remove(endpoint.id, { actor: 'test' });
  });

  it('each retry gets a new timestamp and signature over the same id and body', async () => {
    const endpoint = await server.services.webhooks.add({ url: receiver.url }, { actor: 'test' });
    receiver.secret = endpoint.secret;
    receiver.respond = (hit) => (hit.attempt === 1 ? { status: 503 } : { status: 200 });
    try {
      const before = receiver.received.length;
      await register('Retry Stamp');
      await receiver.waitFor((hits) => hits.length >= before + 2, 10_000, 'the first attempt and its retry');
      const [first, second] = receiver.received.slice(before);
      expect(second!.eventId).toBe(first!.eventId);
      expect(second!.rawBody.equals(first!.rawBody)).toBe(true);
      expect(Number(second!.headers['webhook-timestamp'])).toBeGreaterThan(Number(first!.headers['webhook-timestamp']));
      expect(second!.headers['webhook-signature']).not.toBe(first!.headers['webhook-signature']);
      expect(first!.standardValid && second!.standardValid).toBe(true);
    } finally {
      receiver.respond = () => ({ status: 200 });
      await server.services.webhooks.remove(endpoint.id, { actor: 'test' });
    }
  });

  it('a test send says so in the signed body, so dropping X-Service-Test does not make it a real event', async () => {
    const endpoint = await server.services.webhooks.add({ url: receiver.url }, { actor: 'test' });
    receiver.secret = endpoint.secret;
    const result = await server.services.webhooks.sendTest(endpoint.id, 'review.created', { actor: 'test' });
    const hit = receiver.received.find((h) => h.deliveryId === result.delivery_id)!;
    const stripped = { ...hit, headers: Object.fromEntries(Object.entries(hit.headers).filter(([name]) => name !== 'x-service-test')) };
    expect(verify(endpoint.secret, stripped)).toMatchObject({ id: 'evt_sample_review_created', test: true });
    await server.services.webhooks.remove(endpoint.id, { actor: 'test' });
  });
});

describe('secret rotation', () => {
  it('for 24 h both secrets verify: webhook-signature carries both, new first, and queued retries keep verifying', async () => {
    const endpoint = await server.services.webhooks.add({ url: receiver.url }, { actor: 'test' });
    receiver.secret = endpoint.secret;
    receiver.respond = (hit) => (hit.attempt === 1 ? { status: 503 } : { status: 200 });
    try {
      const before = receiver.received.length;
      await register('Rotation In Flight');
      await receiver.waitFor((hits) => hits.length > before, 10_000, 'the first (failing) attempt');
      const first = receiver.received.at(-1)!;
      expect(String(first.headers['webhook-signature']).split(' ')).toHaveLength(1);

      // Rotate while the retry waits: the retry verifies with the old secret and with the new one.
      const rotated = await server.services.webhooks.rotateSecret(endpoint.id, { actor: 'test' });
      expect(rotated.secret).not.toBe(endpoint.secret);
      const until = Date.parse(rotated.previous_secret_expires_at!);
      expect(Math.abs(until - Date.now() - SECRET_OVERLAP_MS)).toBeLessThan(5_000);
      await receiver.waitFor((hits) => hits.length > before + 1, 10_000, 'the retry after the rotation');
      const retry = receiver.received.at(-1)!;
      expect(retry.eventId).toBe(first.eventId);
      const signatures = String(retry.headers['webhook-signature']).split(' ');
      expect(signatures).toHaveLength(2);
      expect(verify(endpoint.secret, retry).id).toBe(first.eventId);
      expect(verify(rotated.secret, retry).id).toBe(first.eventId);
      // The new secret signs first; each entry alone verifies with its own secret.
      const only = (signature: string) => ({ ...retry, headers: { ...retry.headers, 'webhook-signature': signature } });
      expect(() => verify(rotated.secret, only(signatures[0]!))).not.toThrow();
      expect(() => verify(endpoint.secret, only(signatures[1]!))).not.toThrow();
      expect(() => verify(generateWebhookSecret(), retry)).toThrow(WebhookVerificationError);

      const audit = (await server.services.audit.list({ page: 1, limit: 5, actor: 'test' })).items.find(
        (e) => e.action === 'webhook.rotate_secret',
      );
      expect(audit).toBeDefined();
    } finally {
      receiver.respond = () => ({ status: 200 });
      await server.services.webhooks.remove(endpoint.id, { actor: 'test' });
    }
  });

  it('after the overlap only the new secret signs; a second rotation drops the oldest', async () => {
    const now = new Date('2026-01-01T00:00:00.000Z');
    const endpoint = {
      url: 'https://example.com/hooks',
      secret: generateWebhookSecret(),
      previousSecret: generateWebhookSecret(),
      previousSecretExpiresAt: new Date(now.getTime() + SECRET_OVERLAP_MS).toISOString(),
    };
    expect(signingSecrets(endpoint, now)).toEqual([endpoint.secret, endpoint.previousSecret]);
    const after = new Date(now.getTime() + SECRET_OVERLAP_MS + 1_000);
    expect(signingSecrets(endpoint, after)).toEqual([endpoint.secret]);

    const request = buildWebhookRequest(endpoint, sampleEvent('agent.registered'), { id: 'dlv_x', attemptNumber: 1, isTest: true }, after);
    const later = vi.spyOn(Date, 'now').mockReturnValue(after.getTime());
    try {
      expect(() => new Webhook(endpoint.secret).verify(request.body, request.headers)).not.toThrow();
      expect(() => new Webhook(endpoint.previousSecret).verify(request.body, request.headers)).toThrow(WebhookVerificationError);
    } finally {
      later.mockRestore();
    }

    const twice = await server.services.webhooks.add({ url: receiver.url }, { actor: 'test' });
    const second = await server.services.webhooks.rotateSecret(twice.id, { actor: 'test' });
    const third = await server.services.webhooks.rotateSecret(twice.id, { actor: 'test' });
    const { store } = server.services;
    const endpoints = store.t.webhookEndpoints;
    const row = await store.first(
      store.db
        .select({
          secret: endpoints.secret,
          previousSecret: endpoints.previousSecret,
          previousSecretExpiresAt: endpoints.previousSecretExpiresAt,
        })
        .from(endpoints)
        .where(eq(endpoints.id, twice.id)),
    );
    expect(row).toEqual({ secret: third.secret, previousSecret: second.secret, previousSecretExpiresAt: third.previous_secret_expires_at });
    await server.services.webhooks.remove(twice.id, { actor: 'test' });
  });
});
