import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentInput, startTestServer, type TestServer } from '../helpers/test-server';
import { deliveriesOf, eventually, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * Fairness across endpoints and what counts toward disabling one:
 * - a receiver answering at 9.9 s with a backlog holds at most
 *   perEndpointConcurrency slots; a fast endpoint's deliveries of the same
 *   events are not held up behind it;
 * - a destination whose name does not resolve is retried but never counted
 *   toward disabling the endpoint, while real HTTP failures are.
 */

const receivers: WebhookReceiver[] = [];

/** When the slow receivers' first answer went back (they answer 9.9 s after a delivery arrives). */
const SLOW_ANSWER_MS = 9_900;
function firstSlowAnswer(...slow: WebhookReceiver[]): number {
  return Math.min(...slow.flatMap((receiver) => receiver.received.map((hit) => hit.receivedAt))) + SLOW_ANSWER_MS;
}
/** The defaults (8 slots, at most 4 per endpoint, a 10 s deadline); a failed attempt is retried only after a minute. */
const FAIRNESS_SERVER = { allowPrivateUrls: true, webhooks: { retryDelaysMs: [60_000], jitter: 0 } };
function lastArrival(receiver: WebhookReceiver): number {
  return Math.max(...receiver.received.map((hit) => hit.receivedAt));
}
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

describe('per-endpoint fairness', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(FAIRNESS_SERVER);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('a slow receiver (9.9 s) with a backlog does not delay a fast one', async () => {
    const { concurrency, perEndpointConcurrency } = server.services.config.webhooks;
    expect(perEndpointConcurrency).toBeLessThan(concurrency);
    const slow = await startWebhookReceiver({ respond: () => ({ status: 200, delayMs: SLOW_ANSWER_MS }) });
    const fast = await startWebhookReceiver();
    receivers.push(slow, fast);
    // The slow endpoint is created first, so it also comes first in id order and in the backlog.
    const slowEndpoint = await server.services.webhooks.add({ url: slow.url, events: ['agent.registered'] }, { actor: 'test' });
    const fastEndpoint = await server.services.webhooks.add({ url: fast.url, events: ['agent.registered'] }, { actor: 'test' });
    slow.secret = slowEndpoint.secret;
    fast.secret = fastEndpoint.secret;

    const EVENTS = 20;
    for (let i = 0; i < EVENTS; i++) await server.services.agents.edits.create(agentInput({ name: `Fairness ${i}` }), { emitEvents: true });

    await fast.waitFor((hits) => hits.length === EVENTS, 12_000, `all ${EVENTS} deliveries at the fast receiver`);
    // Every fast delivery arrived before the first slow answer came back: none waited for a slot the slow one held.
    expect(lastArrival(fast)).toBeLessThan(firstSlowAnswer(slow));
    expect(fast.received.every((hit) => hit.signatureValid && hit.standardValid)).toBe(true);
    // The slow one holds its share and no more, and nothing else waits for it.
    expect(slow.maxConcurrent).toBe(perEndpointConcurrency);
    expect(slow.received.length).toBe(perEndpointConcurrency);
    // Once the fast answers are recorded, only the slow endpoint's share is still in flight.
    await eventually(
      () => (server.services.webhookDispatcher.status().inFlight === perEndpointConcurrency ? true : undefined),
      'only the slow deliveries in flight',
      3_000,
    );

    // When the slow answers come back, its next deliveries go out, still at most its share at a time.
    await slow.waitFor((hits) => hits.length > perEndpointConcurrency, 15_000, 'the slow endpoint to get its next deliveries');
    expect(slow.maxConcurrent).toBe(perEndpointConcurrency);
    await server.services.webhooks.remove(slowEndpoint.id, { actor: 'test' });
    await server.services.webhooks.remove(fastEndpoint.id, { actor: 'test' });
  }, 30_000);

  it('two slow receivers with backlogs share the slots with a fast one instead of taking them all', async () => {
    const { concurrency, perEndpointConcurrency } = server.services.config.webhooks;
    // Two endpoints at the fixed cap alone would fill every slot.
    expect(2 * perEndpointConcurrency).toBeGreaterThanOrEqual(concurrency);
    const slowA = await startWebhookReceiver({ respond: () => ({ status: 200, delayMs: SLOW_ANSWER_MS }) });
    const slowB = await startWebhookReceiver({ respond: () => ({ status: 200, delayMs: SLOW_ANSWER_MS }) });
    const fast = await startWebhookReceiver();
    receivers.push(slowA, slowB, fast);
    const endpoints = [];
    for (const receiver of [slowA, slowB, fast]) {
      const endpoint = await server.services.webhooks.add({ url: receiver.url, events: ['agent.registered'] }, { actor: 'test' });
      receiver.secret = endpoint.secret;
      endpoints.push(endpoint);
    }

    const EVENTS = 20;
    for (let i = 0; i < EVENTS; i++)
      await server.services.agents.edits.create(agentInput({ name: `Shared slots ${i}` }), { emitEvents: true });

    await fast.waitFor((hits) => hits.length === EVENTS, 12_000, `all ${EVENTS} deliveries at the fast receiver`);
    expect(lastArrival(fast)).toBeLessThan(firstSlowAnswer(slowA, slowB));
    expect(fast.received.every((hit) => hit.signatureValid && hit.standardValid)).toBe(true);
    // Once the fast one has nothing left, the two slow ones may use their whole cap again.
    expect(Math.max(slowA.maxConcurrent, slowB.maxConcurrent)).toBeLessThanOrEqual(perEndpointConcurrency);
    for (const endpoint of endpoints) await server.services.webhooks.remove(endpoint.id, { actor: 'test' });
  }, 30_000);
});

