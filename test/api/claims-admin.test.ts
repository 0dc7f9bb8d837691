import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { trpcClient } from '../helpers/trpc';
import { makeTempDir } from '../helpers/temp-dir';

/** The claims procedures of the console over real HTTP, with a real host serving (or not) the well-known file. */
const ADMIN_TOKEN = 'test-admin-token-0123456789';
const WELL_KNOWN = '/.well-known/agent-directory-claim.txt';

let server: TestServer;
let webRoot: string;
let host: http.Server;
let hostOrigin: string;
/** What the host serves at the well-known path; null → 404. */
let wellKnownBody: string | null = null;
let agentCounter = 0;

beforeAll(async () => {
  webRoot = makeTempDir('agentdir-web-');
  server = await startTestServer(
    { adminToken: ADMIN_TOKEN, allowPrivateUrls: true },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken, { webRoot }) },
  );
  host = http.createServer((request, response) => {
    if (request.url === WELL_KNOWN && wellKnownBody !== null) response.writeHead(200, { 'content-type': 'text/plain' }).end(wellKnownBody);
    else response.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  hostOrigin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
});
afterAll(async () => {
  host.closeAllConnections();
  await new Promise<void>((resolve) => host.close(() => resolve()));
  await server.close();
  fs.rmSync(webRoot, { recursive: true, force: true });
});

const { query, mutation: mutate } = trpcClient(() => server.origin, ADMIN_TOKEN);

/** A listed agent on the local host and a pending claim on it, through the public API. */
async function pendingClaim() {
  agentCounter += 1;
  const agent = await server.services.agents.edits.create(
    agentInput({ name: `Claim Target ${agentCounter}`, source_url: `${hostOrigin}/agents/target-${agentCounter}` }),
    { emitEvents: false },
  );
  const response = await server.post('/claims', { agent_id: agent.id, claimant_name: 'Grace Owner', claimant_email: 'grace@example.com' });
  expect(response.status).toBe(201);
  return { agentId: agent.id, claim: await json(response) };
}

const auditActions = async (claimId: string) =>
  (await query('audit.list', { entityType: 'claim', entityId: claimId })).data.entries.map(
    (e: { actor: string; action: string }) => `${e.actor} ${e.action}`,
  );

describe('claims.list, counts and get', () => {
  it('lists newest first with the evidence, counts each status, and pages at most 100', async () => {
    const { agentId, claim } = await pendingClaim();
    const page = await query('claims.list', { status: 'pending', limit: 100 });
    expect(page.status).toBe(200);
    expect(page.data.claims[0]).toMatchObject({
      id: claim.id,
      agent_id: agentId,
      agent_name: expect.stringMatching(/^Claim Target/),
      claimant_name: 'Grace Owner',
      claimant_email: 'grace@example.com',
      verification: { method: 'well-known', url: `${hostOrigin}${WELL_KNOWN}`, token: claim.verification.token },
      last_check: null,
      version: 1,
    });
    expect((await query('claims.list', { limit: 101 })).status).toBe(400);

    const counts = (await query('claims.counts')).data;
    expect(counts).toEqual({ pending: expect.any(Number), verified: expect.any(Number), rejected: expect.any(Number) });
    expect(counts.pending).toBe(page.data.total);

    expect((await query('claims.get', { id: claim.id })).data.verification.token).toBe(claim.verification.token);
    expect((await query('claims.get', { id: 'clm_missing' })).error.data.code).toBe('not_found');
  });
});

