import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';

/**
 * Proof methods against real parts: one HTTP server on 127.0.0.1 stands in for
 * the raw-file hosts of GitHub (/gh), GitLab (/gl) and Codeberg (/cb) through
 * AGENTDIR_FORGE_RAW_BASES' config field, and a dns2 server on 127.0.0.1
 * answers the TXT queries (config.dnsServers).
 */

type Reply = { status?: number; body?: string | Buffer; location?: string };

let forgeOrigin = '';
const files = new Map<string, Reply>();
const forgeRequests: string[] = [];
const forge = http.createServer((request, response) => {
  forgeRequests.push(request.url ?? '');
  response.on('error', () => {});
  const reply = files.get(request.url ?? '');
  if (!reply) return void response.writeHead(404, { 'content-type': 'text/plain' }).end('404: Not Found');
  if (reply.location) return void response.writeHead(reply.status ?? 302, { location: reply.location }).end();
  response.writeHead(reply.status ?? 200, { 'content-type': 'text/plain' }).end(reply.body ?? '');
});

let dns: TestDnsServer;
let server: TestServer;
let quotaServer: TestServer;
let counter = 0;

beforeAll(async () => {
  await new Promise<void>((resolve) => forge.listen(0, '127.0.0.1', resolve));
  forgeOrigin = `http://127.0.0.1:${(forge.address() as AddressInfo).port}`;
  dns = await startDnsServer();
  const overrides = {
    allowPrivateUrls: true,
    // The DNS server shares this process's event loop, which load can stall for a second: deadlines that
    // only a silent server reaches.
    claimCheckTimeoutMs: 4_000,
    dnsServers: [dns.address],
    dnsTimeoutMs: 1_500,
    forgeRawBases: { 'github.com': `${forgeOrigin}/gh`, 'gitlab.com': `${forgeOrigin}/gl`, 'codeberg.org': `${forgeOrigin}/cb` },
  };
  [server, quotaServer] = await Promise.all([
    startTestServer(overrides),
    startTestServer({ ...overrides, rateLimit: { enabled: true, writes: 1000, anonymousReads: 1000 } }),
  ]);
});
afterAll(async () => {
  forge.closeAllConnections();
  await Promise.all([server.close(), quotaServer.close(), dns.close(), new Promise((resolve) => forge.close(resolve))]);
});

async function agentAt(sourceUrl: string, on: TestServer = server): Promise<string> {
  counter += 1;
  return (await on.services.agents.edits.create(agentInput({ name: `Proof ${counter}`, source_url: sourceUrl }), { emitEvents: false })).id;
}

async function claimOf(agentId: string, on: TestServer = server) {
  const response = await on.post('/claims', { agent_id: agentId, claimant_name: 'Ada Owner', claimant_email: 'ada@example.com' });
  expect(response.status).toBe(201);
  return json(response);
}

const verify = (id: string) => server.api(`/claims/${id}/verify`, { method: 'POST' });

async function expectFailure(id: string, pattern: RegExp) {
  const response = await verify(id);
  expect(response.status).toBe(422);
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  const problem = await json(response);
  expect(problem.code).toBe('verification_failed');
  expect(problem.detail).toMatch(pattern);
  expect(problem.detail).not.toMatch(/^not found$/i);
  const claim = await json(await server.api(`/claims/${id}`));
  expect(claim.status).toBe('pending');
  expect(claim.last_check.detail).toBe(problem.detail);
  return claim;
}

