import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { nameKey, similarNames, sourceHostKey } from '../../src-api/modules/submissions/submission-duplicates';
import { REJECTION_REASON_TEMPLATES } from '../../src-api/modules/submissions/submissions.schemas';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { bearer, trpcCall, trpcClient } from '../helpers/trpc';
import { makeTempDir } from '../helpers/temp-dir';

/** The moderation queue's tRPC procedures, called over real HTTP with the admin token, as the web console does. */
const ADMIN_TOKEN = 'test-admin-token-0123456789';

let server: TestServer;
let webRoot: string;
let counter = 0;

beforeAll(async () => {
  webRoot = makeTempDir('agentdir-web-');
  server = await startTestServer(
    { adminToken: ADMIN_TOKEN },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken, { webRoot }) },
  );
});
afterAll(async () => {
  await server.close();
  fs.rmSync(webRoot, { recursive: true, force: true });
});

const { query, mutation: mutate } = trpcClient(() => server.origin, ADMIN_TOKEN);

/** A submission through the public API, unique per call. */
async function submit(overrides: Record<string, unknown> = {}) {
  counter += 1;
  const response = await server.post('/submit', {
    name: `Queue Agent ${counter}`,
    tagline: 'Waits for a moderator',
    source_url: `https://queue-${counter}.example.com/agent`,
    contact_email: `owner${counter}@example.com`,
    ...overrides,
  });
  expect(response.status).toBe(201);
  return json(response);
}

describe('submissions.list, counts, get and options', () => {
  it('pages the queue (at most 100 per page), filters by status and text, and shows the private contact address', async () => {
    const marker = `Needle${Date.now()}`;
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await submit({ name: `${marker} ${i}` }));

    const page = await query('submissions.list', { status: 'pending', q: marker, limit: 2, page: 1 });
    expect(page.status).toBe(200);
    expect(page.data).toMatchObject({ page: 1, limit: 2, total: 3 });
    expect(page.data.submissions.map((s: { id: string }) => s.id)).toEqual([created[2].id, created[1].id]);
    expect(page.data.submissions[0]).toMatchObject({
      status: 'pending',
      version: 1,
      contact_email: expect.stringContaining('@example.com'),
    });

    const second = await query('submissions.list', { status: 'pending', q: marker, limit: 2, page: 2 });
    expect(second.data.submissions.map((s: { id: string }) => s.id)).toEqual([created[0].id]);

    const tooMany = await query('submissions.list', { limit: 101 });
    expect(tooMany.status).toBe(400);
    expect(tooMany.error.data.code).toBe('validation_failed');

    const one = await query('submissions.get', { id: created[0].id });
    expect(one.data).toMatchObject({ id: created[0].id, contact_email: created[0].contact_email ?? expect.any(String), decided_by: null });
    expect((await query('submissions.get', { id: 'sub_missing' })).error.data.code).toBe('not_found');
  });

  it('counts each status', async () => {
    const before = (await query('submissions.counts')).data;
    const pending = await submit();
    const toReject = await submit();
    await mutate('submissions.reject', { id: toReject.id, reason: 'Spam' });
    const after = (await query('submissions.counts')).data;
    expect(after).toEqual({ pending: before.pending + 1, approved: before.approved, rejected: before.rejected + 1 });
    expect(pending.status).toBe('pending');
  });

  it('offers the rejection templates and agent types', async () => {
    const { data } = await query('submissions.options');
    expect(data.reasonTemplates).toEqual(REJECTION_REASON_TEMPLATES);
    expect(data.agentTypes).toContain('coding');
  });
});

