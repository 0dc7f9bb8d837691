import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { signUpAndSignIn, withCookie } from '../helpers/accounts';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { bearer, trpcCall, type TrpcKind } from '../helpers/trpc';
import { makeTempDir } from '../helpers/temp-dir';

/**
 * Owners (contract section 7) over real HTTP: two accounts signed in with real
 * sessions (mail through a real SMTP receiver), a real HTTP server standing in
 * for GitHub's raw-file host, and the console's tRPC procedures with the admin token.
 */

const ADMIN_TOKEN = 'test-admin-token-0123456789';

let server: TestServer;
let smtp: SmtpReceiver;
let webRoot: string;
let forgeOrigin = '';
/** What the stand-in forge serves, by request path. */
const files = new Map<string, string>();
const forge = http.createServer((request, response) => {
  const body = files.get(request.url ?? '');
  if (body === undefined) return void response.writeHead(404, { 'content-type': 'text/plain' }).end('404: Not Found');
  response.writeHead(200, { 'content-type': 'text/plain' }).end(body);
});

type Caller = ReturnType<typeof withCookie>;
let ann: Caller;
let bob: Caller;
let annId: string;
let counter = 0;

beforeAll(async () => {
  await new Promise<void>((resolve) => forge.listen(0, '127.0.0.1', resolve));
  forgeOrigin = `http://127.0.0.1:${(forge.address() as AddressInfo).port}`;
  smtp = await startSmtpReceiver();
  webRoot = makeTempDir('agentdir-web-');
  server = await startTestServer(
    {
      adminToken: ADMIN_TOKEN,
      allowPrivateUrls: true,
      mail: { smtpUrl: smtp.url },
      claimCheckTimeoutMs: 2_000,
      forgeRawBases: { 'github.com': `${forgeOrigin}/gh` },
    },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken, { webRoot }) },
  );
  const a = await signUpAndSignIn(server, smtp, 'ann@owners.test', { name: 'Ann Owner' });
  const b = await signUpAndSignIn(server, smtp, 'bob@owners.test', { name: 'Bob Other' });
  ann = withCookie(server, a.cookie);
  bob = withCookie(server, b.cookie);
  annId = a.account.id;
});
afterAll(async () => {
  forge.closeAllConnections();
  await Promise.all([server.close(), smtp.close(), new Promise((resolve) => forge.close(resolve))]);
  fs.rmSync(webRoot, { recursive: true, force: true });
});

const trpc = (kind: TrpcKind, procedure: string, input?: unknown) => trpcCall(server.origin, kind, procedure, input, bearer(ADMIN_TOKEN));

/** A listed agent hosted on (the stand-in) GitHub. */
async function githubAgent(): Promise<string> {
  counter += 1;
  return (
    await server.services.agents.edits.create(
      agentInput({ name: `Owned Tool ${counter}`, tagline: 'Does things', source_url: `https://github.com/acme/tool-${counter}` }),
      { emitEvents: false },
    )
  ).id;
}

async function claim(caller: Caller | undefined, agentId: string) {
  const body = { agent_id: agentId, claimant_name: 'Claimant', claimant_email: 'claimant@owners.test' };
  const response = caller ? await caller('/claims', { method: 'POST', body }) : await server.post('/claims', body);
  expect(response.status).toBe(201);
  return json(response);
}

/** Publishes the claim's token where its repository-file proof looks. */
function publish(newClaim: { verification: { methods: Array<{ method: string; url?: string }>; token: string } }): void {
  const url = newClaim.verification.methods.find((method) => method.method === 'repository-file')!.url!;
  expect(url.startsWith(`${forgeOrigin}/gh/acme/`)).toBe(true);
  files.set(new URL(url).pathname, `${newClaim.verification.token}\n`);
}

const auditOf = async (entityId: string) =>
  (await server.services.audit.list({ entityId, page: 1, limit: 50 } as Parameters<typeof server.services.audit.list>[0])).items;

