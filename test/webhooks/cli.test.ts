import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT, runCli } from '../cli/cli-helpers';
import { agentInput, startTestServer, type TestServer } from '../helpers/test-server';
import { standardVerifies, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * `cli webhooks …` as a separate process against the data dir of a running
 * server: the server picks up the CLI's endpoint without a restart. On PostgreSQL
 * (AGENTDIR_TEST_STORE=postgres) runCli points the command at the server's database.
 */

let server: TestServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver({ respond: () => ({ status: 202, body: 'queued' }) });
  server = await startTestServer({ allowPrivateUrls: true, webhooks: { pollIntervalMs: 100 } });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

// Two CLI runs in a case: at load 20 they outlast the default 30 s (remove timed out so on PostgreSQL).
describe('cli webhooks', { timeout: CLI_TEST_TIMEOUT }, () => {
  let endpointId: string;

  it('add prints exactly {"id","url","events","secret"}; the running server delivers to it', async () => {
    const run = await runCli([
      'webhooks',
      'add',
      '--url',
      receiver.url,
      '--events',
      'review.created, agent.registered',
      '--description',
      'from the CLI',
      '--data-dir',
      server.dataDir,
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n')).toHaveLength(1);
    const printed = JSON.parse(run.stdout);
    expect(Object.keys(printed)).toEqual(['id', 'url', 'events', 'secret']);
    expect(printed).toMatchObject({ url: receiver.url, events: ['review.created', 'agent.registered'] });
    expect(printed.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    endpointId = printed.id;
    receiver.secret = printed.secret;

    const agent = await server.services.agents.edits.create(agentInput({ name: 'CLI Watched' }), { emitEvents: true });
    const review = await server.post(`/agents/${agent.id}/reviews`, { rating: 5 });
    expect(review.status).toBe(201);
    await receiver.waitFor((hits) => hits.filter((h) => !h.isTest).length === 2, 10_000, 'agent.registered and review.created');
    expect(receiver.received.map((h) => h.body?.event).sort()).toEqual(['agent.registered', 'review.created']);
    expect(receiver.received.every((h) => h.signatureValid && h.standardValid)).toBe(true);
    expect((await server.services.webhooks.get(endpointId)).description).toBe('from the CLI');
  });

  it('add without --events subscribes to every kind: events []', async () => {
    const run = await runCli(['webhooks', 'add', '--url', 'https://hooks.example.com/all', '--data-dir', server.dataDir]);
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.stdout);
    expect(printed.events).toEqual([]);
    await server.services.webhooks.remove(printed.id, { actor: 'test' });
  });

  it('add refuses unknown kinds and non-http URLs as usage errors (exit 2), writing nothing', async () => {
    const before = (await server.services.webhooks.list()).length;
    const badKind = await runCli([
      'webhooks',
      'add',
      '--url',
      'https://hooks.example.com/x',
      '--events',
      'agent.deleted',
      '--data-dir',
      server.dataDir,
    ]);
    expect(badKind.code).toBe(2);
    expect(badKind.stderr).toContain('unknown event kind "agent.deleted"');
    const badUrl = await runCli(['webhooks', 'add', '--url', 'file:///etc/passwd', '--data-dir', server.dataDir]);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('absolute http or https URL');
    expect(badUrl.stdout).toBe('');
    expect(await server.services.webhooks.list()).toHaveLength(before);
  });

  it('list prints a JSON array without secrets', async () => {
    const run = await runCli(['webhooks', 'list', '--data-dir', server.dataDir]);
    expect(run.code).toBe(0);
    const list = JSON.parse(run.stdout);
    expect(list).toEqual([expect.objectContaining({ id: endpointId, url: receiver.url, active: true })]);
    expect(run.stdout).not.toContain('whsec_');
  });

  it("test sends the sample event now and prints the receiver's answer", async () => {
    const before = receiver.received.length;
    const run = await runCli([
      'webhooks',
      'test',
      endpointId,
      '--event',
      'claim.approved',
      '--allow-private-urls',
      '--data-dir',
      server.dataDir,
    ]);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ ok: true, event: 'claim.approved', status_code: 202, response_excerpt: 'queued', error: null });
    expect(receiver.received).toHaveLength(before + 1);
    const hit = receiver.received.at(-1)!;
    expect(hit).toMatchObject({
      isTest: true,
      signatureValid: true,
      standardValid: true,
      deliveryId: result.delivery_id,
      eventId: 'evt_sample_claim_approved',
    });
    expect(hit.rawBody.toString('utf8')).toBe((await server.services.webhooks.preview(endpointId, 'claim.approved')).previews[0]!.body);
  });

  it('rotate prints the new secret; the old one still signs webhook-signature for 24 h', async () => {
    const run = await runCli(['webhooks', 'rotate', endpointId, '--data-dir', server.dataDir]);
    expect(run.code).toBe(0);
    const rotated = JSON.parse(run.stdout);
    expect(rotated).toMatchObject({ id: endpointId, secret: expect.stringMatching(/^whsec_/) });
    expect(Date.parse(rotated.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    const old = receiver.secret!;
    const result = await server.services.webhooks.sendTest(endpointId, 'agent.updated', { actor: 'test' });
    const hit = receiver.received.find((h) => h.deliveryId === result.delivery_id)!;
    expect(hit.standardValid).toBe(true); // verified with the old secret
    expect(standardVerifies(rotated.secret, hit.rawBody, hit.headers)).toBe(true);
    receiver.secret = rotated.secret;
    expect(old).not.toBe(rotated.secret);
    const missing = await runCli(['webhooks', 'rotate', 'whk_missing', '--data-dir', server.dataDir]);
    expect(missing.code).not.toBe(0);
  });

  it('test without --allow-private-urls is refused for a loopback receiver: JSON result, exit 1', async () => {
    const before = receiver.received.length;
    const run = await runCli(['webhooks', 'test', endpointId, '--data-dir', server.dataDir]);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, status_code: null });
    expect(run.stderr).toContain('private_address');
    expect(receiver.received).toHaveLength(before);
  });

  it('remove deletes the endpoint: the server sends it nothing more', async () => {
    const run = await runCli(['webhooks', 'remove', endpointId, '--data-dir', server.dataDir]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).id).toBe(endpointId);
    const before = receiver.received.length;
    await server.services.agents.edits.create(agentInput({ name: 'CLI Unwatched' }), { emitEvents: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(before);

    const again = await runCli(['webhooks', 'remove', endpointId, '--data-dir', server.dataDir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('not found');
  });
});
