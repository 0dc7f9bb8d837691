import { eq } from 'drizzle-orm';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { defaultConfig, type Config } from '../../src-api/config';
import type { Store } from '../../src-api/db/store';
import type { Clock } from '../../src-api/lib/clock';
import { createAuditService, type AuditService } from '../../src-api/modules/audit/audit.service';
import { createEventsService, type EventsService } from '../../src-api/modules/events/events.service';
import { createWebhookDispatcher, type WebhookDispatcher } from '../../src-api/modules/webhooks/webhooks.dispatcher';
import { INTERRUPTED_ERROR, newLeaseOwner } from '../../src-api/modules/webhooks/webhooks.queue';
import { createWebhookSender } from '../../src-api/modules/webhooks/webhooks.sender';
import { createWebhooksService, type WebhooksService } from '../../src-api/modules/webhooks/webhooks.service';
import { bothStores } from '../helpers/both-stores';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * The delivery queue and the dispatcher on the data-access seam, on SQLite and
 * PostgreSQL 15, against a real receiver that checks both signatures: two
 * dispatchers (two stores, as two processes have: two connections or two
 * pools) on one database drain one queue and deliver each delivery exactly
 * once; claims made at the same moment never share a delivery (SKIP LOCKED on
 * PostgreSQL); an expired lease is taken over; retries, backoff, dead-lettering
 * and disabling are recorded through the store.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

interface Process {
  store: Store;
  audit: AuditService;
  events: EventsService;
  webhooks: WebhooksService;
  dispatcher: WebhookDispatcher;
}