describe('ownership through claims', () => {
  it('makes the account of a verified claim the owner and rejects the competing claims, audited as system', async () => {
    const agentId = await githubAgent();
    const mine = await claim(ann, agentId);
    const theirs = await claim(bob, agentId);
    const anonymous = await claim(undefined, agentId);
    expect((await json(await server.api(`/agents/${agentId}`))).owner).toBeNull();

    publish(mine);
    const verified = await server.api(`/claims/${mine.id}/verify`, { method: 'POST' });
    expect(verified.status).toBe(200);
    expect((await json(verified)).status).toBe('verified');

    const profile = await json(await server.api(`/agents/${agentId}`));
    expect(profile).toMatchObject({ verified: true, owner: { name: 'Ann Owner' } });
    expect(Object.keys(profile.owner)).toEqual(['name']);
    // The same profile in the list, search and bulk answers (one cached serialization).
    const bulk = await json(await server.api(`/agents/bulk?ids=${agentId}`));
    expect(bulk.agents[0].owner).toEqual({ name: 'Ann Owner' });

    const mineNow = await json(await ann('/me/agents'));
    expect(mineNow.agents.map((agent: { id: string }) => agent.id)).toContain(agentId);
    expect((await json(await bob('/me/agents'))).agents).toEqual([]);

    for (const other of [theirs, anonymous]) {
      const shown = await json(await server.api(`/claims/${other.id}`));
      expect(shown.status).toBe('rejected');
      expect(shown.reason).toMatch(/another ownership claim for this agent was verified/i);
      expect(await auditOf(other.id)).toEqual([expect.objectContaining({ actor: 'system', action: 'claim.reject' })]);
    }
    const events = (await server.services.events.listRecent(20)).filter((event) => event.data.agent_id === agentId);
    expect(events.map((event) => event.type).sort()).toEqual(['agent.verified', 'claim.approved']);
  });

  it('a moderator verifying a claim in the console makes its account the owner too', async () => {
    const agentId = await githubAgent();
    const theirs = await claim(bob, agentId);
    const verified = await trpc('mutation', 'claims.verifyManually', { id: theirs.id, note: 'known maintainer' });
    expect(verified.status).toBe(200);
    expect((await json(await server.api(`/agents/${agentId}`))).owner).toEqual({ name: 'Bob Other' });
    expect((await server.services.agents.getRow(agentId)).ownerAccountId).not.toBe(annId);
  });

  it('an anonymous claim verifies the agent without an owner', async () => {
    const agentId = await githubAgent();
    const anonymous = await claim(undefined, agentId);
    publish(anonymous);
    expect((await server.api(`/claims/${anonymous.id}/verify`, { method: 'POST' })).status).toBe(200);
    expect(await json(await server.api(`/agents/${agentId}`))).toMatchObject({ verified: true, owner: null });
  });

  it("shows the owner's new name after a rename, and no owner once the account is closed", async () => {
    const { cookie } = await signUpAndSignIn(server, smtp, 'cat@owners.test', { name: 'Cat' });
    const cat = withCookie(server, cookie);
    const agentId = await githubAgent();
    const hers = await claim(cat, agentId);
    publish(hers);
    expect((await server.api(`/claims/${hers.id}/verify`, { method: 'POST' })).status).toBe(200);
    expect((await json(await server.api(`/agents/${agentId}`))).owner).toEqual({ name: 'Cat' });

    const catId = (await server.services.agents.getRow(agentId)).ownerAccountId!;
    await server.services.accounts.rename(catId, 'Catherine');
    expect((await json(await server.api(`/agents/${agentId}`))).owner).toEqual({ name: 'Catherine' });
    await server.services.accounts.close(catId);
    expect(await json(await server.api(`/agents/${agentId}`))).toMatchObject({ verified: true, owner: null });
  });
});

/** An agent owned by Ann: claimed with her session, proof published, verified through the public API. */
async function annOwns(): Promise<string> {
  const agentId = await githubAgent();
  const mine = await claim(ann, agentId);
  publish(mine);
  expect((await server.api(`/claims/${mine.id}/verify`, { method: 'POST' })).status).toBe(200);
  return agentId;
}

const patch = (caller: Caller, agentId: string, body: unknown) => caller(`/me/agents/${agentId}`, { method: 'PATCH', body });

