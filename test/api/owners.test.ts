import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { signUpAndSignIn, withCookie } from '../helpers/accounts';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp-receiver';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';

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
  webRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-web-'));
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

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function trpc(kind: 'query' | 'mutation', procedure: string, input?: unknown): Promise<{ status: number; data: any; error: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const response =
    kind === 'query'
      ? await fetch(`${server.origin}/trpc/${procedure}${input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, {
          headers,
        })
      : await fetch(`${server.origin}/trpc/${procedure}`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify(input ?? {}),
        });
  const body = await json(response);
  return { status: response.status, data: body.result?.data, error: body.error ?? body };
}

/** A listed agent hosted on (the stand-in) GitHub. */
function githubAgent(): string {
  counter += 1;
  return server.services.agents.create(
    agentInput({ name: `Owned Tool ${counter}`, tagline: 'Does things', source_url: `https://github.com/acme/tool-${counter}` }),
    { emitEvents: false },
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

const auditOf = (entityId: string) =>
  server.services.audit.list({ entityId, page: 1, limit: 50 } as Parameters<typeof server.services.audit.list>[0]).items;

describe('ownership through claims', () => {
  it('makes the account of a verified claim the owner and rejects the competing claims, audited as system', async () => {
    const agentId = githubAgent();
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
      expect(auditOf(other.id)).toEqual([expect.objectContaining({ actor: 'system', action: 'claim.reject' })]);
    }
    const events = server.services.events.listRecent(20).filter((event) => event.data.agent_id === agentId);
    expect(events.map((event) => event.type).sort()).toEqual(['agent.verified', 'claim.approved']);
  });

  it('a moderator verifying a claim in the console makes its account the owner too', async () => {
    const agentId = githubAgent();
    const theirs = await claim(bob, agentId);
    const verified = await trpc('mutation', 'claims.verifyManually', { id: theirs.id, note: 'known maintainer' });
    expect(verified.status).toBe(200);
    expect((await json(await server.api(`/agents/${agentId}`))).owner).toEqual({ name: 'Bob Other' });
    expect(server.services.agents.getRow(agentId).ownerAccountId).not.toBe(annId);
  });

  it('an anonymous claim verifies the agent without an owner', async () => {
    const agentId = githubAgent();
    const anonymous = await claim(undefined, agentId);
    publish(anonymous);
    expect((await server.api(`/claims/${anonymous.id}/verify`, { method: 'POST' })).status).toBe(200);
    expect(await json(await server.api(`/agents/${agentId}`))).toMatchObject({ verified: true, owner: null });
  });

  it("shows the owner's new name after a rename, and no owner once the account is closed", async () => {
    const { cookie } = await signUpAndSignIn(server, smtp, 'cat@owners.test', { name: 'Cat' });
    const cat = withCookie(server, cookie);
    const agentId = githubAgent();
    const hers = await claim(cat, agentId);
    publish(hers);
    expect((await server.api(`/claims/${hers.id}/verify`, { method: 'POST' })).status).toBe(200);
    expect((await json(await server.api(`/agents/${agentId}`))).owner).toEqual({ name: 'Cat' });

    const catId = server.services.agents.getRow(agentId).ownerAccountId!;
    server.services.accounts.rename(catId, 'Catherine');
    expect((await json(await server.api(`/agents/${agentId}`))).owner).toEqual({ name: 'Catherine' });
    server.services.accounts.close(catId);
    expect(await json(await server.api(`/agents/${agentId}`))).toMatchObject({ verified: true, owner: null });
  });
});