describe('repository-file on the forges', () => {
  it('GitHub: asks for the file in the repository, read from the raw host, never from github.com', async () => {
    const agentId = await agentAt(`https://github.com/acme-${counter}/helper`);
    const claim = await claimOf(agentId);
    const url = `${forgeOrigin}/gh/acme-${counter - 1}/helper/HEAD/.well-known/agent-directory-claim.txt`;
    expect(claim.verification).toMatchObject({ method: 'repository-file', url, methods: [{ method: 'repository-file', url }] });
    expect(claim.verification.methods).toHaveLength(1);
    expect(JSON.stringify(claim.verification)).not.toMatch(/https:\/\/github\.com\/\.well-known/);
    expect(claim.verification.instructions).toMatch(/Commit a file \.well-known\/agent-directory-claim\.txt/);

    // Not published yet: an exact 404, the claim stays pending.
    const failed = await expectFailure(claim.id, /HTTP 404 \(no such file\)/);
    expect(failed.last_check.results).toEqual([
      { method: 'repository-file', ok: false, http_status: 404, failure: 'http_status', detail: failed.last_check.detail },
    ]);

    files.set(new URL(url).pathname, { body: `${claim.verification.token}\n` });
    const response = await verify(claim.id);
    expect(response.status).toBe(200);
    const verified = await json(response);
    expect(verified).toMatchObject({
      status: 'verified',
      verified_by: 'automatic',
      verified_method: 'repository-file',
      last_check: { ok: true, method: 'repository-file', http_status: 200 },
    });
    expect((await json(await server.api(`/agents/${agentId}`))).verified).toBe(true);
  });

  it('GitLab: nested groups keep their path; /-/raw/HEAD reads the default branch', async () => {
    const claim = await claimOf(await agentAt('https://gitlab.com/platform/tools/review-bot.git'));
    const path = '/gl/platform/tools/review-bot/-/raw/HEAD/.well-known/agent-directory-claim.txt';
    expect(claim.verification).toMatchObject({ method: 'repository-file', url: `${forgeOrigin}${path}` });
    files.set(path, { body: claim.verification.token });
    expect((await json(await verify(claim.id))).verified_method).toBe('repository-file');
  });

  it('Codeberg: the API raw route, which reads the default branch', async () => {
    const claim = await claimOf(await agentAt('https://codeberg.org/forgefolk/summarizer'));
    const path = '/cb/api/v1/repos/forgefolk/summarizer/raw/.well-known/agent-directory-claim.txt';
    expect(claim.verification.url).toBe(`${forgeOrigin}${path}`);
    files.set(path, { body: `token: ${claim.verification.token}` });
    expect((await verify(claim.id)).status).toBe(200);
  });

  it('a token in the wrong file: the right file is missing (404), and a file with another token says the token is missing', async () => {
    const claim = await claimOf(await agentAt(`https://github.com/wrongfile/bot-${counter}`));
    const url = new URL(claim.verification.url);
    // Published at the repository root instead of .well-known/.
    files.set(url.pathname.replace('.well-known/', ''), { body: claim.verification.token });
    await expectFailure(claim.id, /HTTP 404/);
    files.set(url.pathname, { body: 'adclaim-someoneelsestoken0000000000000' });
    const failed = await expectFailure(claim.id, /HTTP 200, but the token of this claim is missing/);
    expect(failed.last_check.results[0].failure).toBe('token_missing');
  });

  it('a forge that redirects: refused, and the answer names the redirect', async () => {
    const claim = await claimOf(await agentAt(`https://github.com/moved/bot-${counter}`));
    const url = new URL(claim.verification.url);
    files.set(url.pathname, { status: 301, location: 'https://elsewhere.example/claim.txt' });
    const failed = await expectFailure(claim.id, /HTTP 301, a redirect to https:\/\/elsewhere\.example\/claim\.txt; redirects are refused/);
    expect(failed.last_check.results[0]).toMatchObject({ failure: 'redirect', http_status: 301 });
  });

  it('a 5 MB proof file: too large, even with the token at its start', async () => {
    const claim = await claimOf(await agentAt(`https://github.com/huge/bot-${counter}`));
    const url = new URL(claim.verification.url);
    files.set(url.pathname, { body: Buffer.concat([Buffer.from(`${claim.verification.token}\n`), Buffer.alloc(5 * 1024 * 1024, 'x')]) });
    const failed = await expectFailure(claim.id, /too large: more than 64 KiB/);
    expect(failed.last_check.results[0].failure).toBe('too_large');
  });

  it('a forge URL that names no repository cannot be proven: 422 unprovable_source, no claim written', async () => {
    const agentId = await agentAt(`https://github.com/just-an-org-${counter}`);
    const response = await server.post('/claims', { agent_id: agentId, claimant_name: 'Ada', claimant_email: 'ada@example.com' });
    expect(response.status).toBe(422);
    expect(await json(response)).toMatchObject({ code: 'unprovable_source' });
    expect((await server.services.claims.list({ page: 1, limit: 10, agent_id: agentId })).total).toBe(0);
  });
});

