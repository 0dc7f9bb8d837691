import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src-api/modules/events/events.table';
import {
  NODE_VERIFY_SNIPPET,
  PYTHON_VERIFY_SNIPPET,
  SAMPLE_EVENT_DATA,
  sampleEvent,
  signStandardWebhook,
  signWebhookBody,
  webhookBody,
} from '../../src-api/modules/webhooks/webhooks.payload';
import { makeTempDir, startTestServer, type TestServer } from '../helpers/test-server';
import { deliveriesOf, receiverVerifies, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * The payload preview shows exactly what a test send sends (body bytes,
 * signature, headers), the documented known-answer vector holds, and the
 * Node and Python verification snippets accept real deliveries.
 */

/** The known-answer vector of src-api/modules/webhooks/README.md (computed independently with Python's hmac). */
const VECTOR = {
  secret: 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8',
  body:
    '{"id":"evt_sample_agent_registered","event":"agent.registered","timestamp":"2025-01-01T12:00:00.000Z",' +
    '"data":{"agent_id":"sample-agent-x1y2z3","name":"Sample Agent","source_url":"https://github.com/example/sample-agent"},"test":true}',
  signature: 'sha256=d9ebd380ce293df949fcb09eb038ecf2aa715912ade849edffe27fd0a8d49f5e',
  /** webhook-signature of webhook-id evt_sample_agent_registered at webhook-timestamp 1735732800 (Python's hmac and the standardwebhooks package agree). */
  timestamp: 1735732800,
  standardSignature: 'v1,+Kap1ClGsLyChlO9iaJuWropZxI9asIkvCAjMQbzp74=',
};

let server: TestServer;
let receiver: WebhookReceiver;
let endpointId: string;

beforeAll(async () => {
  receiver = await startWebhookReceiver({ respond: () => ({ status: 200, body: 'received, thanks' }) });
  server = await startTestServer({ allowPrivateUrls: true, webhooks: { retryDelaysMs: [50], jitter: 0 } });
  const endpoint = await server.services.webhooks.add({ url: receiver.url, events: ['review.created'] }, { actor: 'test' });
  receiver.secret = endpoint.secret;
  endpointId = endpoint.id;
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

describe('known-answer vector', () => {
  it('the sample agent.registered body and its signature match the documented vector', () => {
    expect(webhookBody(sampleEvent('agent.registered'))).toBe(VECTOR.body);
    expect(signWebhookBody(VECTOR.secret, VECTOR.body)).toBe(VECTOR.signature);
    expect(receiverVerifies(VECTOR.secret, Buffer.from(VECTOR.body), VECTOR.signature)).toBe(true);
    expect(signStandardWebhook(VECTOR.secret, 'evt_sample_agent_registered', VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.standardSignature);
    expect(new Webhook(VECTOR.secret).sign('evt_sample_agent_registered', new Date(VECTOR.timestamp * 1000), VECTOR.body)).toBe(
      VECTOR.standardSignature,
    );
  });

  it('the README states the same vector', () => {
    const readme = fs.readFileSync(path.resolve('src-api/modules/webhooks/README.md'), 'utf8');
    expect(readme).toContain(VECTOR.secret);
    expect(readme).toContain(VECTOR.body);
    expect(readme).toContain(VECTOR.signature);
    expect(readme).toContain(VECTOR.standardSignature);
  });
});

describe('payload preview', () => {
  it('gives, per event kind, the body, signature and headers for the chosen endpoint', async () => {
    const preview = await server.services.webhooks.preview(endpointId);
    expect(preview.previews.map((p) => p.event)).toEqual([...EVENT_TYPES]);
    for (const p of preview.previews) {
      const body = JSON.parse(p.body);
      expect(body).toEqual({
        id: `evt_sample_${p.event.replace('.', '_')}`,
        event: p.event,
        timestamp: '2025-01-01T12:00:00.000Z',
        data: SAMPLE_EVENT_DATA[p.event],
        test: true,
      });
      expect(receiverVerifies(receiver.secret!, Buffer.from(p.body), p.signature)).toBe(true);
      expect(p.headers).toMatchObject({
        'Content-Type': 'application/json',
        'X-Service-Signature': p.signature,
        'X-Service-Event': p.event,
      });
    }
    expect(preview.verification.node).toBe(NODE_VERIFY_SNIPPET);
    expect(preview.verification.python).toBe(PYTHON_VERIFY_SNIPPET);
  });

  it('rejects an unknown kind and an unknown endpoint', async () => {
    await expect(server.services.webhooks.preview(endpointId, 'agent.deleted' as never)).rejects.toThrow(/not valid/);
    await expect(server.services.webhooks.preview('whk_missing')).rejects.toThrow(/not found/);
  });
});

describe('test sends', () => {
  it('send each kind now, byte for byte what the preview shows, and report the answer', async () => {
    for (const kind of EVENT_TYPES) {
      const preview = (await server.services.webhooks.preview(endpointId, kind)).previews[0]!;
      const result = await server.services.webhooks.sendTest(endpointId, kind, { actor: 'test' });
      expect(result).toMatchObject({ ok: true, event: kind, status_code: 200, response_excerpt: 'received, thanks', error: null });
      expect(result.latency_ms).toBeGreaterThanOrEqual(0);

      const hit = receiver.received.find((h) => h.deliveryId === result.delivery_id)!;
      expect(hit.rawBody.toString('utf8')).toBe(preview.body); // same bytes
      expect(hit.headers['x-service-signature']).toBe(preview.signature);
      expect(hit.signatureValid).toBe(true);
      expect(hit.standardValid).toBe(true);
      expect(hit.isTest).toBe(true);
      // What makes it a test is signed: without the X-Service-Test header the body still says so.
      expect(JSON.parse(hit.rawBody.toString('utf8'))).toMatchObject({ id: expect.stringMatching(/^evt_sample_/), test: true });
      expect(hit.headers['webhook-id']).toBe(result.event_id);
      for (const [name, value] of Object.entries(preview.headers)) {
        // A placeholder in the preview; the send time and what it signs are new on every send.
        if (['X-Service-Delivery', 'webhook-timestamp', 'webhook-signature'].includes(name)) continue;
        expect(hit.headers[name.toLowerCase()]).toBe(value);
      }
      expect(result.request.body).toBe(preview.body);
    }
    // Sent although the endpoint subscribes to review.created only: a test is asked for explicitly.
    expect(receiver.received.filter((h) => h.isTest)).toHaveLength(EVENT_TYPES.length);
  });

  it('are logged as test deliveries with their one attempt', async () => {
    const result = await server.services.webhooks.sendTest(endpointId, 'claim.approved', { actor: 'test' });
    const delivery = await server.services.webhooks.getDelivery(result.delivery_id);
    expect(delivery).toMatchObject({
      is_test: true,
      status: 'succeeded',
      attempt_count: 1,
      event_type: 'claim.approved',
      event_id: result.event_id,
    });
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]).toMatchObject({
      status_code: 200,
      response_excerpt: 'received, thanks',
      request_body: result.request.body,
    });
    expect(delivery.attempts[0]!.request_headers['X-Service-Test']).toBe('true');
    expect((await server.services.webhooks.listDeliveries({ isTest: true, limit: 100 })).items.every((d) => d.is_test)).toBe(true);
    await expect(server.services.webhooks.redeliver(result.delivery_id, { actor: 'test' })).rejects.toThrow(/test delivery/);
  });

  it('report a failing receiver without retrying or touching the endpoint', async () => {
    receiver.respond = () => ({ status: 503, body: 'x'.repeat(5000) });
    try {
      const result = await server.services.webhooks.sendTest(endpointId, 'agent.updated', { actor: 'test' });
      expect(result).toMatchObject({ ok: false, status_code: 503, error: 'the receiver answered 503' });
      expect(result.response_excerpt).toBe('x'.repeat(1024)); // the first KiB only
      await new Promise((resolve) => setTimeout(resolve, 200)); // past the 50 ms retry delay: nothing more
      expect(receiver.received.filter((h) => h.deliveryId === result.delivery_id)).toHaveLength(1);
      expect(await server.services.webhooks.getDelivery(result.delivery_id)).toMatchObject({ status: 'failed', attempt_count: 1 });
      expect(await server.services.webhooks.get(endpointId)).toMatchObject({ active: true, consecutive_failures: 0 });
    } finally {
      receiver.respond = () => ({ status: 200, body: 'received, thanks' });
    }
  });

  it('work on a disabled endpoint (checking it before enabling it again)', async () => {
    await server.services.webhooks.setActive(endpointId, false, { actor: 'test' });
    const result = await server.services.webhooks.sendTest(endpointId, 'review.created', { actor: 'test' });
    expect(result.ok).toBe(true);
    await server.services.webhooks.setActive(endpointId, true, { actor: 'test' });
  });
});

describe('verification snippets', () => {
  const standardHeaders = (headers: Record<string, unknown>) => ({
    'webhook-id': String(headers['webhook-id']),
    'webhook-timestamp': String(headers['webhook-timestamp']),
    'webhook-signature': String(headers['webhook-signature']),
  });

  /** Real deliveries the receiver got, plus tampered, replayed and unsigned copies that must be refused. */
  function cases() {
    const real = receiver.received.filter((h) => h.method === 'POST').slice(0, 3);
    expect(real.length).toBeGreaterThan(0);
    return real.flatMap((hit) => {
      const headers = standardHeaders(hit.headers);
      const oldTimestamp = Number(headers['webhook-timestamp']) - 600;
      return [
        { body: hit.rawBody.toString('base64'), headers, valid: true },
        { body: Buffer.from(hit.rawBody.toString('utf8').replace('"id"', '"Id"')).toString('base64'), headers, valid: false },
        { body: hit.rawBody.toString('base64'), headers: { ...headers, 'webhook-signature': 'v1,AAAA' }, valid: false },
        { body: hit.rawBody.toString('base64'), headers: { ...headers, 'webhook-signature': '' }, valid: false },
        // A captured delivery replayed ten minutes later, correctly signed for its old timestamp: refused.
        {
          body: hit.rawBody.toString('base64'),
          headers: {
            ...headers,
            'webhook-timestamp': String(oldTimestamp),
            'webhook-signature': signStandardWebhook(receiver.secret!, headers['webhook-id'], oldTimestamp, hit.rawBody),
          },
          valid: false,
        },
        // Two signatures (a rotation): one matching is enough.
        {
          body: hit.rawBody.toString('base64'),
          headers: { ...headers, 'webhook-signature': `v1,AAAA ${headers['webhook-signature']}` },
          valid: true,
        },
      ];
    });
  }

  it('the Node snippet accepts real deliveries and refuses tampered and replayed ones', async () => {
    const dir = makeTempDir('agentdir-snippet-');
    const file = path.join(dir, 'verify.mjs');
    fs.writeFileSync(file, NODE_VERIFY_SNIPPET);
    const { verifyWebhook } = (await import(pathToFileURL(file).href)) as {
      verifyWebhook: (b: Buffer, h: Record<string, string>, k: string) => boolean;
    };
    for (const c of cases()) expect(verifyWebhook(Buffer.from(c.body, 'base64'), c.headers, receiver.secret!)).toBe(c.valid);
  });

  it('the Python snippet accepts real deliveries and refuses tampered and replayed ones', () => {
    const python = spawnSync('python3', ['--version']);
    if (python.status !== 0) {
      // No Python on this machine: say so rather than pass silently.
      expect.soft(python.status, 'python3 is not installed; the Python snippet was not run').toBe(0);
      return;
    }
    const harness = `${PYTHON_VERIFY_SNIPPET}
import base64, json, sys
cases = json.load(sys.stdin)
print(json.dumps([verify_webhook(base64.b64decode(c["body"]), c["headers"], c["secret"]) for c in cases]))
`;
    const all = cases();
    const run = spawnSync('python3', ['-c', harness], {
      input: JSON.stringify(all.map((c) => ({ ...c, secret: receiver.secret }))),
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual(all.map((c) => c.valid));
  });
});

it('test deliveries never reach real deliveries: the sample events are never fanned out', async () => {
  const real = (await deliveriesOf(server.services, endpointId)).filter((d) => !d.is_test);
  expect(real).toEqual([]);
});
