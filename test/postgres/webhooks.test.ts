import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig, type Config } from '../../src-api/config';
import type { Store } from '../../src-api/db/store';
import { NotFoundError, StaleVersionError } from '../../src-api/errors';
import { createAuditService, type AuditService } from '../../src-api/modules/audit/audit.service';
import { createEventsService, type EventsService } from '../../src-api/modules/events/events.service';
import { createWebhooksService, type WebhooksService } from '../../src-api/modules/webhooks/webhooks.service';
import { bothStores } from '../helpers/both-stores';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * The webhooks service on the data-access seam, on SQLite and PostgreSQL 15:
 * endpoints (add, read, change with a version check, enable/disable, secret
 * rotation, removal with the delivery log, an account's endpoints in the
 * closing transaction), the delivery log, redelivery and test sends to a real
 * receiver that checks both signatures. The dispatcher's side is in
 * webhook-dispatch.test.ts; the HTTP, tRPC and CLI side on SQLite in test/webhooks and test/api.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

describe.each(stores.dialects)('webhooks on $dialect', ({ open }) => {
  let store: Store;
  let audit: AuditService;
  let events: EventsService;
  let webhooks: WebhooksService;
  let receiver: WebhookReceiver;
  let now = new Date('2025-05-01T10:00:00.000Z');
  let counter = 0;
  const ids = { next: (prefix: string) => `${prefix}_${String(++counter).padStart(5, '0')}`, agent: () => 'agt_unused' };
  const tick = (ms: number) => (now = new Date(now.getTime() + ms));
  const config: Pick<Config, 'webhooks' | 'allowPrivateUrls'> = {
    webhooks: { ...defaultConfig.webhooks, jitter: 0 },
    allowPrivateUrls: true,
  };
  const auditOf = async (entityId: string) =>
    (await audit.list({ page: 1, limit: 50, entityId })).items.map((entry) => `${entry.actor} ${entry.action}`).reverse();
  const countOf = async (table: 'webhookDeliveries' | 'webhookAttempts' | 'webhookEndpoints') =>
    (await store.first(store.db.select({ n: count() }).from(store.t[table])))?.n ?? 0;
  const record = (data: Record<string, unknown>) => store.transaction(() => events.recordInTransaction('agent.updated', data));

  beforeAll(async () => {
    store = await open();
    const clock = { now: () => now };
    audit = createAuditService({ store, clock, ids });
    events = createEventsService({ store, clock, ids });
    webhooks = createWebhooksService({ store, clock, ids, events, audit, config });
    receiver = await startWebhookReceiver();
  }, 180_000);
  afterAll(() => receiver?.close());

  it('adds, lists and reads endpoints (never their secrets), audited with the actor', async () => {
    const created = await webhooks.add(
      { url: 'https://hooks.example.org/a', events: ['agent.updated'], description: ' A ' },
      { actor: 'alice' },
    );
    expect(created).toMatchObject({
      url: 'https://hooks.example.org/a',
      events: ['agent.updated'],
      description: 'A',
      version: 1,
      active: true,
    });
    expect(created.secret).toMatch(/^whsec_/);
    tick(1000);
    const owned = await webhooks.add(
      { url: 'https://hooks.example.org/b', scope: 'owned' },
      { actor: 'account:acc_1', ownerAccountId: 'acc_1' },
    );
    expect((await webhooks.list()).map((endpoint) => endpoint.id)).toEqual([created.id, owned.id]);
    expect(JSON.stringify(await webhooks.list())).not.toContain('whsec_');
    expect(await webhooks.get(created.id)).not.toHaveProperty('secret');
    expect(await webhooks.getOwned('acc_1', owned.id)).toMatchObject({ id: owned.id, scope: 'owned', owner_account_id: 'acc_1' });
    await expect(webhooks.getOwned('acc_2', owned.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(webhooks.get('whk_none')).rejects.toBeInstanceOf(NotFoundError);
    expect(await webhooks.countForAccount('acc_1')).toBe(1);
    expect((await webhooks.listForAccount('acc_1')).map((endpoint) => [endpoint.id, endpoint.last_delivery])).toEqual([[owned.id, null]]);
    expect((await webhooks.revealSecret(created.id, { actor: 'bob' })).secret).toBe(created.secret);
    expect(await auditOf(created.id)).toEqual(['alice webhook.create', 'bob webhook.reveal_secret']);
  });

  it('updates with a version check; concurrent changes of one endpoint apply one after the other', async () => {
    const created = await webhooks.add({ url: 'https://hooks.example.org/v1' }, { actor: 'alice' });
    const updated = await webhooks.update(created.id, { url: 'https://hooks.example.org/v2' }, { actor: 'alice', expectedVersion: 1 });
    expect(updated).toMatchObject({ url: 'https://hooks.example.org/v2', version: 2 });
    await expect(webhooks.update(created.id, { description: 'late' }, { actor: 'bob', expectedVersion: 1 })).rejects.toBeInstanceOf(
      StaleVersionError,
    );
    // Three changes at once, each expecting version 2: one wins, the others see its version (FOR UPDATE on PostgreSQL).
    const results = await Promise.allSettled(
      ['x', 'y', 'z'].map((description) => webhooks.update(created.id, { description }, { actor: 'carol', expectedVersion: 2 })),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((result) => result.status === 'rejected' && result.reason instanceof StaleVersionError)).toHaveLength(2);
    // Two rotations at once: both apply, the second keeps the first's secret as the previous one.
    const [first, second] = await Promise.all([
      webhooks.rotateSecret(created.id, { actor: 'carol' }),
      webhooks.rotateSecret(created.id, { actor: 'carol' }),
    ]);
    expect(new Set([first.version, second.version])).toEqual(new Set([4, 5]));
    const last = first.version > second.version ? first : second;
    const row = await store.first(store.db.select().from(store.t.webhookEndpoints).where(eq(store.t.webhookEndpoints.id, created.id)));
    expect(row).toMatchObject({ secret: last.secret, previousSecret: (last === first ? second : first).secret, version: 5 });
  });

  it('disabling cancels what waits for the endpoint; enabling clears the failures; redeliverFailed sends the cancelled again', async () => {
    const endpoint = await webhooks.add({ url: 'https://hooks.example.org/off', events: ['agent.updated'] }, { actor: 'alice' });
    const event = await record({ agent_id: 'agt_x', name: 'X', changed_fields: ['name'] });
    const before = await webhooks.listDeliveries({ endpointId: endpoint.id });
    expect(before.items.map((delivery) => [delivery.event_id, delivery.status])).toEqual([[event.id, 'pending']]);
    tick(1000);
    const disabled = await webhooks.setActive(endpoint.id, false, { actor: 'alice', reason: 'maintenance' });
    expect(disabled).toMatchObject({ active: false, disabled_reason: 'maintenance', version: 2 });
    const cancelled = await webhooks.getDelivery(before.items[0]!.id);
    expect(cancelled).toMatchObject({ status: 'cancelled', last_error: 'cancelled: endpoint disabled (maintenance)', attempts: [] });
    await expect(webhooks.redeliver(cancelled.id, { actor: 'alice' })).rejects.toThrow(/disabled/);
    await webhooks.setActive(endpoint.id, true, { actor: 'alice' });
    const since = new Date(now.getTime() - 60_000).toISOString();
    const again = await webhooks.redeliverFailed({ since, endpointId: endpoint.id, includeCancelled: true }, { actor: 'alice' });
    expect(again).toEqual({ redelivered: [expect.stringMatching(/^dlv_/)], skipped: 0 });
    const redelivered = await webhooks.redeliver(cancelled.id, { actor: 'bob' });
    expect(redelivered).toMatchObject({ event_id: event.id, endpoint_id: endpoint.id, status: 'pending', attempt_count: 0 });
    const log = await webhooks.listDeliveries({ endpointId: endpoint.id, limit: 10 });
    expect(log.total).toBe(3);
    expect(log.items.map((delivery) => delivery.status)).toEqual(['pending', 'pending', 'cancelled']);
    expect(await webhooks.listDeliveries({ endpointId: endpoint.id, status: 'cancelled' })).toMatchObject({ total: 1 });
    expect(await webhooks.listDeliveries({ endpointId: endpoint.id, eventType: 'review.created' })).toMatchObject({ total: 0 });
    expect(await auditOf(endpoint.id)).toEqual([
      'alice webhook.create',
      'alice webhook.disable',
      'alice webhook.enable',
      'alice webhook.redeliver_failed',
    ]);
  });

  it('a test send goes to a real receiver, signed both ways, and is logged as one attempt', async () => {
    const endpoint = await webhooks.add({ url: receiver.url, events: ['review.created'] }, { actor: 'alice' });
    receiver.secret = endpoint.secret;
    now = new Date(); // the receiver checks webhook-timestamp against its own clock
    const preview = await webhooks.preview(endpoint.id, 'claim.approved');
    const result = await webhooks.sendTest(endpoint.id, 'claim.approved', { actor: 'alice' });
    expect(result).toMatchObject({ ok: true, status_code: 200, event: 'claim.approved' });
    const hit = receiver.received.at(-1)!;
    expect(hit).toMatchObject({ signatureValid: true, standardValid: true, isTest: true, deliveryId: result.delivery_id });
    expect(hit.rawBody.toString('utf8')).toBe(preview.previews[0]!.body);
    const logged = await webhooks.getDelivery(result.delivery_id);
    expect(logged).toMatchObject({ status: 'succeeded', is_test: true, attempt_count: 1, last_status_code: 200 });
    expect(logged.attempts).toHaveLength(1);
    expect(logged.attempts[0]).toMatchObject({ attempt_number: 1, status_code: 200, error: null });
    expect(logged.attempts[0]!.request_headers['webhook-id']).toBe(hit.headers['webhook-id']);
    await expect(webhooks.redeliver(result.delivery_id, { actor: 'alice' })).rejects.toThrow(/test delivery/);
    const listed = (await webhooks.listWithLastDelivery()).find((summary) => summary.id === endpoint.id)!;
    expect(listed.last_delivery).toMatchObject({ id: result.delivery_id, status: 'succeeded' });
    expect(await auditOf(endpoint.id)).toEqual(['alice webhook.create', 'alice webhook.test']);
  });

  it("removes an endpoint with its delivery log; an account's endpoints go in the closing transaction, or stay when it rolls back", async () => {
    const endpoint = await webhooks.add({ url: 'http://127.0.0.1:1/gone' }, { actor: 'alice' });
    await record({ agent_id: 'agt_y', name: 'Y', changed_fields: ['name'] });
    const sent = await webhooks.sendTest(endpoint.id, 'agent.updated', { actor: 'alice' }); // refused: a failed attempt row
    expect(sent.ok).toBe(false);
    expect((await webhooks.listDeliveries({ endpointId: endpoint.id })).total).toBe(2);
    const [deliveriesBefore, attemptsBefore] = [await countOf('webhookDeliveries'), await countOf('webhookAttempts')];
    await webhooks.remove(endpoint.id, { actor: 'bob' });
    expect([await countOf('webhookDeliveries'), await countOf('webhookAttempts')]).toEqual([deliveriesBefore - 2, attemptsBefore - 1]);
    await expect(webhooks.get(endpoint.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(webhooks.remove(endpoint.id, { actor: 'bob' })).rejects.toBeInstanceOf(NotFoundError);
    expect((await auditOf(endpoint.id)).at(-1)).toBe('bob webhook.delete');

    const mine = await webhooks.add({ url: 'https://hooks.example.org/mine' }, { actor: 'account:acc_9', ownerAccountId: 'acc_9' });
    await webhooks.add({ url: 'https://hooks.example.org/mine2' }, { actor: 'account:acc_9', ownerAccountId: 'acc_9' });
    await expect(webhooks.removeAllOfAccount('acc_9', 'admin')).rejects.toThrow(/must be called inside/);
    await expect(
      store.transaction(async () => {
        await webhooks.removeAllOfAccount('acc_9', 'admin');
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await webhooks.countForAccount('acc_9')).toBe(2);
    await store.transaction(() => webhooks.removeAllOfAccount('acc_9', 'admin'));
    expect(await webhooks.countForAccount('acc_9')).toBe(0);
    expect(await auditOf(mine.id)).toEqual(['account:acc_9 webhook.create', 'admin webhook.delete']);
  });
});
