import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src-api/errors';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';

const WELL_KNOWN = '/.well-known/agent-directory-claim.txt';

/**
 * A real HTTP server on 127.0.0.1 standing in for an agent's host. `handle`
 * can be swapped between requests; every request line is logged.
 */
interface Target {
  origin: string;
  port: number;
  requests: string[];
  handle: (request: http.IncomingMessage, response: http.ServerResponse) => void;
  close(): Promise<void>;
}

const targets: Target[] = [];

async function startTarget(handle: Target['handle'] = (_req, res) => res.writeHead(404).end()): Promise<Target> {
  const target = { requests: [] as string[], handle } as Target;
  const server = http.createServer((request, response) => {
    target.requests.push(`${request.method} ${request.url}`);
    response.on('error', () => {}); // the service hangs up on purpose (body cap, timeout)
    target.handle(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  target.port = (server.address() as AddressInfo).port;
  target.origin = `http://127.0.0.1:${target.port}`;
  target.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  targets.push(target);
  return target;
}

/** Serves `body` at the well-known path, 404 elsewhere. */
const serveWellKnown =
  (body: () => string | Buffer, status = 200): Target['handle'] =>
  (request, response) => {
    if (request.url === WELL_KNOWN) response.writeHead(status, { 'content-type': 'text/plain' }).end(body());
    else response.writeHead(404).end('not found');
  };

let server: TestServer; // allowPrivateUrls: true, as local tests run
let strict: TestServer; // allowPrivateUrls: false, as in production
let agentCounter = 0;

beforeAll(async () => {
  [server, strict] = await Promise.all([startTestServer({ allowPrivateUrls: true }), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([server.close(), strict.close(), ...targets.map((t) => t.close())]);
});

/** A listed agent whose source lives on `target`. */
async function agentOn(target: Target, on: TestServer = server): Promise<string> {
  agentCounter += 1;
  return (
    await on.services.agents.edits.create(
      agentInput({ name: `Claimable ${agentCounter}`, source_url: `${target.origin}/agents/claimable-${agentCounter}` }),
      {
        emitEvents: false,
      },
    )
  ).id;
}

async function createClaim(
  agentId: string,
  on: TestServer = server,
  claimant = { claimant_name: 'Ada Owner', claimant_email: 'ada@example.com' },
) {
  const response = await on.post('/claims', { agent_id: agentId, ...claimant });
  expect(response.status).toBe(201);
  return json(response);
}

const verify = (claimId: string, on: TestServer = server) => on.api(`/claims/${claimId}/verify`, { method: 'POST' });

async function eventsFor(on: TestServer, predicate: (data: Record<string, unknown>) => boolean) {
  return (await on.services.events.listRecent(1000))
    .filter((event) => predicate(event.data))
    .map((event) => ({ type: event.type, data: event.data }));
}

describe('POST /claims', () => {
  it('starts a pending claim with a well-known verification URL and a token', async () => {
    const target = await startTarget();
    const agentId = await agentOn(target);
    const response = await server.post('/claims', { agent_id: agentId, claimant_name: 'Ada Owner', claimant_email: 'ada@example.com' });
    expect(response.status).toBe(201);
    const claim = await json(response);
    expect(claim).toMatchObject({
      id: expect.stringMatching(/^clm_[0-9a-z]+$/),
      agent_id: agentId,
      status: 'pending',
      claimant_name: 'Ada Owner',
      claimant_email: 'ada@example.com',
      verified_by: null,
      last_check: null,
      decided_at: null,
      verification: { method: 'well-known', url: `${target.origin}${WELL_KNOWN}`, token: expect.stringMatching(/^adclaim-[0-9a-z]{32}$/) },
    });
    expect(claim.verification.instructions).toContain(claim.verification.token);
    expect(claim.created_at).toMatch(/Z$/);
    // Tokens are random per claim.
    const second = await createClaim(agentId);
    expect(second.verification.token).not.toBe(claim.verification.token);
  });

  it('uses the origin of the source URL, not its path', async () => {
    const agentId = (
      await server.services.agents.edits.create(
        agentInput({ name: 'Deep Path', source_url: 'https://Agents.Example.org:8443/team/repo?tab=1' }),
        {
          emitEvents: false,
        },
      )
    ).id;
    const claim = await createClaim(agentId);
    expect(claim.verification.url).toBe(`https://agents.example.org:8443${WELL_KNOWN}`);
  });

  it('404s an unknown or unlisted agent', async () => {
    const unknown = await server.post('/claims', { agent_id: 'no-such-agent', claimant_name: 'A', claimant_email: 'a@example.com' });
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).code).toBe('not_found');

    const target = await startTarget();
    const hidden = await agentOn(target);
    await server.services.agents.edits.setListed(hidden, false, { emitEvents: false });
    const response = await server.post('/claims', { agent_id: hidden, claimant_name: 'A', claimant_email: 'a@example.com' });
    expect(response.status).toBe(404);
  });

  it('409s an agent that is already verified', async () => {
    const target = await startTarget();
    const agentId = await agentOn(target);
    await server.services.agents.edits.setVerified(agentId, true, { emitEvents: false });
    const response = await server.post('/claims', { agent_id: agentId, claimant_name: 'A', claimant_email: 'a@example.com' });
    expect(response.status).toBe(409);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    const problem = await json(response);
    expect(problem.code).toBe('conflict');
    expect(problem.detail).toMatch(/already verified/);
  });

  it.each([
    ['an unknown field', { claimant_phone: '123' }, '/'],
    ['a bad e-mail address', { claimant_email: 'not-an-email' }, '/claimant_email'],
    ['a number as the name', { claimant_name: 42 }, '/claimant_name'],
    ['a blank name', { claimant_name: '   ' }, '/claimant_name'],
    ['no agent_id', { agent_id: undefined }, '/agent_id'],
    ['no e-mail address', { claimant_email: undefined }, '/claimant_email'],
  ])('400s a body with %s', async (_name, change, pointer) => {
    const target = await startTarget();
    const body = { agent_id: await agentOn(target), claimant_name: 'Ada', claimant_email: 'ada@example.com', ...change };
    const before = (await server.services.claims.list({ page: 1, limit: 1 })).total;
    const response = await server.post('/claims', body);
    expect(response.status).toBe(400);
    const problem = await json(response);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    expect((await server.services.claims.list({ page: 1, limit: 1 })).total).toBe(before);
  });

  it('400s an empty body', async () => {
    const response = await server.api('/claims', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(400);
    const pointers = (await json(response)).errors.map((e: { pointer: string }) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/agent_id', '/claimant_name', '/claimant_email']));
  });
});

describe('GET /claims/{id}', () => {
  it('shows status and verification URL, never the token or the claimant', async () => {
    const target = await startTarget();
    const created = await createClaim(await agentOn(target));
    const response = await server.api(`/claims/${created.id}`);
    expect(response.status).toBe(200);
    const claim = await json(response);
    expect(claim).toEqual({
      id: created.id,
      agent_id: created.agent_id,
      status: 'pending',
      verified_by: null,
      verified_method: null,
      reason: null,
      last_check: null,
      created_at: created.created_at,
      updated_at: created.updated_at,
      decided_at: null,
      verification: {
        method: 'well-known',
        url: created.verification.url,
        methods: [{ method: 'well-known', url: created.verification.url }],
      },
    });
    const text = JSON.stringify(claim);
    expect(text).not.toContain(created.verification.token);
    expect(text).not.toContain('ada@example.com');
  });

  it('404s an unknown claim and 400s an odd id', async () => {
    const unknown = await server.api('/claims/clm_nosuchclaim');
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).code).toBe('not_found');
    expect((await server.api('/claims/a%20b')).status).toBe(400);
  });
});

describe('POST /claims/{id}/verify', () => {
  it('verifies when the well-known file holds the token; the agent becomes verified with both events', async () => {
    let token = '';
    const target = await startTarget(serveWellKnown(() => `# agent directory ownership\n${token}\n`));
    const agentId = await agentOn(target);
    const claim = await createClaim(agentId);
    token = claim.verification.token;

    const response = await verify(claim.id);
    expect(response.status).toBe(200);
    const verified = await json(response);
    expect(verified).toMatchObject({
      id: claim.id,
      agent_id: agentId,
      status: 'verified',
      verified_by: 'automatic',
      decided_at: expect.stringMatching(/Z$/),
      last_check: { ok: true, http_status: 200, checked_at: expect.stringMatching(/Z$/), detail: expect.stringContaining('found') },
    });
    expect(JSON.stringify(verified)).not.toContain(token);
    expect(target.requests).toEqual([`GET ${WELL_KNOWN}`]);

    const profile = await json(await server.api(`/agents/${agentId}`));
    expect(profile.verified).toBe(true);
    expect((await json(await server.api(`/claims/${claim.id}`))).status).toBe('verified');

    const recorded = await eventsFor(server, (data) => data.agent_id === agentId);
    expect(recorded).toEqual(
      expect.arrayContaining([
        { type: 'claim.approved', data: { claim_id: claim.id, agent_id: agentId, claimant_name: 'Ada Owner', method: 'well-known' } },
        { type: 'agent.verified', data: expect.objectContaining({ agent_id: agentId, via: 'claim' }) },
      ]),
    );
    expect(recorded.filter((e) => e.type === 'claim.approved')).toHaveLength(1);
  });

  it('409s a claim that is no longer pending, and new claims on the verified agent', async () => {
    let token = '';
    const target = await startTarget(serveWellKnown(() => token));
    const agentId = await agentOn(target);
    const claim = await createClaim(agentId);
    token = claim.verification.token;
    expect((await verify(claim.id)).status).toBe(200);

    const again = await verify(claim.id);
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe('conflict');
    expect(target.requests).toHaveLength(1); // not fetched again
    expect((await server.post('/claims', { agent_id: agentId, claimant_name: 'Late', claimant_email: 'late@example.com' })).status).toBe(
      409,
    );
  });

  it('rejects the other pending claims on the agent as superseded', async () => {
    let token = '';
    const target = await startTarget(serveWellKnown(() => token));
    const agentId = await agentOn(target);
    const rival = await createClaim(agentId, server, { claimant_name: 'Mallory', claimant_email: 'mallory@example.com' });
    const owner = await createClaim(agentId);
    token = owner.verification.token;
    expect((await verify(owner.id)).status).toBe(200);

    const rivalNow = await json(await server.api(`/claims/${rival.id}`));
    expect(rivalNow).toMatchObject({
      status: 'rejected',
      reason: expect.stringMatching(/another .*claim .*verified/i),
      decided_at: expect.any(String),
    });
    expect((await verify(rival.id)).status).toBe(409);
  });

  it('422s a file without the token, records the check and keeps the claim pending; a fixed file then verifies', async () => {
    let body = 'adclaim-somebody-elses-token';
    const target = await startTarget(serveWellKnown(() => body));
    const agentId = await agentOn(target);
    const claim = await createClaim(agentId);

    const response = await verify(claim.id);
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    const problem = await json(response);
    expect(problem).toMatchObject({ status: 422, code: 'verification_failed' });
    expect(problem.detail).toMatch(/HTTP 200.*token of this claim is missing/);

    const pending = await json(await server.api(`/claims/${claim.id}`));
    expect(pending).toMatchObject({ status: 'pending', last_check: { ok: false, http_status: 200, detail: problem.detail } });
    expect((await json(await server.api(`/agents/${agentId}`))).verified).toBe(false);
    expect(await eventsFor(server, (data) => data.agent_id === agentId)).toEqual([]);

    body = `ok ${claim.verification.token}`;
    const retry = await verify(claim.id);
    expect(retry.status).toBe(200);
    expect((await json(retry)).status).toBe('verified');
  });

  it('422s a 404 from the target', async () => {
    const target = await startTarget(); // 404 for everything
    const claim = await createClaim(await agentOn(target));
    const response = await verify(claim.id);
    expect(response.status).toBe(422);
    expect((await json(response)).detail).toMatch(/HTTP 404/);
    expect((await json(await server.api(`/claims/${claim.id}`))).last_check).toMatchObject({ ok: false, http_status: 404 });
  });

  it('does not follow a redirect, even to a page with the token', async () => {
    let token = '';
    const target = await startTarget((request, response) => {
      if (request.url === WELL_KNOWN) response.writeHead(302, { location: '/elsewhere/claim.txt' }).end();
      else response.writeHead(200, { 'content-type': 'text/plain' }).end(token);
    });
    const claim = await createClaim(await agentOn(target));
    token = claim.verification.token;
    const response = await verify(claim.id);
    expect(response.status).toBe(422);
    const detail = (await json(response)).detail as string;
    expect(detail).toMatch(/HTTP 302/);
    expect(detail).toMatch(/redirect.*\/elsewhere\/claim\.txt.*redirects are refused/i);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(target.requests).toEqual([`GET ${WELL_KNOWN}`]);
    expect((await json(await server.api(`/claims/${claim.id}`))).status).toBe('pending');
  });

  it('reads at most 64 KiB: a larger file is refused as too large, even with the token at its start', async () => {
    let body: Buffer = Buffer.alloc(0);
    const target = await startTarget(serveWellKnown(() => body));
    const claim = await createClaim(await agentOn(target));
    body = Buffer.concat([Buffer.from(`${claim.verification.token}\n`), Buffer.alloc(5 * 1024 * 1024, 'x')]);
    const response = await verify(claim.id);
    expect(response.status).toBe(422);
    expect((await json(response)).detail).toMatch(/too large: more than 64 KiB/);
    const pending = await json(await server.api(`/claims/${claim.id}`));
    expect(pending).toMatchObject({ status: 'pending', last_check: { ok: false, results: [{ failure: 'too_large' }] } });

    body = Buffer.from(`${claim.verification.token}\n`);
    expect((await verify(claim.id)).status).toBe(200);
  });

  it('follows the agent to its current source when it moved after the claim', async () => {
    let token = '';
    const oldHost = await startTarget(serveWellKnown(() => token));
    const newHost = await startTarget(serveWellKnown(() => 'nothing here'));
    const agentId = await agentOn(oldHost);
    const claim = await createClaim(agentId);
    token = claim.verification.token;
    await server.services.agents.edits.update(agentId, { source_url: `${newHost.origin}/moved` }, { emitEvents: false });

    const response = await verify(claim.id);
    expect(response.status).toBe(422);
    expect(oldHost.requests).toEqual([]);
    expect(newHost.requests).toEqual([`GET ${WELL_KNOWN}`]);
    expect((await json(await server.api(`/claims/${claim.id}`))).verification.url).toBe(`${newHost.origin}${WELL_KNOWN}`);
  });

  it('approves once when two checks race', async () => {
    let token = '';
    const target = await startTarget((request, response) => {
      setTimeout(() => serveWellKnown(() => token)(request, response), 150);
    });
    const agentId = await agentOn(target);
    const claim = await createClaim(agentId);
    token = claim.verification.token;
    const statuses = (await Promise.all([verify(claim.id), verify(claim.id)])).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409]);
    expect((await eventsFor(server, (data) => data.agent_id === agentId)).filter((e) => e.type === 'claim.approved')).toHaveLength(1);
  });

  it('accepts no body, an empty JSON body and {}, and 400s any field', async () => {
    const target = await startTarget(); // 404: every accepted call reaches the check and gets a 422
    const claim = await createClaim(await agentOn(target));
    const path = `/claims/${claim.id}/verify`;
    const accepted = [
      await server.api(path, { method: 'POST' }),
      await server.api(path, { method: 'POST', headers: { 'content-type': 'application/json' } }),
      await server.api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' }),
      await server.post(path, {}),
    ];
    expect(accepted.map((r) => r.status)).toEqual([422, 422, 422, 422]);
    const withField = await server.post(path, { force: true });
    expect(withField.status).toBe(400);
    expect((await json(withField)).code).toBe('validation_failed');
    expect(target.requests).toHaveLength(4);
  });

  it('404s an unknown claim', async () => {
    const response = await verify('clm_doesnotexist');
    expect(response.status).toBe(404);
    expect((await json(response)).code).toBe('not_found');
  });
});

describe('verification against hostile targets', () => {
  it('gives up on a slow target promptly', async () => {
    const slow = await startTestServer({ allowPrivateUrls: true, claimCheckTimeoutMs: 300 });
    try {
      const target = await startTarget((_request, response) => {
        const timer = setTimeout(() => response.writeHead(200).end('too late'), 10_000);
        response.on('close', () => clearTimeout(timer));
      });
      const claim = await createClaim(await agentOn(target, slow), slow);
      const started = Date.now();
      const response = await verify(claim.id, slow);
      expect(response.status).toBe(422);
      expect(Date.now() - started).toBeLessThan(5000); // the target answers after 10 s; room for a loaded machine
      expect((await json(response)).detail).toMatch(/did not answer completely within 300 ms/);
      expect((await json(await slow.api(`/claims/${claim.id}`))).last_check).toMatchObject({ ok: false, http_status: null });
    } finally {
      await slow.close();
    }
  });

  it('runs at most claimCheckConcurrency checks at once; the others wait for a slot', async () => {
    const capped = await startTestServer({ allowPrivateUrls: true, claimCheckConcurrency: 2, claimCheckTimeoutMs: 5_000 });
    try {
      let inFlight = 0;
      let most = 0;
      const target = await startTarget((_request, response) => {
        inFlight++;
        most = Math.max(most, inFlight);
        // Each check holds its socket a while, then finds no token.
        setTimeout(() => {
          inFlight--;
          response.writeHead(200, { 'content-type': 'text/plain' }).end('no token here');
        }, 150);
      });
      const claims = await Promise.all(Array.from({ length: 6 }, async () => createClaim(await agentOn(target, capped), capped)));
      const answers = await Promise.all(claims.map((claim) => verify(claim.id, capped)));
      expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(422));
      expect(target.requests).toHaveLength(6);
      expect(most).toBe(2);
    } finally {
      await capped.close();
    }
  });

  it.each(['127.0.0.1', 'localhost'])('refuses a source on %s when private URLs are not allowed', async (host) => {
    let token = '';
    const target = await startTarget(serveWellKnown(() => token));
    const agentId = (
      await strict.services.agents.edits.create(agentInput({ name: `Local ${host}`, source_url: `http://${host}:${target.port}/agent` }), {
        emitEvents: false,
      })
    ).id;
    const claim = await createClaim(agentId, strict);
    token = claim.verification.token; // the file is there: only the address rule stops it

    const response = await verify(claim.id, strict);
    expect(response.status).toBe(422);
    const detail = (await json(response)).detail as string;
    expect(detail).toMatch(/private, loopback or reserved address/);
    expect(target.requests).toEqual([]);
    expect((await json(await strict.api(`/claims/${claim.id}`))).status).toBe('pending');
    expect((await json(await strict.api(`/agents/${agentId}`))).verified).toBe(false);
  });
});