describe.each(stores.dialects)('webhook dispatch on $dialect', ({ open, openAgain }) => {
  const receivers: WebhookReceiver[] = [];
  const dispatchers: WebhookDispatcher[] = [];
  let counter = 0;
  // One id sequence for every "process" of a test: their ids never collide.
  const ids = { next: (prefix: string) => `${prefix}_${String(++counter).padStart(6, '0')}`, agent: () => 'agt_unused' };

  afterEach(async () => {
    for (const dispatcher of dispatchers.splice(0)) await dispatcher.stop();
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });

  const receiver = async (respond?: WebhookReceiver['respond']) => {
    const started = await startWebhookReceiver(respond ? { respond } : {});
    receivers.push(started);
    return started;
  };

  /** A process: services on its own store (connection or pool), and a dispatcher, not started. */
  const processOn = (store: Store, webhooks: Partial<Config['webhooks']> = {}, clock: Clock = { now: () => new Date() }): Process => {
    const config = { webhooks: { ...defaultConfig.webhooks, jitter: 0, pollIntervalMs: 10, ...webhooks }, allowPrivateUrls: true };
    const audit = createAuditService({ store, clock, ids });
    const events = createEventsService({ store, clock, ids });
    const send = createWebhookSender();
    const service = createWebhooksService({ store, clock, ids, events, audit, config, send });
    const dispatcher = createWebhookDispatcher({ queue: service.queue, clock, config, send, log: () => {} });
    dispatchers.push(dispatcher);
    return { store, audit, events, webhooks: service, dispatcher };
  };

  const record = (process: Process, i: number) =>
    process.store.transaction(() =>
      process.events.recordInTransaction('agent.updated', { agent_id: `agt_${i}`, name: `A${i}`, changed_fields: ['name'] }),
    );

  it('two dispatchers on one database deliver each delivery exactly once', async () => {
    const storeA = await open();
    const storeB = await openAgain(storeA);
    // Each may hold every slot of the endpoint (its cap counts both processes' sends).
    const a = processOn(storeA, { concurrency: 4, perEndpointConcurrency: 8 });
    const b = processOn(storeB, { concurrency: 4, perEndpointConcurrency: 8 });
    const hooks = await receiver(() => ({ status: 200, delayMs: 2 }));
    const endpoint = await a.webhooks.add({ url: hooks.url }, { actor: 'test' });
    hooks.secret = endpoint.secret;
    a.dispatcher.start();
    b.dispatcher.start();
    const EVENTS = 200;
    for (let i = 0; i < EVENTS; i++) await record(i % 2 === 0 ? a : b, i);
    await hooks.waitFor((hits) => new Set(hits.map((hit) => hit.eventId)).size === EVENTS, 60_000, `all ${EVENTS} events`);
    await hooks.waitForQuiet(200);

    const deliveryIds = hooks.received.map((hit) => hit.deliveryId);
    expect(hooks.received).toHaveLength(EVENTS);
    expect(new Set(deliveryIds).size).toBe(EVENTS); // each delivery sent exactly once
    expect(hooks.overlappingDeliveries).toEqual([]);
    expect(hooks.received.every((hit) => hit.signatureValid && hit.standardValid && hit.attempt === 1)).toBe(true);
    await eventually(async () => ((await a.webhooks.queue.countByStatus()).succeeded === EVENTS ? true : undefined), 'every outcome');
    expect(await b.webhooks.queue.countByStatus()).toEqual({ pending: 0, in_flight: 0, succeeded: EVENTS, failed: 0, cancelled: 0 });
    const sent = [a.dispatcher.status().attemptsSent, b.dispatcher.status().attemptsSent];
    expect(sent[0]! + sent[1]!).toBe(EVENTS);
    expect(Math.min(...sent)).toBeGreaterThan(0); // both took part
  }, 90_000);

  it('claims made at the same moment on two stores never hand out one delivery twice', async () => {
    const storeA = await open();
    const storeB = await openAgain(storeA);
    const a = processOn(storeA, { perEndpointConcurrency: 1_000 });
    const b = processOn(storeB, { perEndpointConcurrency: 1_000 });
    await a.webhooks.add({ url: 'https://hooks.example.org/in' }, { actor: 'test' });
    for (let i = 0; i < 60; i++) await record(a, i);
    const [ownerA, ownerB] = [newLeaseOwner(), newLeaseOwner()];
    const seen: string[] = [];
    for (let round = 0; round < 10; round++) {
      // PostgreSQL: both claims in flight at once. SQLite: one after the other (two connections
      // in one process cannot interleave transactions: the second BEGIN IMMEDIATE would block the
      // event loop the first needs to commit; between processes the write lock serialises them).
      const claims =
        storeA.dialect === 'postgres'
          ? await Promise.all([a.webhooks.queue.claimDue(ownerA, 4), b.webhooks.queue.claimDue(ownerB, 5)])
          : [await a.webhooks.queue.claimDue(ownerA, 4), await b.webhooks.queue.claimDue(ownerB, 5)];
      for (const claimed of claims) seen.push(...claimed.map((attempt) => attempt.deliveryId));
    }
    expect(seen).toHaveLength(60);
    expect(new Set(seen).size).toBe(60);
    expect(await a.webhooks.queue.claimDue(ownerA, 10)).toEqual([]); // all leased, none expired
    expect(await a.webhooks.queue.countByStatus()).toMatchObject({ pending: 0, in_flight: 60 });
  });

  it("claims made at the same moment on two stores keep an endpoint's cap, counting both processes' sends", async () => {
    const CAP = 3;
    const storeA = await open();
    const storeB = await openAgain(storeA);
    const a = processOn(storeA, { concurrency: 100, perEndpointConcurrency: CAP }); // a share of 100 slots is never below CAP
    const b = processOn(storeB, { concurrency: 100, perEndpointConcurrency: CAP });
    const [ownerA, ownerB] = [newLeaseOwner(), newLeaseOwner()];
    const { webhookDeliveries: deliveries } = storeA.t;
    // Each round a new endpoint with plenty due; the earlier ones stay at their cap (their sends are never finished).
    for (let round = 0; round < 5; round++) {
      const endpoint = await a.webhooks.add({ url: `https://hooks.example.org/in/${round}` }, { actor: 'test' });
      for (let i = 0; i < 10; i++) await record(a, round * 10 + i);
      // As in the case above: at once on PostgreSQL, one after the other on SQLite.
      const claims =
        storeA.dialect === 'postgres'
          ? await Promise.all([a.webhooks.queue.claimDue(ownerA, 8), b.webhooks.queue.claimDue(ownerB, 8)])
          : [await a.webhooks.queue.claimDue(ownerA, 8), await b.webhooks.queue.claimDue(ownerB, 8)];
      expect(claims.flat().map((attempt) => attempt.endpointId)).toEqual(Array(CAP).fill(endpoint.id));
      const inFlight = await storeA.rows(
        storeA.db.select({ id: deliveries.id }).from(deliveries).where(eq(deliveries.status, 'in_flight')),
      );
      expect(inFlight).toHaveLength(CAP * (round + 1));
    }
  });

  it('a delivery whose lease ran out is taken over: logged as interrupted, sent again, the late result ignored', async () => {
    const store = await open();
    const crashed = processOn(store, { timeoutMs: 1_000 });
    const hooks = await receiver();
    const endpoint = await crashed.webhooks.add({ url: hooks.url }, { actor: 'test' });
    hooks.secret = endpoint.secret;
    await record(crashed, 1);
    const deadOwner = newLeaseOwner();
    const [claimed] = await crashed.webhooks.queue.claimDue(deadOwner, 10);
    expect(await crashed.webhooks.getDelivery(claimed!.deliveryId)).toMatchObject({ status: 'in_flight', attempt_count: 1 });

    // A live dispatcher respects the lease…
    const early = processOn(store, { timeoutMs: 1_000 });
    early.dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(hooks.received).toEqual([]);
    await early.dispatcher.stop();

    // …and one whose clock is past the lease takes the delivery over.
    const later = processOn(store, { timeoutMs: 1_000 }, { now: () => new Date(Date.now() + 60_000) });
    later.dispatcher.start();
    await hooks.waitFor((hits) => hits.length === 1, 10_000, 'the taken-over delivery');
    const delivery = await eventually(async () => {
      const found = await later.webhooks.getDelivery(claimed!.deliveryId);
      return found.status === 'succeeded' ? found : undefined;
    }, 'the delivery to succeed');
    expect(hooks.received[0]).toMatchObject({ deliveryId: claimed!.deliveryId, attempt: 1, signatureValid: true });
    expect(delivery.attempt_count).toBe(1);
    expect(delivery.attempts.map((attempt) => [attempt.attempt_number, attempt.status_code, attempt.error])).toEqual([
      [1, null, INTERRUPTED_ERROR],
      [1, 200, null],
    ]);
    const late = { ok: false, statusCode: 500, latencyMs: 1, responseExcerpt: null, error: 'late' };
    expect(await crashed.webhooks.queue.recordOutcome(claimed!, late, deadOwner)).toBeNull();
    expect((await later.webhooks.getDelivery(claimed!.deliveryId)).status).toBe('succeeded');
  });

  it('retries on the schedule and fails after the last attempt; too many failures disable the endpoint and cancel its queue', async () => {
    const store = await open();
    const worker = processOn(store, { retryDelaysMs: [20, 40], disableAfterFailures: 5 });
    const failing = await receiver(() => ({ status: 500, body: 'down' }));
    const endpoint = await worker.webhooks.add({ url: failing.url }, { actor: 'test' });
    failing.secret = endpoint.secret;
    await record(worker, 1);
    worker.dispatcher.start();
    const failed = await eventually(async () => {
      const [found] = (await worker.webhooks.listDeliveries({ endpointId: endpoint.id })).items;
      return found?.status === 'failed' ? found : undefined;
    }, 'the delivery to fail');
    const detail = await worker.webhooks.getDelivery(failed.id);
    expect(detail).toMatchObject({ attempt_count: 3, last_status_code: 500, next_attempt_at: null });
    expect(detail.attempts.map((attempt) => [attempt.attempt_number, attempt.status_code])).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
    ]);
    const gaps = [1, 2].map((n) => failing.received[n]!.receivedAtEpochMs - failing.received[n - 1]!.receivedAtEpochMs);
    expect(gaps[0]).toBeGreaterThanOrEqual(15); // the schedule: 20 ms, then 40 ms (ms clocks)
    expect(gaps[1]).toBeGreaterThanOrEqual(35);
    expect(await worker.webhooks.get(endpoint.id)).toMatchObject({ active: true, consecutive_failures: 3 });

    // Two more failed attempts reach disableAfterFailures (5): disabled by the dispatcher, its queue cancelled.
    await worker.dispatcher.stop();
    await record(worker, 2);
    await record(worker, 3);
    worker.dispatcher.start();
    const disabled = await eventually(async () => {
      const current = await worker.webhooks.get(endpoint.id);
      return current.active ? undefined : current;
    }, 'the endpoint to be disabled');
    expect(disabled).toMatchObject({ disabled_reason: '5 consecutive failed attempts' });
    await worker.dispatcher.stop();
    const statuses = (await worker.webhooks.listDeliveries({ endpointId: endpoint.id })).items.map((delivery) => delivery.status).sort();
    expect(statuses).toEqual(['cancelled', 'cancelled', 'failed']);
    const entries = await worker.audit.list({ page: 1, limit: 10, entityId: endpoint.id });
    expect(entries.items[0]).toMatchObject({ actor: 'system:webhooks', action: 'webhook.disable' });
    const row = await store.first(
      store.db.select().from(store.t.webhookDeliveries).where(eq(store.t.webhookDeliveries.endpointId, endpoint.id)).limit(1),
    );
    expect(row).toMatchObject({ leaseOwner: null, leaseExpiresAt: null });
  });

  it('a 410 Gone disables the endpoint at once', async () => {
    const store = await open();
    const worker = processOn(store);
    const gone = await receiver(() => ({ status: 410 }));
    const endpoint = await worker.webhooks.add({ url: gone.url }, { actor: 'test' });
    await record(worker, 1);
    worker.dispatcher.start();
    const disabled = await eventually(async () => {
      const current = await worker.webhooks.get(endpoint.id);
      return current.active ? undefined : current;
    }, 'the endpoint to be disabled');
    expect(disabled).toMatchObject({ disabled_reason: 'the receiver answered 410 Gone', consecutive_failures: 1 });
    const [delivery] = (await worker.webhooks.listDeliveries({ endpointId: endpoint.id })).items;
    expect(delivery).toMatchObject({ status: 'failed', last_status_code: 410, attempt_count: 1 });
  });
});
