import { afterAll, beforeAll, expect, it } from 'vitest';
import { webhooksRouter } from '../../src-api/modules/webhooks/webhooks.router';
import { createCallerFactory, createTrpcContext } from '../../src-api/trpc/init';
import { agentInput, startTestServer, type TestServer } from '../helpers/test-server';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/** Polls an async check until it returns a value. */
async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * The console's webhooks procedures, called through tRPC's own caller with a
 * real context over a real server's services (the HTTP /trpc mount is the
 * console's, tested with it): the actor reaches the audit log, bad input is refused.
 */

let server: TestServer;
let receiver: WebhookReceiver;
const callerFor = createCallerFactory(webhooksRouter);
const errors: unknown[] = [];
let admin: ReturnType<typeof callerFor>;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  server = await startTestServer({ allowPrivateUrls: true, webhooks: { retryDelaysMs: [20], jitter: 0 } });
  admin = callerFor(
    createTrpcContext({
      services: server.services,
      principal: { actor: 'moderator@example.com', via: 'account', roles: ['admin'], account: null },
      logError: (error) => errors.push(error),
    }),
  );
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

it('manages an endpoint end to end with the caller as the audit actor', async () => {
  const created = await admin.create({ url: receiver.url, events: ['agent.registered'], description: 'console' });
  receiver.secret = created.secret;
  expect((await admin.list()).endpoints.map((e) => e.id)).toEqual([created.id]);
  expect(await admin.get({ id: created.id })).not.toHaveProperty('secret');

  await server.services.agents.edits.create(agentInput({ name: 'Console Watched' }), { emitEvents: true });
  await receiver.waitFor((hits) => hits.length === 1, 10_000, 'the delivery');
  const { deliveries, total } = await eventually(async () => {
    const page = await admin.deliveries({ endpointId: created.id, status: 'succeeded' });
    return page.total === 1 ? page : undefined;
  }, 'the delivery to be logged as succeeded');
  expect(total).toBe(1);
  expect(deliveries).toHaveLength(1); // the page and its total agree (one statement)
  const detail = await admin.delivery({ id: deliveries[0]!.id });
  expect(detail.attempts).toEqual([expect.objectContaining({ attempt_number: 1, status_code: 200, response_excerpt: 'ok' })]);

  const again = await admin.redeliver({ id: detail.id });
  await receiver.waitFor((hits) => hits.length === 2, 10_000, 'the redelivery');
  await eventually(
    async () => ((await admin.delivery({ id: again.id })).status === 'succeeded' ? true : undefined),
    'the redelivery to be logged',
  );
  expect(receiver.received[1]!.eventId).toBe(receiver.received[0]!.eventId);
  expect(receiver.received[1]!.deliveryId).toBe(again.id);

  const preview = await admin.preview({ id: created.id, event: 'review.created' });
  const test = await admin.sendTest({ id: created.id, event: 'review.created' });
  expect(test).toMatchObject({ ok: true, status_code: 200 });
  expect(test.request.body).toBe(preview.previews[0]!.body);
  expect(receiver.received.at(-1)!.headers['x-service-signature']).toBe(preview.previews[0]!.signature);

  const updated = await admin.update({ id: created.id, expectedVersion: 1, description: 'renamed' });
  expect(updated).toMatchObject({ description: 'renamed', version: 2 });
  const disabled = await admin.setActive({ id: created.id, active: false, reason: 'maintenance', expectedVersion: 2 });
  expect(disabled).toMatchObject({ active: false, disabled_reason: 'maintenance' });
  const rotated = await admin.rotateSecret({ id: created.id });
  expect((await admin.revealSecret({ id: created.id })).secret).toBe(rotated.secret);
  expect(await admin.deliveryCounts()).toMatchObject({ succeeded: 3 });

  const actions = (await server.services.audit.list({ page: 1, limit: 50, entityId: created.id, actor: 'moderator@example.com' })).items
    .map((entry) => entry.action)
    .sort();
  expect(actions).toEqual(
    ['webhook.create', 'webhook.disable', 'webhook.reveal_secret', 'webhook.rotate_secret', 'webhook.test', 'webhook.update'].sort(),
  );
  await admin.remove({ id: created.id });
  expect((await admin.list()).endpoints).toEqual([]);
  expect(errors).toEqual([]);
});

it('refuses bad input and callers without an actor', async () => {
  // Input schemas reject before the service runs (tRPC's own BAD_REQUEST, a validation_failed on the wire).
  await expect(admin.create({ url: 'gopher://example.com' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  await expect(admin.create({ url: 'https://example.com', events: ['agent.deleted' as never] })).rejects.toMatchObject({
    code: 'BAD_REQUEST',
  });
  await expect(admin.deliveries({ status: 'lost' as never })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  // Service errors travel as the cause; the transports' error formatter maps them (404 not_found, 401 unauthorized).
  await expect(admin.get({ id: 'whk_missing' })).rejects.toMatchObject({ cause: { status: 404, code: 'not_found' } });
  const anonymous = callerFor(createTrpcContext({ services: server.services, principal: null, logError: () => undefined }));
  await expect(anonymous.list()).rejects.toMatchObject({ cause: { status: 401, code: 'unauthorized' } });
});
