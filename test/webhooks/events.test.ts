import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src-api/services';
import { API_VERSION } from '../../src-api/version';
import { agentInput, json, servicesBeside, startTestServer, type TestServer } from '../helpers/test-server';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * Each of the five event kinds, triggered the way the product triggers it,
 * arrives at a real receiver with the documented data and a signature the
 * receiver verifies with its own HMAC code.
 */

let server: TestServer;
let receiver: WebhookReceiver;
let reviewsOnly: WebhookReceiver;
/** A second connection to the same database (SQLite) or a second pool (PostgreSQL), standing in for a CLI process. */
let other: Services;
let closeOther: (() => Promise<void>) | undefined;
/** What the receiver serves as the claim verification file. */
let claimToken = '';

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  reviewsOnly = await startWebhookReceiver();
  // Claim verification fetches <origin of source_url>/.well-known/agent-directory-claim.txt: the receiver serves it.
  receiver.respond = (hit) => (hit.method === 'GET' ? { status: 200, body: `token: ${claimToken}` } : { status: 200, body: 'ok' });
  server = await startTestServer({ allowPrivateUrls: true, webhooks: { pollIntervalMs: 100 } });
  const all = await server.services.webhooks.add({ url: receiver.url, description: 'everything' }, { actor: 'test' });
  receiver.secret = all.secret;
  const reviews = await server.services.webhooks.add({ url: reviewsOnly.url, events: ['review.created'] }, { actor: 'test' });
  reviewsOnly.secret = reviews.secret;
  ({ services: other, close: closeOther } = await servicesBeside(server.services.config));
});

afterAll(async () => {
  await closeOther?.();
  await server?.close();
  await receiver?.close();
  await reviewsOnly?.close();
});

const posts = (r: WebhookReceiver): ReceivedWebhook[] => r.received.filter((hit) => hit.method === 'POST');
const ofKind = (r: WebhookReceiver, kind: string): ReceivedWebhook[] => posts(r).filter((hit) => hit.body?.event === kind);

