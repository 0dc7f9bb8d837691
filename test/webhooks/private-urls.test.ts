import { afterAll, beforeAll, expect, it } from 'vitest';
import { agentInput, startTestServer, type TestServer } from '../helpers/test-server';
import { deliveriesOf, eventually, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * Without allowPrivateUrls, deliveries to loopback addresses are refused on
 * the address actually resolved: every attempt is logged with the error and
 * not one request reaches the receiver (which really listens there).
 */

let server: TestServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  server = await startTestServer({ allowPrivateUrls: false, webhooks: { retryDelaysMs: [20], jitter: 0, timeoutMs: 2_000 } });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

it('refuses loopback destinations, however they are spelled, and logs each attempt with the error', async () => {
  const urls = [
    `http://127.0.0.1:${receiver.port}/hooks`,
    `http://localhost:${receiver.port}/hooks`, // a name that resolves to loopback
    `http://0x7f000001:${receiver.port}/hooks`, // 127.0.0.1 in hex
  ];
  const endpoints = [];
  for (const url of urls) endpoints.push(await server.services.webhooks.add({ url }, { actor: 'test' }));
  await server.services.agents.edits.create(agentInput({ name: 'Private Probe' }), { emitEvents: true });

  for (const endpoint of endpoints) {
    const delivery = await eventually(async () => {
      const [d] = await deliveriesOf(server.services, endpoint.id);
      return d?.status === 'failed' ? d : undefined;
    }, `the delivery to ${endpoint.url} to fail`);
    expect(delivery.attempts).toHaveLength(2); // one retry on this schedule, refused too
    for (const attempt of delivery.attempts) {
      expect(attempt.status_code).toBeNull();
      expect(attempt.error).toMatch(/^private_address: refused to connect to a private, loopback or reserved address/);
      expect(attempt.request_body).toContain('"event":"agent.registered"'); // what would have been sent is logged
    }
  }
  const result = await server.services.webhooks.sendTest(endpoints[0]!.id, 'agent.registered', { actor: 'test' });
  expect(result).toMatchObject({ ok: false, status_code: null });
  expect(result.error).toMatch(/^private_address: /);

  await receiver.waitForQuiet(200);
  expect(receiver.received).toEqual([]);
});