describe('dns-txt and well-known on other hosts', () => {
  it('offers the well-known file first and a TXT record second; a TXT record verifies', async () => {
    const host = `agents-${counter}.example.test`;
    const claim = await claimOf(await agentAt(`https://${host}/bots/helper`));
    const name = `_agent-directory-claim.${host}`;
    const value = `agent-directory-claim=${claim.verification.token}`;
    expect(claim.verification.methods).toEqual([
      { method: 'well-known', url: `https://${host}/.well-known/agent-directory-claim.txt` },
      { method: 'dns-txt', name, value },
    ]);
    expect(claim.verification.method).toBe('well-known');

    // The public view names the record but never its value (the token).
    const publicView = await json(await server.api(`/claims/${claim.id}`));
    expect(publicView.verification.methods[1]).toEqual({ method: 'dns-txt', name });
    expect(JSON.stringify(publicView)).not.toContain(claim.verification.token);

    // No record yet: both methods say what failed.
    const failed = await expectFailure(claim.id, /No TXT record at _agent-directory-claim\./);
    expect(failed.last_check.detail).toMatch(/well-known: .*could not be fetched/);
    expect(failed.last_check.results.map((r: { failure: string }) => r.failure)).toEqual(['dns_error', 'dns_no_record']);

    dns.setTxt(name, ['v=spf1 -all', 'agent-directory-claim=adclaim-nottheright0000000000000000']);
    const wrong = await expectFailure(claim.id, /agent-directory-claim record\(s\) with another token; the token of this claim is missing/);
    expect(wrong.last_check.results[1].failure).toBe('token_missing');

    dns.setTxt(name, ['v=spf1 -all', value]);
    const response = await verify(claim.id);
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({
      status: 'verified',
      verified_method: 'dns-txt',
      last_check: { ok: true, method: 'dns-txt' },
    });
    expect(dns.queries).toContain(name);
  });

  it('a DNS server that never answers: the check times out and says so; the claim stays pending', async () => {
    const host = `silent-${counter}.example.test`;
    const claim = await claimOf(await agentAt(`https://${host}/x`));
    dns.mode = 'silent';
    try {
      const started = Date.now();
      const failed = await expectFailure(
        claim.id,
        /dns-txt: DNS timeout: no answer from the DNS server for _agent-directory-claim\.silent-.* within 1500 ms/,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(failed.last_check.results[1].failure).toBe('dns_timeout');
    } finally {
      dns.mode = 'answer';
    }
    // Nothing else blocked meanwhile, and the server still answers.
    expect((await server.api('/health')).status).toBe(200);
  });

  it('an IP-address source gets only the well-known file', async () => {
    const claim = await claimOf(await agentAt(`http://127.0.0.1:9/agents/${counter}`));
    expect(claim.verification.methods).toEqual([{ method: 'well-known', url: 'http://127.0.0.1:9/.well-known/agent-directory-claim.txt' }]);
  });
});

describe('claims on what cannot be claimed, and quotas', () => {
  it('404s an unknown agent and an unlisted one; nothing is written', async () => {
    const before = await server.services.claims.countPending();
    const unknown = await server.post('/claims', { agent_id: 'no-such-agent', claimant_name: 'Ada', claimant_email: 'ada@example.com' });
    expect(unknown.status).toBe(404);
    const hidden = await agentAt(`https://github.com/hidden/bot-${counter}`);
    await server.services.agents.edits.setListed(hidden, false, { emitEvents: false });
    const unlisted = await server.post('/claims', { agent_id: hidden, claimant_name: 'Ada', claimant_email: 'ada@example.com' });
    expect(unlisted.status).toBe(404);
    expect((await json(unlisted)).code).toBe('not_found');
    expect(await server.services.claims.countPending()).toBe(before);
  });

  it('at most 5 pending claims per client: the 6th is 409 quota_exceeded; verifying one makes room', async () => {
    const made = [];
    for (let i = 0; i < 5; i++)
      made.push(await claimOf(await agentAt(`https://github.com/quota/bot-${counter}`, quotaServer), quotaServer));
    const sixthAgent = await agentAt(`https://github.com/quota/bot-${counter}`, quotaServer);
    const sixth = await quotaServer.post('/claims', { agent_id: sixthAgent, claimant_name: 'Ada', claimant_email: 'ada@example.com' });
    expect(sixth.status).toBe(409);
    expect(await json(sixth)).toMatchObject({ code: 'quota_exceeded', detail: expect.stringMatching(/At most 5 pending claims/) });

    files.set(new URL(made[0].verification.url).pathname, { body: made[0].verification.token });
    expect((await quotaServer.api(`/claims/${made[0].id}/verify`, { method: 'POST' })).status).toBe(200);
    await claimOf(sixthAgent, quotaServer);
  });
});

describe('competing claims', () => {
  it('when one is verified the others are rejected with a reason, audited as system', async () => {
    const agentId = await agentAt(`https://github.com/rivals/bot-${counter}`);
    const winner = await claimOf(agentId);
    const loser = await claimOf(agentId);
    files.set(new URL(winner.verification.url).pathname, { body: winner.verification.token });
    expect((await verify(winner.id)).status).toBe(200);
    const rejected = await json(await server.api(`/claims/${loser.id}`));
    expect(rejected).toMatchObject({ status: 'rejected', reason: expect.stringContaining(winner.id) });
    const entries = await server.services.audit.list({ page: 1, limit: 50, entityType: 'claim', entityId: loser.id });
    expect(entries.items).toEqual([expect.objectContaining({ actor: 'system', action: 'claim.reject' })]);
  });
});