/** The received webhook of `kind` whose data matches, checked against the stored event and delivery. */
async function expectDelivered(kind: string, data: Record<string, unknown>, r: WebhookReceiver = receiver): Promise<ReceivedWebhook> {
  const matches = (hit: ReceivedWebhook) => hit.body?.event === kind && hit.body.data.agent_id === data.agent_id;
  await r.waitFor((hits) => hits.some(matches), 10_000, `${kind} for ${String(data.agent_id)}`);
  const hit = posts(r).filter(matches).at(-1)!;
  expect(hit.signatureValid).toBe(true);
  expect(hit.standardValid).toBe(true);
  expect(hit.body!.data).toEqual(data);

  const stored = (await server.services.events.get(hit.body!.id))!;
  expect(stored).toBeDefined();
  expect(stored.type).toBe(kind);
  expect(hit.body!.timestamp).toBe(stored.createdAt);
  expect(hit.body!.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  expect(Object.keys(hit.body!)).toEqual(['id', 'event', 'timestamp', 'data']);

  expect(hit.headers['content-type']).toBe('application/json');
  expect(hit.headers['user-agent']).toBe(`AgentDirectory-Webhooks/${API_VERSION}`);
  expect(hit.headers['x-service-event']).toBe(kind);
  expect(hit.headers['x-service-attempt']).toBe('1');
  expect(hit.headers['x-service-test']).toBeUndefined();
  const delivery = await server.services.webhooks.getDelivery(hit.deliveryId!);
  expect(delivery.event_id).toBe(stored.id);
  return hit;
}

describe('the five event kinds', () => {
  let agentId: string;

  it('agent.registered: agents.create with events', async () => {
    const agent = await server.services.agents.edits.create(
      agentInput({ name: 'Webhook Alpha', source_url: `http://127.0.0.1:${receiver.port}/alpha` }),
      { emitEvents: true },
    );
    agentId = agent.id;
    await expectDelivered('agent.registered', {
      agent_id: agent.id,
      name: 'Webhook Alpha',
      source_url: `http://127.0.0.1:${receiver.port}/alpha`,
    });
  });

  it('agent.updated: agents.update, with the names of the changed fields', async () => {
    await server.services.agents.edits.update(agentId, { tagline: 'A new tagline', capabilities: ['testing', 'webhooks'] });
    await expectDelivered('agent.updated', { agent_id: agentId, name: 'Webhook Alpha', changed_fields: ['tagline', 'capabilities'] });
  });

  it('review.created: POST /agents/{id}/reviews over HTTP, to the subscribed-to-reviews endpoint too', async () => {
    const response = await server.post(`/agents/${agentId}/reviews`, { rating: 4, comment: 'Solid', reviewer_name: 'Grace' });
    expect(response.status).toBe(201);
    const review = await json(response);
    const expected = {
      review_id: review.id,
      agent_id: agentId,
      rating: 4,
      comment: 'Solid',
      reviewer_name: 'Grace',
      created_at: review.created_at,
    };
    const hit = await expectDelivered('review.created', expected);
    const filtered = await expectDelivered('review.created', expected, reviewsOnly);
    expect(filtered.eventId).toBe(hit.eventId); // one event, two deliveries
    expect(filtered.deliveryId).not.toBe(hit.deliveryId);
  });

  it('claim.approved and agent.verified: a claim verified over HTTP through the well-known file', async () => {
    const created = await server.post('/claims', { agent_id: agentId, claimant_name: 'Alpha Labs', claimant_email: 'owner@example.com' });
    expect(created.status).toBe(201);
    const claim = await json(created);
    claimToken = claim.verification.token;
    const verified = await server.post(`/claims/${claim.id}/verify`, {});
    expect(verified.status).toBe(200);
    await expectDelivered('claim.approved', { claim_id: claim.id, agent_id: agentId, claimant_name: 'Alpha Labs', method: 'well-known' });
    await expectDelivered('agent.verified', { agent_id: agentId, name: 'Webhook Alpha', via: 'claim' });
  });

  it('agent.verified: agents.setVerified by a moderator', async () => {
    const agent = await server.services.agents.edits.create(agentInput({ name: 'Webhook Beta' }), { emitEvents: false });
    await server.services.agents.edits.setVerified(agent.id, true, { actor: 'moderator@test' });
    await expectDelivered('agent.verified', { agent_id: agent.id, name: 'Webhook Beta', via: 'moderator' });
  });

  it('an endpoint subscribed to one kind receives only that kind', async () => {
    await receiver.waitForQuiet(150);
    expect(posts(reviewsOnly).length).toBeGreaterThan(0);
    expect(posts(reviewsOnly).every((hit) => hit.body?.event === 'review.created')).toBe(true);
    expect(ofKind(receiver, 'agent.registered')).toHaveLength(1); // only Alpha emitted one
  });

  it('sends nothing for a change that rolls back: the event and its deliveries commit together', async () => {
    const before = (await server.services.webhooks.listDeliveries({ limit: 100 })).total;
    await expect(
      server.services.store.transaction(async () => {
        await server.services.events.recordInTransaction('agent.updated', {
          agent_id: 'rolled-back',
          name: 'Never',
          changed_fields: ['name'],
        });
        throw new Error('the change fails after the event was recorded');
      }),
    ).rejects.toThrow('the change fails');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await server.services.webhooks.listDeliveries({ limit: 100 })).total).toBe(before);
    expect(posts(receiver).some((hit) => hit.body?.data.agent_id === 'rolled-back')).toBe(false);
  });
});

describe('other processes on the same data dir', () => {
  it('an endpoint added by another connection (as the CLI does) receives the next events without a restart', async () => {
    const late = await startWebhookReceiver();
    try {
      const endpoint = await other.webhooks.add({ url: late.url }, { actor: 'cli' });
      late.secret = endpoint.secret;
      const agent = await server.services.agents.edits.create(agentInput({ name: 'Webhook Gamma' }), { emitEvents: false });
      const response = await server.post(`/agents/${agent.id}/reviews`, { rating: 5 });
      expect(response.status).toBe(201);
      await late.waitFor((hits) => hits.some((hit) => hit.body?.event === 'review.created'), 10_000, 'the review at the late endpoint');
      expect(late.received.every((hit) => hit.signatureValid && hit.standardValid)).toBe(true);
      await other.webhooks.remove(endpoint.id, { actor: 'cli' });
    } finally {
      await late.close();
    }
  });

  it("the server's dispatcher delivers events recorded by another process (found by polling)", async () => {
    const agent = await other.agents.edits.create(agentInput({ name: 'Webhook Delta' }), { emitEvents: true });
    await expectDelivered('agent.registered', { agent_id: agent.id, name: 'Webhook Delta', source_url: agent.sourceUrl });
    // The other connection never runs a dispatcher: the server's sent it.
    expect(other.webhookDispatcher.status()).toMatchObject({ running: false, attemptsSent: 0 });
  });

  it('every request the receiver got carried a valid signature', () => {
    expect(posts(receiver).length).toBeGreaterThanOrEqual(7);
    expect(posts(receiver).filter((hit) => !hit.signatureValid || !hit.standardValid)).toEqual([]);
    expect(posts(reviewsOnly).filter((hit) => !hit.signatureValid || !hit.standardValid)).toEqual([]);
  });
});