describe('moderation (console service)', () => {
  it('lists and counts claims with the full record', async () => {
    const target = await startTarget();
    const agentId = await agentOn(target);
    const claim = await createClaim(agentId);
    const { claims } = server.services;
    const full = await claims.get(claim.id);
    expect(full).toMatchObject({
      id: claim.id,
      agent_id: agentId,
      agent_name: expect.stringMatching(/^Claimable/),
      claimant_email: 'ada@example.com',
      verification: { token: claim.verification.token },
      version: 1,
    });
    const page = await claims.list({ page: 1, limit: 100, status: 'pending', agent_id: agentId });
    expect(page.items.map((c) => c.id)).toEqual([claim.id]);
    expect(page.total).toBe(1);
    expect(await claims.countPending()).toBeGreaterThanOrEqual(1);
    expect((await claims.list({ page: 1, limit: 100 })).items.every((c) => typeof c.claimant_email === 'string')).toBe(true);
  });

  it('verifies manually with the same events, audited', async () => {
    const target = await startTarget();
    const agentId = await agentOn(target);
    const claim = await createClaim(agentId);
    const pendingBefore = await server.services.claims.countPending();
    const result = await server.services.claims.verifyManually(claim.id, 'mod:alice', 'Confirmed by e-mail from the repo owner', {
      expectedVersion: 1,
    });
    expect(result).toMatchObject({ status: 'verified', verified_by: 'manual', version: 2 });
    expect(await server.services.claims.countPending()).toBe(pendingBefore - 1);
    expect((await json(await server.api(`/agents/${agentId}`))).verified).toBe(true);
    expect(await eventsFor(server, (data) => data.agent_id === agentId)).toEqual(
      expect.arrayContaining([
        { type: 'claim.approved', data: { claim_id: claim.id, agent_id: agentId, claimant_name: 'Ada Owner', method: 'manual' } },
        { type: 'agent.verified', data: expect.objectContaining({ agent_id: agentId, via: 'claim' }) },
      ]),
    );
    const audit = (await server.services.audit.list({ page: 1, limit: 10, entityType: 'claim', entityId: claim.id })).items;
    expect(audit).toEqual([
      expect.objectContaining({
        actor: 'mod:alice',
        action: 'claim.verify',
        after: expect.objectContaining({ verified_by: 'manual', note: 'Confirmed by e-mail from the repo owner' }),
      }),
    ]);
    expect(
      (await server.services.audit.list({ page: 1, limit: 10, entityType: 'agent', entityId: agentId })).items.map((a) => a.action),
    ).toContain('agent.verify');
  });

  it('rejects with a reason the claimant can read; no event', async () => {
    const target = await startTarget();
    const agentId = await agentOn(target);
    const claim = await createClaim(agentId);
    const result = await server.services.claims.reject(claim.id, 'The e-mail domain does not match the repository', 'mod:bob');
    expect(result.status).toBe('rejected');
    const publicView = await json(await server.api(`/claims/${claim.id}`));
    expect(publicView).toMatchObject({ status: 'rejected', reason: 'The e-mail domain does not match the repository' });
    expect(await eventsFor(server, (data) => data.agent_id === agentId)).toEqual([]);
    expect((await server.services.audit.list({ page: 1, limit: 10, entityType: 'claim', entityId: claim.id })).items[0]).toMatchObject({
      actor: 'mod:bob',
      action: 'claim.reject',
    });
    expect((await verify(claim.id)).status).toBe(409);
    await expect(server.services.claims.reject(claim.id, 'again', 'mod:bob')).rejects.toThrowError(/already rejected/);
  });

  it('refuses a blank reason and a stale version', async () => {
    const target = await startTarget();
    const claim = await createClaim(await agentOn(target));
    const { claims } = server.services;
    const blank = await claims.reject(claim.id, '   ', 'mod:bob').catch((error: unknown) => error);
    expect(blank).toBeInstanceOf(AppError);
    expect((blank as AppError).code).toBe('validation_failed');

    await verify(claim.id); // a failed check still bumps the version (last_check changed)
    const stale = await claims.verifyManually(claim.id, 'mod:alice', undefined, { expectedVersion: 1 }).catch((error: unknown) => error);
    expect(stale).toBeInstanceOf(AppError);
    expect((stale as AppError).code).toBe('stale_version');
    expect((await claims.get(claim.id)).status).toBe('pending');
  });

  it('checks now on a moderator’s behalf, auditing the result', async () => {
    let token = '';
    const target = await startTarget(serveWellKnown(() => token));
    const agentId = await agentOn(target);
    const claim = await createClaim(agentId);
    const { claims } = server.services;

    const failed = await claims.verifyNow(claim.id, 'mod:carol').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(AppError);
    expect((failed as AppError).code).toBe('verification_failed');
    expect(await claims.get(claim.id)).toMatchObject({ status: 'pending', last_check: { ok: false }, version: 2 });

    token = claim.verification.token;
    const verified = await claims.verifyNow(claim.id, 'mod:carol', { expectedVersion: 2 });
    expect(verified).toMatchObject({ status: 'verified', verified_by: 'automatic', version: 3 });
    const actions = (await server.services.audit.list({ page: 1, limit: 10, entityType: 'claim', entityId: claim.id })).items
      .map((a) => `${a.actor} ${a.action}`)
      .sort();
    expect(actions).toEqual(['mod:carol claim.check', 'mod:carol claim.verify']);
    expect(await eventsFor(server, (data) => data.claim_id === claim.id)).toEqual([
      { type: 'claim.approved', data: { claim_id: claim.id, agent_id: agentId, claimant_name: 'Ada Owner', method: 'well-known' } },
    ]);
  });
});