describe('submissions.approve and reject', () => {
  it('approves with the expected version, audits it, and the agent is found by the public search at once', async () => {
    const name = `Quasar Harvester ${Date.now()}`;
    const created = await submit({ name });

    const approved = await mutate('submissions.approve', { id: created.id, expectedVersion: 1 });
    expect(approved.status).toBe(200);
    expect(approved.data).toMatchObject({ status: 'approved', decided_by: 'admin-token', version: 2, agent_id: expect.any(String) });

    const search = await json(await server.api(`/agents/search?q=${encodeURIComponent(name)}`));
    expect(search.agents[0]).toMatchObject({ id: approved.data.agent_id, name });

    const audit = (await query('audit.list', { entityType: 'submission', entityId: created.id })).data;
    expect(audit.entries).toMatchObject([{ actor: 'admin-token', action: 'submission.approve' }]);
  });

  it('refuses a stale version (409 stale_version) and a decided submission (409 conflict), writing nothing', async () => {
    const created = await submit();
    const stale = await mutate('submissions.approve', { id: created.id, expectedVersion: 5 });
    expect(stale.status).toBe(409);
    expect(stale.error.data.code).toBe('stale_version');
    expect(stale.error.message).toMatch(/changed by someone else/);
    expect((await query('submissions.get', { id: created.id })).data).toMatchObject({ status: 'pending', version: 1 });

    await mutate('submissions.reject', { id: created.id, reason: 'Not an agent', expectedVersion: 1 });
    const late = await mutate('submissions.approve', { id: created.id });
    expect(late.status).toBe(409);
    expect(late.error.data.code).toBe('conflict');
  });

  it('rejects with a reason that the public API shows, and requires one', async () => {
    const created = await submit();
    const empty = await mutate('submissions.reject', { id: created.id, reason: '   ', expectedVersion: 1 });
    expect(empty.status).toBe(400);
    expect(empty.error.data.code).toBe('validation_failed');

    const reason = REJECTION_REASON_TEMPLATES[1].reason;
    const rejected = await mutate('submissions.reject', { id: created.id, reason, expectedVersion: 1 });
    expect(rejected.data).toMatchObject({ status: 'rejected', reason, version: 2 });
    const publicView = await json(await server.api(`/submissions/${created.id}`));
    expect(publicView).toMatchObject({ status: 'rejected', reason });
    expect(publicView).not.toHaveProperty('contact_email');
  });
});

describe('submissions.update', () => {
  it('corrects a pending submission, bumps the version (so older views go stale) and audits it', async () => {
    const created = await submit({ name: 'Typo Agnet' });
    const edited = await mutate('submissions.update', {
      id: created.id,
      patch: { name: 'Typo Agent', categories: ['writing'] },
      expectedVersion: 1,
    });
    expect(edited.status).toBe(200);
    expect(edited.data).toMatchObject({ name: 'Typo Agent', categories: ['writing'], tagline: created.tagline, version: 2 });

    const stale = await mutate('submissions.approve', { id: created.id, expectedVersion: 1 });
    expect(stale.error.data.code).toBe('stale_version');

    const audit = (await query('audit.list', { entityType: 'submission', entityId: created.id })).data;
    expect(audit.entries[0]).toMatchObject({
      action: 'submission.update',
      actor: 'admin-token',
      after: expect.objectContaining({ name: 'Typo Agent' }),
    });

    // The source stays what was submitted; unknown fields are refused.
    const sourceChange = await mutate('submissions.update', { id: created.id, patch: { source_url: 'https://elsewhere.example.com' } });
    expect(sourceChange.status).toBe(400);
  });
});

describe('bulk decisions', () => {
  it('approves each item on its own, with per-item results including stale versions', async () => {
    const first = await submit();
    const second = await submit();
    const changed = await submit();
    await mutate('submissions.update', { id: changed.id, patch: { tagline: 'Changed meanwhile' } });

    const { status, data } = await mutate('submissions.bulkApprove', {
      items: [{ id: first.id, expectedVersion: 1 }, { id: second.id }, { id: changed.id, expectedVersion: 1 }],
    });
    expect(status).toBe(200);
    expect(data.results).toEqual([
      { id: first.id, ok: true, status: 'approved', agent_id: expect.any(String) },
      { id: second.id, ok: true, status: 'approved', agent_id: expect.any(String) },
      { id: changed.id, ok: false, code: 'stale_version', detail: expect.any(String) },
    ]);
    expect((await query('submissions.get', { id: changed.id })).data.status).toBe('pending');
  });

  it('rejects each item with one reason; more than 100 items are refused', async () => {
    const first = await submit();
    const second = await submit();
    const { data } = await mutate('submissions.bulkReject', { items: [{ id: first.id }, { id: second.id }], reason: 'Spam' });
    expect(data.results.map((r: { ok: boolean }) => r.ok)).toEqual([true, true]);
    expect(await json(await server.api(`/submissions/${second.id}`))).toMatchObject({ status: 'rejected', reason: 'Spam' });

    const items = Array.from({ length: 101 }, (_, i) => ({ id: `sub_${i}` }));
    expect((await mutate('submissions.bulkApprove', { items })).status).toBe(400);
    expect((await mutate('submissions.bulkReject', { items: [{ id: first.id }], reason: '' })).status).toBe(400);
  });
});

