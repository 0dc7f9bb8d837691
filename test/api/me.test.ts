import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpAndSignIn, withCookie } from '../helpers/accounts';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { receiverVerifies, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

let server: TestServer;
let smtp: SmtpReceiver;
let receiver: WebhookReceiver;
type Caller = ReturnType<typeof withCookie>;
let ann: Caller;
let bob: Caller;
let annId: string;
let bobId: string;

beforeAll(async () => {
  smtp = await startSmtpReceiver();
  receiver = await startWebhookReceiver({ respond: () => ({ status: 200, body: 'ok' }) });
  server = await startTestServer({ mail: { smtpUrl: smtp.url }, allowPrivateUrls: true });
  const a = await signUpAndSignIn(server, smtp, 'ann@me.test');
  const b = await signUpAndSignIn(server, smtp, 'bob@me.test');
  ann = withCookie(server, a.cookie);
  bob = withCookie(server, b.cookie);
  annId = a.account.id;
  bobId = b.account.id;
});
afterAll(async () => {
  await server.close();
  await receiver.close();
  await smtp.close();
});

describe('/me/keys and /me/usage', () => {
  it('issues a key shown once, which opens /me and counts in the usage figures', async () => {
    const created = await ann('/me/keys', { method: 'POST', body: { name: 'laptop' } });
    expect(created.status).toBe(201);
    const key = await json(created);
    expect(key).toMatchObject({
      id: expect.stringMatching(/^key_/),
      name: 'laptop',
      key: expect.stringMatching(/^adk_/),
      revoked_at: null,
    });

    const listed = await json(await ann('/me/keys'));
    expect(listed.keys).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(key.key);

    const me = await server.api('/me', { headers: { authorization: `Bearer ${key.key}` } });
    expect(me.status).toBe(200);
    expect((await json(me)).id).toBe(annId);
    for (let i = 0; i < 3; i++)
      expect((await server.api('/agents?limit=1', { headers: { authorization: `Bearer ${key.key}` } })).status).toBe(200);

    const usage = await json(await ann('/me/usage?days=7'));
    expect(usage.days).toHaveLength(7);
    const today = new Date().toISOString().slice(0, 10);
    expect(usage.days.at(-1)).toEqual({ date: today, requests: 4, rate_limited: 0 });
    expect(usage.days[0].requests).toBe(0);
    expect((await json(await bob('/me/usage?days=1'))).days[0].requests).toBe(0);
    expect((await ann('/me/usage?days=91')).status).toBe(400);
    expect((await ann('/me/usage?days=0')).status).toBe(400);
  });

  it("answers 404 for another account's key and stops at 10 active keys", async () => {
    const bobKey = await json(await bob('/me/keys', { method: 'POST', body: { name: 'bob' } }));
    const stolen = await ann(`/me/keys/${bobKey.id}`, { method: 'DELETE' });
    expect(stolen.status).toBe(404);
    expect((await json(stolen)).code).toBe('not_found');
    expect((await server.api('/agents?limit=1', { headers: { authorization: `Bearer ${bobKey.key}` } })).status).toBe(200);

    for (let i = (await json(await ann('/me/keys'))).keys.length; i < 10; i++) {
      expect((await ann('/me/keys', { method: 'POST', body: { name: `k${i}` } })).status).toBe(201);
    }
    const eleventh = await ann('/me/keys', { method: 'POST', body: { name: 'one too many' } });
    expect(eleventh.status).toBe(409);
    expect((await json(eleventh)).code).toBe('limit_exceeded');
    const first = (await json(await ann('/me/keys'))).keys[0];
    expect((await ann(`/me/keys/${first.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await ann('/me/keys', { method: 'POST', body: { name: 'replacement' } })).status).toBe(201);
  });
});

describe('/me/webhooks', () => {
  it('adds an endpoint with a secret, test-sends to a real receiver, logs, redelivers and rotates', async () => {
    const created = await ann('/me/webhooks', {
      method: 'POST',
      body: { url: receiver.url, events: ['review.created'], description: 'mine' },
    });
    expect(created.status).toBe(201);
    const endpoint = await json(created);
    expect(endpoint).toMatchObject({
      url: receiver.url,
      events: ['review.created'],
      scope: 'all',
      status: 'active',
      secret: expect.any(String),
    });
    receiver.secret = endpoint.secret;

    const test = await ann(`/me/webhooks/${endpoint.id}/test`, { method: 'POST', body: { event: 'agent.registered' } });
    expect(test.status).toBe(200);
    expect(await json(test)).toMatchObject({ ok: true, status_code: 200, event: 'agent.registered' });
    expect(receiver.received.at(-1)!.signatureValid).toBe(true);

    // The preview shows byte for byte what the test send carried, signed with the same secret.
    const preview = await ann(`/me/webhooks/${endpoint.id}/preview?event=agent.registered`);
    expect(preview.status).toBe(200);
    const shown = await json(preview);
    expect(shown).toMatchObject({ endpoint_id: endpoint.id, url: receiver.url, verification: { node: expect.any(String) } });
    expect(shown.previews).toHaveLength(1);
    expect(shown.previews[0].body).toBe(receiver.received.at(-1)!.rawBody.toString('utf8'));
    expect(receiverVerifies(endpoint.secret, Buffer.from(shown.previews[0].body), shown.previews[0].signature)).toBe(true);
    expect((await json(await ann(`/me/webhooks/${endpoint.id}/preview`))).previews.length).toBeGreaterThan(1);
    expect((await ann(`/me/webhooks/${endpoint.id}/preview?event=agent.exploded`)).status).toBe(400);

    // A real event: a review on a listed agent reaches the endpoint.
    const agent = await server.services.agents.edits.create(agentInput({ name: 'Hooked Agent' }));
    expect((await server.post(`/agents/${agent.id}/reviews`, { rating: 5 })).status).toBe(201);
    await receiver.waitFor((hits) => hits.some((hit) => hit.body?.event === 'review.created'), 10_000, 'the review event');

    const log = await json(await ann(`/me/webhooks/${endpoint.id}/deliveries`));
    expect(log.total).toBeGreaterThanOrEqual(2);
    const real = log.deliveries.find((d: { is_test: boolean }) => !d.is_test);
    await expect
      .poll(
        async () =>
          (await json(await ann(`/me/webhooks/${endpoint.id}/deliveries`))).deliveries.find((d: { id: string }) => d.id === real.id).status,
      )
      .toBe('succeeded');
    const again = await ann(`/me/webhooks/${endpoint.id}/deliveries/${real.id}/redeliver`, { method: 'POST' });
    expect(again.status).toBe(202);
    expect((await json(again)).event_id).toBe(real.event_id);

    const rotated = await json(await ann(`/me/webhooks/${endpoint.id}/rotate-secret`, { method: 'POST' }));
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect(rotated.previous_secret_expires_at).toEqual(expect.any(String));

    const patched = await ann(`/me/webhooks/${endpoint.id}`, { method: 'PATCH', body: { scope: 'owned', status: 'disabled' } });
    expect(patched.status).toBe(200);
    expect(await json(patched)).toMatchObject({ scope: 'owned', status: 'disabled' });
    expect((await json(await ann('/me/webhooks'))).webhooks.map((w: { id: string }) => w.id)).toContain(endpoint.id);
    expect((await json(await bob('/me/webhooks'))).webhooks).toEqual([]);
  });

  it("answers 404 for every route of another account's endpoint and delivery", async () => {
    const endpoint = await json(await bob('/me/webhooks', { method: 'POST', body: { url: receiver.url } }));
    await bob(`/me/webhooks/${endpoint.id}/test`, { method: 'POST', body: { event: 'agent.updated' } });
    const delivery = (await json(await bob(`/me/webhooks/${endpoint.id}/deliveries`))).deliveries[0];
    const attempts: [string, string, unknown?][] = [
      ['GET', `/me/webhooks/${endpoint.id}`],
      ['PATCH', `/me/webhooks/${endpoint.id}`, { description: 'mine now' }],
      ['DELETE', `/me/webhooks/${endpoint.id}`],
      ['POST', `/me/webhooks/${endpoint.id}/rotate-secret`],
      ['POST', `/me/webhooks/${endpoint.id}/test`, { event: 'agent.updated' }],
      ['GET', `/me/webhooks/${endpoint.id}/deliveries`],
      ['GET', `/me/webhooks/${endpoint.id}/preview`],
      ['POST', `/me/webhooks/${endpoint.id}/deliveries/${delivery.id}/redeliver`],
    ];
    for (const [method, path, body] of attempts) {
      const response = await ann(path, { method, body });
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    // Ann's own endpoint with Bob's delivery id is a 404 too.
    const mine = (await json(await ann('/me/webhooks'))).webhooks[0];
    expect((await ann(`/me/webhooks/${mine.id}/deliveries/${delivery.id}/redeliver`, { method: 'POST' })).status).toBe(404);
    expect((await json(await bob(`/me/webhooks/${endpoint.id}`))).description).toBe('');
  });

  it('stops at 10 endpoints per account', async () => {
    const carl = withCookie(server, (await signUpAndSignIn(server, smtp, 'carl@me.test')).cookie);
    for (let i = 0; i < 10; i++)
      expect((await carl('/me/webhooks', { method: 'POST', body: { url: `${receiver.url}/c${i}` } })).status).toBe(201);
    const eleventh = await carl('/me/webhooks', { method: 'POST', body: { url: receiver.url } });
    expect(eleventh.status).toBe(409);
  });
});

describe('writes made with an account', () => {
  it('marks reviews by accounts verified_reviewer, allows one review per agent per day, and lists claims and submissions', async () => {
    const agent = await server.services.agents.edits.create(agentInput({ name: 'Reviewed Agent' }));
    const mine = await ann(`/agents/${agent.id}/reviews`, { method: 'POST', body: { rating: 4 } });
    expect(mine.status).toBe(201);
    expect((await json(mine)).verified_reviewer).toBe(true);
    const anonymous = await server.post(`/agents/${agent.id}/reviews`, { rating: 3 });
    expect((await json(anonymous)).verified_reviewer).toBe(false);

    const claim = await ann('/claims', {
      method: 'POST',
      body: { agent_id: agent.id, claimant_name: 'Ann', claimant_email: 'ann@me.test' },
    });
    expect(claim.status).toBe(201);
    const submission = await ann('/submit', {
      method: 'POST',
      body: { name: 'Ann Bot', tagline: 'Ann builds bots', source_url: 'https://example.com/ann-bot' },
    });
    expect(submission.status).toBe(201);

    const claims = await json(await ann('/me/claims'));
    expect(claims).toMatchObject({ page: 1, limit: 20, total: 1 });
    expect(claims.claims[0]).toMatchObject({ agent_id: agent.id, verification: { token: expect.any(String) } });
    expect((await json(await ann('/me/submissions'))).submissions.map((s: { name: string }) => s.name)).toEqual(['Ann Bot']);
    expect((await json(await bob('/me/claims'))).total).toBe(0);
    expect((await json(await bob('/me/submissions'))).total).toBe(0);
    expect((await json(await ann('/me/agents'))).agents).toEqual([]);

    // A cookie sent by another site's form does not write in the account's name.
    const crossSite = await ann('/submit', {
      method: 'POST',
      body: { name: 'Forged Bot', tagline: 'Not by Ann', source_url: 'https://example.com/forged' },
      headers: { origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(201);
    expect((await json(await ann('/me/submissions'))).total).toBe(1);
  });

  it('refuses a second review of the same agent within 24 h with 409 duplicate_review (per account, and per IP without one)', async () => {
    const limited = await startTestServer({ rateLimit: { enabled: true, writes: 1000 }, mail: { smtpUrl: smtp.url } });
    try {
      const agent = await limited.services.agents.edits.create(agentInput({ name: 'Once A Day' }));
      expect((await limited.post(`/agents/${agent.id}/reviews`, { rating: 5 })).status).toBe(201);
      const second = await limited.post(`/agents/${agent.id}/reviews`, { rating: 1 });
      expect(second.status).toBe(409);
      expect((await json(second)).code).toBe('duplicate_review');
      const other = await limited.services.agents.edits.create(agentInput({ name: 'Another One' }));
      expect((await limited.post(`/agents/${other.id}/reviews`, { rating: 4 })).status).toBe(201);

      const dan = withCookie(limited, (await signUpAndSignIn(limited, smtp, 'dan@me.test')).cookie);
      expect((await dan(`/agents/${agent.id}/reviews`, { method: 'POST', body: { rating: 4 } })).status).toBe(201);
      expect((await dan(`/agents/${agent.id}/reviews`, { method: 'POST', body: { rating: 2 } })).status).toBe(409);
      expect((await limited.services.reviews.listVisible(agent.id, { page: 1, limit: 10 })).total).toBe(2);
    } finally {
      await limited.close();
    }
  });
});

describe('closing an account', () => {
  it('revokes its keys and removes its endpoints; its reviews stay, no longer verified', async () => {
    const eve = await signUpAndSignIn(server, smtp, 'eve@me.test');
    const asEve = withCookie(server, eve.cookie);
    const key = await json(await asEve('/me/keys', { method: 'POST', body: { name: 'eve' } }));
    const endpoint = await json(await asEve('/me/webhooks', { method: 'POST', body: { url: receiver.url } }));
    const agent = await server.services.agents.edits.create(agentInput({ name: 'Eve Reviewed' }));
    const review = await json(await asEve(`/agents/${agent.id}/reviews`, { method: 'POST', body: { rating: 5 } }));
    expect(review.verified_reviewer).toBe(true);

    expect((await asEve('/me', { method: 'DELETE' })).status).toBe(204);
    const withKey = await server.api('/agents?limit=1', { headers: { authorization: `Bearer ${key.key}` } });
    expect(withKey.status).toBe(401);
    expect((await json(withKey)).code).toBe('invalid_api_key');
    await expect(server.services.webhooks.get(endpoint.id)).rejects.toThrow();
    const reviews = await json(await server.api(`/agents/${agent.id}/reviews`));
    expect(reviews.reviews[0]).toMatchObject({ id: review.id, verified_reviewer: false });
    expect(bobId).not.toBe(annId);
  });
});
