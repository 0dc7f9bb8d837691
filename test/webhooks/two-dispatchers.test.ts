import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { createConfig, databasePath, type Config } from '../../src-api/config';
import { openDatabase } from '../../src-api/db/client';
import type { Clock } from '../../src-api/lib/clock';
import { INTERRUPTED_ERROR, newLeaseOwner } from '../../src-api/modules/webhooks/webhooks.queue';
import { createServices, type Services } from '../../src-api/services';
import { agentInput, makeTempDir } from '../helpers/test-server';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * Two services instances (two connections, as two processes would have) on
 * one SQLite file, each with a running dispatcher: every delivery is sent by
 * exactly one of them, never by both at once.
 */

const opened: Services[] = [];
const receivers: WebhookReceiver[] = [];

afterEach(async () => {
  for (const services of opened.splice(0)) {
    await services.webhookDispatcher.stop();
    services.db.$client.close();
  }
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

function open(config: Config, clock?: Clock): Services {
  const services = createServices({ db: openDatabase(databasePath(config)), config, ...(clock && { clock }) });
  opened.push(services);
  return services;
}

it('two dispatchers on one database share the work and never send one delivery twice or at once', async () => {
  const receiver = await startWebhookReceiver({ respond: () => ({ status: 200, delayMs: 5 }) });
  receivers.push(receiver);
  const config = createConfig({
    dataDir: makeTempDir(),
    allowPrivateUrls: true,
    // Each may hold all its 4 slots on the one endpoint: its cap counts both processes' sends, and at the
    // default cap (4) the process whose send just finished refilled the freed slot first, every time, so
    // on a loaded machine (sends slower than writes) one process could take every delivery.
    webhooks: { concurrency: 4, perEndpointConcurrency: 8, pollIntervalMs: 10, retryDelaysMs: [1_000], jitter: 0 },
  });
  const a = open(config);
  const b = open(config);
  const endpoint = await a.webhooks.add({ url: receiver.url }, { actor: 'test' });
  receiver.secret = endpoint.secret;
  a.webhookDispatcher.start();
  b.webhookDispatcher.start();

  // 300 events, written through both connections (each wakes its own dispatcher; the other polls).
  const EVENTS = 300;
  for (let i = 0; i < EVENTS; i++) {
    const writer = i % 2 === 0 ? a : b;
    await writer.agents.edits.create(agentInput({ name: `Shared ${i}` }), { emitEvents: true });
    if (i % 25 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await receiver.waitFor((hits) => new Set(hits.map((h) => h.eventId)).size === EVENTS, 30_000, `all ${EVENTS} events`);
  await receiver.waitForQuiet(200);

  const deliveryIds = receiver.received.map((h) => h.deliveryId);
  expect(new Set(deliveryIds).size).toBe(deliveryIds.length); // each delivery sent exactly once
  expect(receiver.received).toHaveLength(EVENTS);
  expect(receiver.overlappingDeliveries).toEqual([]);
  expect(receiver.received.every((h) => h.signatureValid && h.standardValid && h.attempt === 1)).toBe(true);
  await eventually(
    async () => ((await a.webhooks.queue.countByStatus()).succeeded === EVENTS ? true : undefined),
    'every delivery to be logged',
  );
  expect(await a.webhooks.queue.countByStatus()).toMatchObject({ succeeded: EVENTS, pending: 0, in_flight: 0, failed: 0 });

  const sentByA = a.webhookDispatcher.status().attemptsSent;
  const sentByB = b.webhookDispatcher.status().attemptsSent;
  expect(sentByA + sentByB).toBe(EVENTS);
  expect(sentByA).toBeGreaterThan(0);
  expect(sentByB).toBeGreaterThan(0);
});

it('a delivery whose lease ran out (its process died mid-send) is taken over, logged as interrupted, sent again', async () => {
  const receiver = await startWebhookReceiver();
  receivers.push(receiver);
  const config = createConfig({ dataDir: makeTempDir(), allowPrivateUrls: true, webhooks: { pollIntervalMs: 10, timeoutMs: 1_000 } });
  const crashed = open(config);
  const endpoint = await crashed.webhooks.add({ url: receiver.url }, { actor: 'test' });
  receiver.secret = endpoint.secret;
  await crashed.agents.edits.create(agentInput({ name: 'Half Sent' }), { emitEvents: true });

  // "Process A" claims the delivery and dies before sending or recording anything.
  const deadOwner = newLeaseOwner();
  const [claimed] = await crashed.webhooks.queue.claimDue(deadOwner, 10);
  expect(claimed).toBeDefined();
  const held = await crashed.webhooks.getDelivery(claimed!.deliveryId);
  expect(held).toMatchObject({ status: 'in_flight', attempt_count: 1 });

  // A live process still respects the lease…
  const early = open(config);
  early.webhookDispatcher.start();
  await new Promise((resolve) => setTimeout(resolve, 150));
  expect(receiver.received).toEqual([]);
  await early.webhookDispatcher.stop();

  // …and takes the delivery over once it has run out (a clock past lease = timeout + margin).
  const later = open(config, { now: () => new Date(Date.now() + 60_000) });
  later.webhookDispatcher.start();
  await receiver.waitFor((hits) => hits.length === 1, 10_000, 'the taken-over delivery');
  const delivery = await eventually(async () => {
    const d = await later.webhooks.getDelivery(claimed!.deliveryId);
    return d.status === 'succeeded' ? d : undefined;
  }, 'the delivery to succeed');
  expect(receiver.received[0]).toMatchObject({ deliveryId: claimed!.deliveryId, attempt: 1, signatureValid: true, standardValid: true });
  // Both attempts are in the log under number 1: the interrupted one does not spend the retry budget.
  expect(delivery.attempt_count).toBe(1);
  expect(delivery.attempts.map((a) => [a.attempt_number, a.status_code, a.error])).toEqual([
    [1, null, INTERRUPTED_ERROR],
    [1, 200, null],
  ]);

  // Should the dead process come back and report, its result decides nothing.
  expect(
    await crashed.webhooks.queue.recordOutcome(
      claimed!,
      { ok: false, statusCode: 500, latencyMs: 1, responseExcerpt: null, error: 'late' },
      deadOwner,
    ),
  ).toBeNull();
  expect((await later.webhooks.getDelivery(claimed!.deliveryId)).status).toBe('succeeded');
});

it('claiming is atomic: concurrent claims over two connections never hand out one delivery twice', async () => {
  // One endpoint: lift its in-flight cap so all 50 can be claimed (fairness is test/webhooks/fairness.test.ts).
  const config = createConfig({ dataDir: makeTempDir(), webhooks: { perEndpointConcurrency: 1_000 } });
  const a = open(config);
  const b = open(config);
  await a.webhooks.add({ url: 'https://hooks.example.com/in' }, { actor: 'test' });
  await a.store.transaction(async () => {
    for (let i = 0; i < 50; i++)
      await a.events.recordInTransaction('agent.updated', { agent_id: `a${i}`, name: `A${i}`, changed_fields: ['name'] });
  });
  const ownerA = newLeaseOwner();
  const ownerB = newLeaseOwner();
  const seen: string[] = [];
  for (let round = 0; round < 10; round++) {
    seen.push(...(await a.webhooks.queue.claimDue(ownerA, 3)).map((c) => c.deliveryId));
    seen.push(...(await b.webhooks.queue.claimDue(ownerB, 4)).map((c) => c.deliveryId));
  }
  expect(seen).toHaveLength(50);
  expect(new Set(seen).size).toBe(50);
  expect(await a.webhooks.queue.claimDue(ownerA, 10)).toEqual([]); // all leased, none expired
});

it('an idle poll takes no write lock: it does not wait behind another process writing', async () => {
  const config = createConfig({ dataDir: makeTempDir(), webhooks: {} });
  const services = open(config);
  await services.webhooks.add({ url: 'https://hooks.example.com/in' }, { actor: 'test' });
  // Another connection (a long `cli import`, say) holds the write lock.
  const writer = new Database(databasePath(config));
  writer.exec('BEGIN IMMEDIATE');
  try {
    const started = performance.now();
    expect(await services.webhooks.queue.claimDue(newLeaseOwner(), 8)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(1_000); // the busy timeout is 5 s
  } finally {
    writer.exec('ROLLBACK');
    writer.close();
  }
});