describe('a slot kept free for an endpoint with nothing to do', () => {
  // A server of its own: the tests above leave slow sends holding slots until they answer.
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(FAIRNESS_SERVER);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('an endpoint with nothing to do while two slow ones build backlogs still finds a slot free', async () => {
    const { concurrency, perEndpointConcurrency } = server.services.config.webhooks;
    const slowA = await startWebhookReceiver({ respond: () => ({ status: 200, delayMs: SLOW_ANSWER_MS }) });
    const slowB = await startWebhookReceiver({ respond: () => ({ status: 200, delayMs: SLOW_ANSWER_MS }) });
    const idle = await startWebhookReceiver();
    receivers.push(slowA, slowB, idle);
    // The idle endpoint hears only of updates, so the slow ones' backlogs build while it has nothing due.
    const subscriptions: Array<[WebhookReceiver, 'agent.registered' | 'agent.updated']> = [
      [slowA, 'agent.registered'],
      [slowB, 'agent.registered'],
      [idle, 'agent.updated'],
    ];
    const endpoints = [];
    for (const [receiver, event] of subscriptions) {
      const endpoint = await server.services.webhooks.add({ url: receiver.url, events: [event] }, { actor: 'test' });
      receiver.secret = endpoint.secret;
      endpoints.push(endpoint);
    }

    let lastAgentId = '';
    for (let i = 0; i < 2 * perEndpointConcurrency + 2; i++) {
      const agent = await server.services.agents.edits.create(agentInput({ name: `Reserve ${i}` }), { emitEvents: true });
      lastAgentId = agent.id;
    }
    // Both slow endpoints have more due than their cap: they take every slot but the one kept free.
    const heldBySlow = () => slowA.received.length + slowB.received.length;
    await eventually(() => (heldBySlow() === concurrency - 1 ? true : undefined), 'the slow endpoints to hold all slots but one', 5_000);
    // The kept slot and the capped backlogs are not something to poll for: the dispatcher waits
    // (its next look is at the poll interval, a finished send or a new delivery), it does not spin.
    const claimsBefore = server.services.webhookDispatcher.status().claims;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(server.services.webhookDispatcher.status().claims - claimsBefore).toBeLessThanOrEqual(2);

    await server.services.agents.edits.update(lastAgentId, { tagline: 'Updated while the slots are busy' });
    await idle.waitFor((hits) => hits.length === 1, 5_000, 'the update at the endpoint that was idle');
    expect(lastArrival(idle)).toBeLessThan(firstSlowAnswer(slowA, slowB));
    expect(heldBySlow()).toBe(concurrency - 1); // the slow endpoints did not take the kept slot meanwhile
    for (const endpoint of endpoints) await server.services.webhooks.remove(endpoint.id, { actor: 'test' });
  }, 30_000);
});

describe('what counts toward disabling an endpoint', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      allowPrivateUrls: true,
      webhooks: { retryDelaysMs: [20, 20, 20], jitter: 0, disableAfterFailures: 2, timeoutMs: 3_000 },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('a host name that does not resolve is retried but never disables the endpoint', async () => {
    const endpoint = await server.services.webhooks.add({ url: 'http://agent-directory-test.invalid/hooks' }, { actor: 'test' });
    await server.services.agents.edits.create(agentInput({ name: 'Unresolvable' }), { emitEvents: true });
    const [delivery] = await eventually(async () => {
      const found = await deliveriesOf(server.services, endpoint.id);
      return found[0]?.status === 'failed' ? found : undefined;
    }, 'the delivery to use up its attempts');
    expect(delivery!.attempts).toHaveLength(4);
    expect(delivery!.attempts.every((attempt) => attempt.status_code === null && /could not resolve/.test(attempt.error ?? ''))).toBe(true);
    // Four failed attempts, twice the limit, and the endpoint is still active with no failure counted.
    expect(await server.services.webhooks.get(endpoint.id)).toMatchObject({ active: true, consecutive_failures: 0, disabled_reason: null });
    await server.services.webhooks.remove(endpoint.id, { actor: 'test' });
  });

  it('real HTTP failures do count: two 500s disable it', async () => {
    const failing = await startWebhookReceiver({ respond: () => ({ status: 500 }) });
    receivers.push(failing);
    const endpoint = await server.services.webhooks.add({ url: failing.url }, { actor: 'test' });
    await server.services.agents.edits.create(agentInput({ name: 'Really Failing' }), { emitEvents: true });
    const disabled = await eventually(async () => {
      const current = await server.services.webhooks.get(endpoint.id);
      return current.active ? undefined : current;
    }, 'the endpoint to be disabled');
    expect(disabled).toMatchObject({ active: false, consecutive_failures: 2, disabled_reason: '2 consecutive failed attempts' });
    expect(failing.received).toHaveLength(2);
  });
});