describe('PATCH /me/agents/{id}', () => {
  it('applies profile fields at once (200, agent.updated, audited as the account)', async () => {
    const agentId = await annOwns();
    const response = await patch(ann, agentId, {
      tagline: 'Reviews pull requests',
      description: 'Longer words.',
      author: 'Ann',
      capabilities: ['code-review'],
      categories: ['devtools'],
      type: 'research',
    });
    expect(response.status).toBe(200);
    const profile = await json(response);
    expect(profile).toMatchObject({
      id: agentId,
      tagline: 'Reviews pull requests',
      description: 'Longer words.',
      author: 'Ann',
      capabilities: ['code-review'],
      categories: ['devtools'],
      type: 'research',
      owner: { name: 'Ann Owner' },
    });
    expect(await json(await server.api(`/agents/${agentId}`))).toEqual(profile);
    const updated = (await server.services.events.listRecent(10)).find(
      (event) => event.type === 'agent.updated' && event.data.agent_id === agentId,
    );
    expect(updated?.data.changed_fields).toEqual(['tagline', 'description', 'author', 'capabilities', 'categories', 'type']);
    expect((await auditOf(agentId))[0]).toMatchObject({ action: 'agent.update', actor: `ann@owners.test (${annId})` });
  });

  it('turns a new name or source into a pending edit request that a moderator approves', async () => {
    const agentId = await annOwns();
    const before = await server.services.agents.getRow(agentId);
    const response = await patch(ann, agentId, {
      name: 'Renamed Tool',
      source_url: 'https://github.com/acme/renamed',
      tagline: 'New line',
    });
    expect(response.status).toBe(202);
    const accepted = await json(response);
    expect(accepted).toEqual({ id: expect.stringMatching(/^edr_/), status: 'pending' });
    // The other fields are applied, the name and source are not yet.
    expect(await json(await server.api(`/agents/${agentId}`))).toMatchObject({
      name: before.name,
      source_url: before.sourceUrl,
      tagline: 'New line',
    });
    // One request waits per agent.
    const second = await patch(ann, agentId, { name: 'Another Name' });
    expect(second.status).toBe(409);
    // The same name as now is no request.
    expect((await patch(ann, agentId, { name: before.name })).status).toBe(200);

    const queue = await trpc('query', 'editRequests.list');
    expect(queue.status).toBe(200);
    const shown = queue.data.editRequests.find((request: { id: string }) => request.id === accepted.id);
    expect(shown).toMatchObject({
      agent_id: agentId,
      agent_name: before.name,
      account_id: annId,
      account_name: 'Ann Owner',
      account_email: 'ann@owners.test',
      status: 'pending',
      changes: { name: 'Renamed Tool', source_url: 'https://github.com/acme/renamed' },
      before: { name: before.name, source_url: before.sourceUrl },
    });

    const approved = await trpc('mutation', 'editRequests.approve', { id: accepted.id, expectedVersion: shown.version });
    expect(approved.status).toBe(200);
    expect(approved.data).toMatchObject({ status: 'approved', decided_by: 'admin-token' });
    expect(await json(await server.api(`/agents/${agentId}`))).toMatchObject({
      name: 'Renamed Tool',
      source_url: 'https://github.com/acme/renamed',
      owner: { name: 'Ann Owner' },
    });
    const actions = (await auditOf(agentId)).map((entry) => `${entry.actor} ${entry.action}`);
    expect(actions[0]).toBe('admin-token agent.update');
    expect((await auditOf(accepted.id)).map((entry) => entry.action)).toEqual(['edit_request.approve', 'edit_request.create']);
    expect((await trpc('mutation', 'editRequests.approve', { id: accepted.id })).status).toBe(409);
  });

  it('a rejected request keeps its reason and changes nothing', async () => {
    const agentId = await annOwns();
    const name = (await server.services.agents.getRow(agentId)).name;
    const accepted = await json(await patch(ann, agentId, { name: 'Impersonation Inc' }));
    expect((await trpc('mutation', 'editRequests.reject', { id: accepted.id, reason: '' })).status).toBe(400);
    const rejected = await trpc('mutation', 'editRequests.reject', { id: accepted.id, reason: 'Misleading name' });
    expect(rejected.data).toMatchObject({ status: 'rejected', reason: 'Misleading name' });
    expect((await json(await server.api(`/agents/${agentId}`))).name).toBe(name);
    expect((await trpc('query', 'editRequests.list')).data.editRequests.map((r: { id: string }) => r.id)).not.toContain(accepted.id);
    expect((await auditOf(accepted.id))[0]).toMatchObject({ actor: 'admin-token', action: 'edit_request.reject' });
  });

  it('answers 400 to bad bodies and writes nothing', async () => {
    const agentId = await annOwns();
    const before = await server.services.agents.getRow(agentId);
    for (const body of [
      {},
      { tagline: '' },
      { type: 'spaceship' },
      { capabilities: 'not-a-list' },
      { verified: true },
      { owner: { name: 'Mallory' } },
      { tagline: 'fine', source_url: 'not a url' },
      { name: 'x'.repeat(121) },
    ]) {
      const response = await patch(ann, agentId, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
    const malformed = await ann(`/me/agents/${agentId}`, {
      method: 'PATCH',
      body: undefined,
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect((await server.services.agents.getRow(agentId)).version).toBe(before.version);
    expect((await trpc('query', 'editRequests.list', { agent_id: agentId })).data.total).toBe(0);
  });
});

describe('GET /me/edit-requests', () => {
  it("lists the account's own requests, pending, approved and rejected with the moderator's reason, and no one else's", async () => {
    const approvedAgent = await annOwns();
    const rejectedAgent = await annOwns();
    const pendingAgent = await annOwns();
    const approvedName = (await server.services.agents.getRow(approvedAgent)).name;
    const toApprove = await json(await patch(ann, approvedAgent, { name: 'Listed Helper' }));
    const toReject = await json(await patch(ann, rejectedAgent, { source_url: 'https://github.com/acme/elsewhere' }));
    const waiting = await json(await patch(ann, pendingAgent, { name: 'Still Waiting' }));
    expect((await trpc('mutation', 'editRequests.approve', { id: toApprove.id })).status).toBe(200);
    expect(
      (await trpc('mutation', 'editRequests.reject', { id: toReject.id, reason: 'The repository belongs to someone else' })).status,
    ).toBe(200);

    const response = await ann('/me/edit-requests?limit=100');
    expect(response.status).toBe(200);
    const listed = await json(response);
    const mine = new Map(listed.edit_requests.map((request: { id: string }) => [request.id, request]));
    expect(mine.get(waiting.id)).toEqual({
      id: waiting.id,
      agent_id: pendingAgent,
      agent_name: (await server.services.agents.getRow(pendingAgent)).name,
      changes: { name: 'Still Waiting' },
      before: { name: (await server.services.agents.getRow(pendingAgent)).name },
      status: 'pending',
      reason: null,
      decided_at: null,
      created_at: expect.any(String),
    });
    expect(mine.get(toApprove.id)).toMatchObject({
      status: 'approved',
      agent_name: 'Listed Helper',
      before: { name: approvedName },
      decided_at: expect.any(String),
    });
    expect(mine.get(toReject.id)).toMatchObject({ status: 'rejected', reason: 'The repository belongs to someone else' });
    // Newest first; who decided and the account's e-mail are not part of the owner's view.
    expect(listed.edit_requests.map((request: { id: string }) => request.id).slice(0, 3)).toEqual([waiting.id, toReject.id, toApprove.id]);
    expect(JSON.stringify(listed)).not.toContain('admin-token');

    const rejectedOnly = await json(await ann('/me/edit-requests?status=rejected&limit=100'));
    expect(rejectedOnly.edit_requests.every((request: { status: string }) => request.status === 'rejected')).toBe(true);
    expect(rejectedOnly.edit_requests.map((request: { id: string }) => request.id)).toContain(toReject.id);

    // Another account sees none of Ann's; no session is a 401; a bad status is a 400 problem.
    const bobs = await json(await bob('/me/edit-requests'));
    expect(bobs.edit_requests.map((request: { id: string }) => request.id)).not.toContain(waiting.id);
    expect((await server.api('/me/edit-requests')).status).toBe(401);
    const bad = await ann('/me/edit-requests?status=maybe');
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
  });
});

describe('POST /me/agents/{id}/status', () => {
  it('deprecates with a message and makes active again', async () => {
    const agentId = await annOwns();
    const deprecated = await ann(`/me/agents/${agentId}/status`, { method: 'POST', body: { status: 'deprecated', message: 'Use v2' } });
    expect(deprecated.status).toBe(200);
    expect(await json(deprecated)).toMatchObject({ id: agentId, status: 'deprecated', status_message: 'Use v2' });
    expect(await json(await server.api(`/agents/${agentId}`))).toMatchObject({ status: 'deprecated', status_message: 'Use v2' });
    const active = await ann(`/me/agents/${agentId}/status`, { method: 'POST', body: { status: 'active' } });
    expect(await json(active)).toMatchObject({ status: 'active', status_message: null });
    for (const body of [{}, { status: 'unlisted' }, { status: 'deprecated', message: 'x'.repeat(501) }, { status: 'active', extra: 1 }]) {
      expect((await ann(`/me/agents/${agentId}/status`, { method: 'POST', body })).status, JSON.stringify(body)).toBe(400);
    }
    expect((await json(await server.api(`/agents/${agentId}`))).status).toBe('active');
  });
});

describe('POST /me/agents/{id}/reviews/{review_id}/reply', () => {
  it('shows the reply with its review; a second reply replaces it', async () => {
    const agentId = await annOwns();
    const review = await json(await server.post(`/agents/${agentId}/reviews`, { rating: 4, comment: 'Handy' }));
    expect(review.reply).toBeNull();
    const replied = await ann(`/me/agents/${agentId}/reviews/${review.id}/reply`, { method: 'POST', body: { body: '  Thanks!  ' } });
    expect(replied.status).toBe(201);
    expect(await json(replied)).toMatchObject({ id: review.id, reply: { body: 'Thanks!' } });
    let listed = await json(await server.api(`/agents/${agentId}/reviews`));
    expect(listed.reviews[0]).toMatchObject({ id: review.id, reply: { body: 'Thanks!', created_at: expect.any(String) } });

    await ann(`/me/agents/${agentId}/reviews/${review.id}/reply`, { method: 'POST', body: { body: 'Fixed in 1.2' } });
    listed = await json(await server.api(`/agents/${agentId}/reviews`));
    expect(listed.reviews[0].reply.body).toBe('Fixed in 1.2');

    for (const body of [{}, { body: '' }, { body: '   ' }, { body: 'x'.repeat(2001) }, { body: 1 }]) {
      expect((await ann(`/me/agents/${agentId}/reviews/${review.id}/reply`, { method: 'POST', body })).status).toBe(400);
    }
    expect(listed.reviews[0].reply.body).toBe('Fixed in 1.2');
  });

  it('answers 404 for a review of another agent', async () => {
    const mine = await annOwns();
    const otherAgent = await githubAgent();
    const elsewhere = await json(await server.post(`/agents/${otherAgent}/reviews`, { rating: 2 }));
    const response = await ann(`/me/agents/${mine}/reviews/${elsewhere.id}/reply`, { method: 'POST', body: { body: 'Not mine' } });
    expect(response.status).toBe(404);
    expect((await ann(`/me/agents/${mine}/reviews/rev_nope/reply`, { method: 'POST', body: { body: 'x' } })).status).toBe(404);
    expect((await json(await server.api(`/agents/${otherAgent}/reviews`))).reviews[0].reply).toBeNull();
  });
});

describe('only the owner', () => {
  it('another account, an unknown agent and no account get 404 (or 401) on every /me/agents route, and nothing changes', async () => {
    const agentId = await annOwns();
    const review = await json(await server.post(`/agents/${agentId}/reviews`, { rating: 5 }));
    const before = await server.services.agents.getRow(agentId);
    const routes = (id: string) => [
      { path: `/me/agents/${id}`, method: 'PATCH', body: { tagline: 'Hijacked' } },
      { path: `/me/agents/${id}`, method: 'PATCH', body: { name: 'Hijacked' } },
      { path: `/me/agents/${id}/status`, method: 'POST', body: { status: 'deprecated', message: 'gone' } },
      { path: `/me/agents/${id}/reviews/${review.id}/reply`, method: 'POST', body: { body: 'Hijacked' } },
    ];
    for (const route of routes(agentId)) {
      const response = await bob(route.path, { method: route.method, body: route.body });
      expect(response.status, `${route.method} ${route.path}`).toBe(404);
      const problem = await json(response);
      expect(problem).toMatchObject({ code: 'not_found' });
      expect(JSON.stringify(problem)).not.toMatch(/owner/i);
      const anonymous = await server.api(route.path, {
        method: route.method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(route.body),
      });
      expect(anonymous.status).toBe(401);
    }
    // An unknown agent reads exactly like someone else's.
    for (const route of routes('no-such-agent')) {
      const response = await ann(route.path, { method: route.method, body: route.body });
      expect(response.status).toBe(404);
    }
    expect((await server.services.agents.getRow(agentId)).version).toBe(before.version);
    expect((await json(await server.api(`/agents/${agentId}/reviews`))).reviews[0].reply).toBeNull();
    expect((await trpc('query', 'editRequests.list', { agent_id: agentId })).data.total).toBe(0);
  });

  it('an account key works like the session', async () => {
    const agentId = await annOwns();
    const key = await json(await ann('/me/keys', { method: 'POST', body: { name: 'owner script' } }));
    const response = await server.api(`/me/agents/${agentId}/status`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'deprecated', message: 'Archived' }),
    });
    expect(response.status).toBe(200);
    expect((await json(response)).status_message).toBe('Archived');
  });
});