describe('submissions.duplicates', () => {
  it('points at listed agents and other submissions with a similar name or the same source', async () => {
    const agent = await server.services.agents.edits.create(
      agentInput({ name: 'Orbit Planner', source_url: 'https://github.com/orbitco/orbit-planner' }),
      { emitEvents: false },
    );
    const sameOwner = await submit({ name: 'Completely Different', source_url: 'https://github.com/OrbitCo/another-tool' });
    const sameRepository = await submit({
      name: 'Orbit Helper Scripts',
      source_url: 'https://github.com/OrbitCo/Orbit-Planner/tree/main/helpers',
    });
    const similar = await submit({ name: 'Orbit Planer Agent', source_url: 'https://orbit.example.net/' });
    const stranger = await submit({ name: 'Zebra Accountant', source_url: 'https://github.com/someone-else/zebra' });

    const hints = (await query('submissions.duplicates', { id: similar.id })).data;
    expect(hints.agents).toEqual([{ id: agent.id, name: 'Orbit Planner', source_url: agent.sourceUrl, matches: ['similar_name'] }]);

    // On a code host the source is the repository: another repository of the same owner is another project.
    const byOwner = (await query('submissions.duplicates', { id: sameOwner.id })).data;
    expect(byOwner.agents).toEqual([]);
    const byRepository = (await query('submissions.duplicates', { id: sameRepository.id })).data;
    expect(byRepository.agents).toEqual([expect.objectContaining({ id: agent.id, matches: ['same_source'] })]);

    const none = (await query('submissions.duplicates', { id: stranger.id })).data;
    expect(none.agents).toEqual([]);
    expect(none.submissions.map((s: { id: string }) => s.id)).not.toContain(similar.id);

    // The agent a submission became is not its own duplicate.
    const approved = (await mutate('submissions.approve', { id: similar.id })).data;
    const after = (await query('submissions.duplicates', { id: similar.id })).data;
    expect(after.agents.map((a: { id: string }) => a.id)).not.toContain(approved.agent_id);
  });

  it('compares names and sources sensibly', () => {
    expect(nameKey('The Alpha-Coder AI Agent')).toBe('alphacoder');
    expect(nameKey('Agent')).toBe('agent');
    expect(similarNames(nameKey('Alpha Coder'), nameKey('AlphaCoder Bot'))).toBe(true);
    expect(similarNames(nameKey('Alpha Coder'), nameKey('Alpha Codr'))).toBe(true);
    expect(similarNames(nameKey('Alpha Coder'), nameKey('Beta Writer'))).toBe(false);
    expect(similarNames(nameKey('Bot'), nameKey('Robot Chef'))).toBe(false);
    expect(sourceHostKey('github.com/Acme/Tool.git')).toBe('github.com/acme/tool');
    expect(sourceHostKey('github.com/acme')).toBe('github.com/acme');
    expect(sourceHostKey('acme.dev/docs')).toBe('acme.dev');
  });
});

describe('authentication', () => {
  it('refuses the queue without the admin token', async () => {
    const response = await trpcCall(server.origin, 'query', 'submissions.list', {}, bearer('wrong-token-0123456789'));
    expect(response.status).toBe(401);
  });
});
