import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookDeliveryDetail } from '../../src-api/modules/webhooks/webhooks.schemas';
import { agentInput, startTestServer, type TestServer } from '../helpers/test-server';
import {
  deliveriesOf,
  eventually,
  startWebhookReceiver,
  waitForDeliveryStatus,
  type ReceivedWebhook,
  type ReceiverAnswer,
  type WebhookReceiver,
} from '../helpers/webhook-receiver';

/**
 * Failing receivers get exactly the retries the schedule says, at the times
 * it says. The schedule is shortened to [50, 100, 150] ms without jitter:
 * 4 attempts, the 2nd 50 ms after the 1st failed, the 3rd 100 ms after the
 * 2nd, the 4th 150 ms after the 3rd, then "failed". The idle poll is 5 s, so
 * meeting those times shows the dispatcher wakes for retries by itself.
 */

const SCHEDULE = [50, 100, 150];
/** Long enough that a loaded machine never turns a 500 into a timeout; the timeout test waits it out 4 times. */
const TIMEOUT_MS = 1_000;
/** Timers may fire late on a busy machine, never early: a generous upper bound only. */
const LATE_TOLERANCE_MS = 700;

let fast: TestServer;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  fast = await startTestServer({
    allowPrivateUrls: true,
    webhooks: { retryDelaysMs: SCHEDULE, jitter: 0, timeoutMs: TIMEOUT_MS, pollIntervalMs: 5_000, disableAfterFailures: 50 },
  });
});
afterAll(async () => {
  await fast?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiverAnswering(respond: (hit: ReceivedWebhook) => ReceiverAnswer): Promise<WebhookReceiver> {
  const receiver = await startWebhookReceiver({ respond });
  receivers.push(receiver);
  return receiver;
}

/** A fresh endpoint for `url` receiving every kind; the caller removes it at the end of its test. */
async function endpointFor(server: TestServer, url: string, receiver?: WebhookReceiver) {
  const endpoint = await server.services.webhooks.add({ url }, { actor: 'test' });
  if (receiver) receiver.secret = endpoint.secret;
  return endpoint;
}

/** One real change that records one event; returns the event id. */
async function triggerEvent(server: TestServer, name: string): Promise<string> {
  const agent = await server.services.agents.edits.create(agentInput({ name }), { emitEvents: true });
  const event = (await server.services.events.listRecent(20)).find(
    (row) => row.type === 'agent.registered' && row.data.agent_id === agent.id,
  );
  return event!.id;
}

function expectScheduleGaps(arrivals: number[], failedAt: number[]): void {
  for (let n = 1; n < arrivals.length; n++) {
    const gap = arrivals[n]! - failedAt[n - 1]!;
    expect(gap).toBeGreaterThanOrEqual(SCHEDULE[n - 1]! - 2);
    expect(gap).toBeLessThan(SCHEDULE[n - 1]! + LATE_TOLERANCE_MS);
  }
}

/** From the attempt log: when each attempt started, and when it had failed (start + latency). */
function attemptTimes(delivery: WebhookDeliveryDetail): [number[], number[]] {
  const starts = delivery.attempts.map((attempt) => Date.parse(attempt.started_at));
  return [starts, delivery.attempts.map((attempt, n) => starts[n]! + (attempt.latency_ms ?? 0))];
}

function expectSameRequestEachAttempt(hits: ReceivedWebhook[], eventId: string): void {
  expect(hits.map((hit) => hit.attempt)).toEqual([1, 2, 3, 4]);
  expect(new Set(hits.map((hit) => hit.eventId))).toEqual(new Set([eventId]));
  expect(new Set(hits.map((hit) => hit.deliveryId)).size).toBe(1);
  expect(new Set(hits.map((hit) => hit.rawBody.toString('hex'))).size).toBe(1); // same bytes every attempt
  expect(hits.every((hit) => hit.signatureValid && hit.standardValid)).toBe(true);
}

function expectLoggedAttempts(delivery: WebhookDeliveryDetail, check: (attempt: WebhookDeliveryDetail['attempts'][number]) => void): void {
  expect(delivery.attempts.map((attempt) => attempt.attempt_number)).toEqual([1, 2, 3, 4]);
  for (const attempt of delivery.attempts) {
    expect(attempt.request_headers['X-Service-Delivery']).toBe(delivery.id);
    expect(attempt.request_headers['X-Service-Attempt']).toBe(String(attempt.attempt_number));
    expect(JSON.parse(attempt.request_body).id).toBe(delivery.event_id);
    expect(attempt.latency_ms).toBeGreaterThanOrEqual(0);
    check(attempt);
  }
}

describe('retries on the schedule', () => {
  it('500: four attempts at 0, +50, +100, +150 ms after each failure, then failed; response excerpts logged', async () => {
    const receiver = await receiverAnswering(() => ({ status: 500, body: 'receiver is broken' }));
    const endpoint = await endpointFor(fast, receiver.url, receiver);
    const eventId = await triggerEvent(fast, 'Retry Five Hundred');

    const delivery = await waitForDeliveryStatus(fast.services, endpoint.id, ['failed']);
    await receiver.waitForQuiet(400); // and no fifth attempt
    expect(receiver.received).toHaveLength(4);
    expectSameRequestEachAttempt(receiver.received, eventId);
    expectScheduleGaps(
      receiver.received.map((hit) => hit.receivedAtEpochMs),
      receiver.received.map((hit) => hit.receivedAtEpochMs),
    );
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 4, last_status_code: 500, next_attempt_at: null });
    expectLoggedAttempts(delivery, (attempt) => {
      expect(attempt.status_code).toBe(500);
      expect(attempt.response_excerpt).toBe('receiver is broken');
      expect(attempt.error).toBe('the receiver answered 500');
    });
    expect(await fast.services.webhooks.get(endpoint.id)).toMatchObject({ active: true, consecutive_failures: 4 });
    await fast.services.webhooks.remove(endpoint.id, { actor: 'test' });
  });

  it('timeout: an answer slower than timeoutMs is a failure; retried on the schedule', async () => {
    const receiver = await receiverAnswering(() => ({ hang: true }));
    const endpoint = await endpointFor(fast, receiver.url, receiver);
    const eventId = await triggerEvent(fast, 'Retry Timeout');

    const delivery = await waitForDeliveryStatus(fast.services, endpoint.id, ['failed'], 15_000);
    await receiver.waitForQuiet(400);
    expect(receiver.received).toHaveLength(4);
    expectSameRequestEachAttempt(receiver.received, eventId);
    // Each attempt fails when its deadline passes (start + latency), and the next starts the delay later.
    expectScheduleGaps(...attemptTimes(delivery));
    expectLoggedAttempts(delivery, (attempt) => {
      expect(attempt.status_code).toBeNull();
      expect(attempt.error).toMatch(/^timeout: /);
      expect(attempt.latency_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    });
    await fast.services.webhooks.remove(endpoint.id, { actor: 'test' });
  });

  it('302: a redirect is a failure and is never followed', async () => {
    const receiver = await receiverAnswering((hit) =>
      hit.path === '/hooks' ? { status: 302, headers: { location: '/elsewhere' } } : { status: 200, body: 'followed!' },
    );
    const endpoint = await endpointFor(fast, receiver.url, receiver);
    const eventId = await triggerEvent(fast, 'Retry Redirect');

    const delivery = await waitForDeliveryStatus(fast.services, endpoint.id, ['failed']);
    await receiver.waitForQuiet(400);
    expect(receiver.received.map((hit) => hit.path)).toEqual(['/hooks', '/hooks', '/hooks', '/hooks']); // never /elsewhere
    expectSameRequestEachAttempt(receiver.received, eventId);
    expectLoggedAttempts(delivery, (attempt) => {
      expect(attempt.status_code).toBe(302);
      expect(attempt.error).toContain('redirects are not followed');
    });
    await fast.services.webhooks.remove(endpoint.id, { actor: 'test' });
  });

  it('connection refused: four attempts logged with the error, on the schedule', async () => {
    const closedPort = await freePort();
    const endpoint = await endpointFor(fast, `http://127.0.0.1:${closedPort}/hooks`);
    await triggerEvent(fast, 'Retry Refused');

    const delivery = await waitForDeliveryStatus(fast.services, endpoint.id, ['failed']);
    expect(delivery.attempt_count).toBe(4);
    expectLoggedAttempts(delivery, (attempt) => {
      expect(attempt.status_code).toBeNull();
      expect(attempt.error).toBe('connection: the connection was refused');
    });
    expectScheduleGaps(...attemptTimes(delivery));
    await fast.services.webhooks.remove(endpoint.id, { actor: 'test' });
  });

  it('a 2xx after failures ends the retries and resets the failure count', async () => {
    let calls = 0;
    const receiver = await receiverAnswering(() => (++calls <= 2 ? { status: 503, body: 'busy' } : { status: 204 }));
    const endpoint = await endpointFor(fast, receiver.url, receiver);
    await triggerEvent(fast, 'Retry Then Succeed');

    const delivery = await waitForDeliveryStatus(fast.services, endpoint.id, ['succeeded']);
    await receiver.waitForQuiet(400);
    expect(receiver.received.map((hit) => hit.attempt)).toEqual([1, 2, 3]);
    expect(delivery).toMatchObject({ attempt_count: 3, last_status_code: 204, last_error: null });
    expect(delivery.attempts.map((attempt) => attempt.status_code)).toEqual([503, 503, 204]);
    expect((await fast.services.webhooks.get(endpoint.id)).consecutive_failures).toBe(0);
    await fast.services.webhooks.remove(endpoint.id, { actor: 'test' });
  });
});

describe('disabling endpoints', () => {
  /** Retries far off (5 s), so a failed delivery sits pending while the test looks at it. */
  let slow: TestServer;
  beforeAll(async () => {
    slow = await startTestServer({
      allowPrivateUrls: true,
      webhooks: { retryDelaysMs: [5_000, 5_000, 5_000], jitter: 0, timeoutMs: TIMEOUT_MS, pollIntervalMs: 5_000, disableAfterFailures: 3 },
    });
  });
  afterAll(() => slow?.close());

  it('410 Gone: no retry, the endpoint is disabled and what was waiting for it is cancelled', async () => {
    const receiver = await receiverAnswering((hit) =>
      hit.body?.data.name === 'Gone Second' ? { status: 410, body: 'gone' } : { status: 500, body: 'not yet' },
    );
    const endpoint = await endpointFor(slow, receiver.url, receiver);
    await triggerEvent(slow, 'Gone First');
    const waiting = await eventually(async () => {
      const [delivery] = await deliveriesOf(slow.services, endpoint.id);
      return delivery?.status === 'pending' && delivery.attempt_count === 1 ? delivery : undefined;
    }, 'the first delivery to fail once and wait for its retry');
    expect(Date.parse(waiting.next_attempt_at!)).toBeGreaterThan(Date.now() + 3_000); // retry in 5 s

    await triggerEvent(slow, 'Gone Second');
    const disabled = await eventually(async () => {
      const current = await slow.services.webhooks.get(endpoint.id);
      return current.active ? undefined : current;
    }, 'the endpoint to be disabled');
    expect(disabled.disabled_reason).toBe('the receiver answered 410 Gone');

    const [first, second] = await deliveriesOf(slow.services, endpoint.id);
    expect(first).toMatchObject({ status: 'cancelled', attempt_count: 1 });
    expect(first!.last_error).toContain('410 Gone');
    expect(second).toMatchObject({ status: 'failed', attempt_count: 1, last_status_code: 410 });

    // A disabled endpoint gets no new deliveries at all.
    await triggerEvent(slow, 'Gone Third');
    await receiver.waitForQuiet(300);
    expect(receiver.received).toHaveLength(2);
    expect(await deliveriesOf(slow.services, endpoint.id)).toHaveLength(2);
    const audit = (await slow.services.audit.list({ page: 1, limit: 10, entityId: endpoint.id })).items;
    expect(audit.some((entry) => entry.action === 'webhook.disable' && entry.actor === 'system:webhooks')).toBe(true);
    await slow.services.webhooks.remove(endpoint.id, { actor: 'test' });
  });

  it('disableAfterFailures consecutive failed attempts disable the endpoint and cancel its retries', async () => {
    const receiver = await receiverAnswering(() => ({ status: 500 }));
    const endpoint = await endpointFor(slow, receiver.url, receiver);
    for (const name of ['Streak One', 'Streak Two', 'Streak Three']) await triggerEvent(slow, name);

    const disabled = await eventually(async () => {
      const current = await slow.services.webhooks.get(endpoint.id);
      return current.active ? undefined : current;
    }, 'the endpoint to be disabled');
    expect(disabled).toMatchObject({ active: false, disabled_reason: '3 consecutive failed attempts', consecutive_failures: 3 });
    await receiver.waitForQuiet(300);
    expect(receiver.received).toHaveLength(3);
    const deliveries = await deliveriesOf(slow.services, endpoint.id);
    expect(deliveries.map((delivery) => delivery.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);

    // Enabling clears the count and the reason; cancelled deliveries can be sent again.
    receiver.respond = () => ({ status: 200 });
    const enabled = await slow.services.webhooks.setActive(endpoint.id, true, { actor: 'test' });
    expect(enabled).toMatchObject({ active: true, disabled_reason: null, consecutive_failures: 0 });
    const { redelivered } = await slow.services.webhooks.redeliverFailed(
      { since: new Date(Date.now() - 60_000).toISOString(), endpointId: endpoint.id, includeCancelled: true },
      { actor: 'test' },
    );
    expect(redelivered).toHaveLength(3);
    await receiver.waitFor((hits) => hits.length === 6, 10_000, 'the three redeliveries');
    const resent = receiver.received.slice(3);
    expect(new Set(resent.map((hit) => hit.eventId))).toEqual(new Set(receiver.received.slice(0, 3).map((hit) => hit.eventId)));
    await slow.services.webhooks.remove(endpoint.id, { actor: 'test' });
  });

  it('a moderator disabling an endpoint cancels what is waiting; nothing more is sent', async () => {
    const receiver = await receiverAnswering(() => ({ status: 500 }));
    const endpoint = await endpointFor(slow, receiver.url, receiver);
    await triggerEvent(slow, 'Moderated Off');
    await receiver.waitFor((hits) => hits.length === 1, 10_000, 'the first attempt');
    // The receiver may have answered before the dispatcher recorded it (the delivery is still in flight then).
    await eventually(async () => {
      const [delivery] = await deliveriesOf(slow.services, endpoint.id);
      return delivery?.attempt_count === 1 && delivery.status === 'pending' ? true : undefined;
    }, 'the retry to be scheduled');
    const disabled = await slow.services.webhooks.setActive(endpoint.id, false, { actor: 'moderator@test', reason: 'receiver retired' });
    expect(disabled).toMatchObject({ active: false, disabled_reason: 'receiver retired' });
    const [delivery] = await deliveriesOf(slow.services, endpoint.id);
    expect(delivery).toMatchObject({ status: 'cancelled', last_error: 'cancelled: endpoint disabled (receiver retired)' });
    await slow.services.webhooks.remove(endpoint.id, { actor: 'test' });
  });
});

/** A port with nothing listening on it. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