describe('claims.list grouped by agent', () => {
  it('puts competing claims on one agent side by side and counts them; after one is verified the others are rejected', async () => {
    const first = await pendingClaim();
    const other = await pendingClaim();
    const rival = await server.post('/claims', {
      agent_id: first.agentId,
      claimant_name: 'Mallory Rival',
      claimant_email: 'm@example.com',
    });
    expect(rival.status).toBe(201);
    const rivalClaim = await json(rival);

    // Newest first, the rival's claim is separated from the first one by the other agent's claim; grouped, they are together.
    const flat = (await query('claims.list', { status: 'pending', limit: 100 })).data.claims.map((c: { id: string }) => c.id);
    expect(flat.slice(0, 3)).toEqual([rivalClaim.id, other.claim.id, first.claim.id]);
    const grouped = (await query('claims.list', { status: 'pending', limit: 100, group_by_agent: true })).data.claims;
    expect(grouped.slice(0, 3).map((c: { id: string }) => c.id)).toEqual([rivalClaim.id, first.claim.id, other.claim.id]);
    expect(grouped.slice(0, 3).map((c: { competing_claims: number }) => c.competing_claims)).toEqual([1, 1, 0]);
    expect((await query('claims.get', { id: first.claim.id })).data.competing_claims).toBe(1);

    const verified = await mutate('claims.verifyManually', { id: first.claim.id, expectedVersion: 1 });
    expect(verified.data).toMatchObject({ status: 'verified', competing_claims: 0 });
    const superseded = (await query('claims.list', { agent_id: first.agentId, limit: 100, group_by_agent: true })).data.claims;
    expect(superseded.map((c: { id: string; status: string }) => [c.id, c.status])).toEqual([
      [rivalClaim.id, 'rejected'],
      [first.claim.id, 'verified'],
    ]);
    expect(await auditActions(rivalClaim.id)).toEqual(['system claim.reject']);
  });
});

describe('claims.verifyNow', () => {
  it('reports a failed check as 422 verification_failed, keeps it in last_check, then verifies once the token is served', async () => {
    const { agentId, claim } = await pendingClaim();
    wellKnownBody = null;

    const failed = await mutate('claims.verifyNow', { id: claim.id, expectedVersion: 1 });
    expect(failed.status).toBe(422);
    expect(failed.error.data.code).toBe('verification_failed');
    expect(failed.error.message).toContain('HTTP 404');
    const afterFailure = (await query('claims.get', { id: claim.id })).data;
    expect(afterFailure).toMatchObject({ status: 'pending', version: 2, last_check: { ok: false, http_status: 404 } });

    // The version the console showed before the failed check is stale now.
    const stale = await mutate('claims.verifyNow', { id: claim.id, expectedVersion: 1 });
    expect(stale.status).toBe(409);
    expect(stale.error.data.code).toBe('stale_version');

    wellKnownBody = `verification: ${claim.verification.token}\n`;
    const verified = await mutate('claims.verifyNow', { id: claim.id, expectedVersion: 2 });
    expect(verified.status).toBe(200);
    expect(verified.data).toMatchObject({ status: 'verified', verified_by: 'automatic', last_check: { ok: true, http_status: 200 } });
    expect((await json(await server.api(`/agents/${agentId}`))).verified).toBe(true);
    expect((await auditActions(claim.id)).sort()).toEqual(['admin-token claim.check', 'admin-token claim.verify']);

    const again = await mutate('claims.verifyNow', { id: claim.id });
    expect(again.status).toBe(409);
    expect(again.error.data.code).toBe('conflict');
  });
});

describe('claims.verifyManually and reject', () => {
  it('verifies by hand with a note, audited', async () => {
    const { agentId, claim } = await pendingClaim();
    const result = await mutate('claims.verifyManually', { id: claim.id, note: 'Confirmed on a call', expectedVersion: 1 });
    expect(result.data).toMatchObject({ status: 'verified', verified_by: 'manual', version: 2 });
    expect((await json(await server.api(`/agents/${agentId}`))).verified).toBe(true);
    const [entry] = (await query('audit.list', { entityType: 'claim', entityId: claim.id })).data.entries;
    expect(entry).toMatchObject({
      actor: 'admin-token',
      action: 'claim.verify',
      after: expect.objectContaining({ note: 'Confirmed on a call' }),
    });
  });

  it('rejects with a reason the claimant sees; a blank reason or a stale version is refused', async () => {
    const { claim } = await pendingClaim();
    expect((await mutate('claims.reject', { id: claim.id, reason: '  ' })).status).toBe(400);
    const stale = await mutate('claims.reject', { id: claim.id, reason: 'No', expectedVersion: 3 });
    expect(stale.error.data.code).toBe('stale_version');

    const rejected = await mutate('claims.reject', { id: claim.id, reason: 'The e-mail does not match', expectedVersion: 1 });
    expect(rejected.data).toMatchObject({ status: 'rejected', reason: 'The e-mail does not match' });
    expect(await json(await server.api(`/claims/${claim.id}`))).toMatchObject({ status: 'rejected', reason: 'The e-mail does not match' });
    expect(await auditActions(claim.id)).toEqual(['admin-token claim.reject']);
  });
});
