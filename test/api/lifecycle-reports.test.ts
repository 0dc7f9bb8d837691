import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { trpcClient } from '../helpers/trpc';

/** Agent lifecycle (status, deprecated ranking) and public abuse reports with the console's queue, over real HTTP. */
const ADMIN_TOKEN = 'test-admin-token-lifecycle-0123456789';
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(
    { adminToken: ADMIN_TOKEN, rateLimit: { enabled: true, writes: 1000, anonymousReads: 1000 } },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken) },
  );
});
afterAll(() => server.close());

const { query, mutation } = trpcClient(() => server.origin, ADMIN_TOKEN);
const createAgent = async (overrides: Parameters<typeof agentInput>[0]) =>
  await server.services.agents.edits.create(agentInput(overrides), { emitEvents: false });

describe('lifecycle', () => {
  it('profiles carry status and status_message; deprecated agents stay findable, rank below active ones and are marked', async () => {
    const old = await createAgent({ name: 'Zephyr Translator Classic', tagline: 'Translates zephyr documents' });
    const fresh = await createAgent({ name: 'Zephyr Translator Modern', tagline: 'Translates zephyr documents' });
    expect(await json(await server.api(`/agents/${old.id}`))).toMatchObject({ status: 'active', status_message: null });

    const before = await json(await server.api('/agents/search?q=zephyr+translator'));
    const result = await mutation('agents.setStatus', { id: old.id, status: 'deprecated', message: `Use ${fresh.id} instead` });
    expect(result.status).toBe(200);
    expect(result.data).toMatchObject({ status: 'deprecated', status_message: `Use ${fresh.id} instead` });

    const profile = await json(await server.api(`/agents/${old.id}`));
    expect(profile).toMatchObject({ status: 'deprecated', status_message: `Use ${fresh.id} instead` });
    const after = await json(await server.api('/agents/search?q=zephyr+translator'));
    const ids = after.agents.map((a: { id: string }) => a.id);
    expect(ids).toContain(old.id);
    expect(ids.indexOf(fresh.id)).toBeLessThan(ids.indexOf(old.id));
    expect(after.agents.find((a: { id: string }) => a.id === old.id).status).toBe('deprecated');
    expect(before.total).toBe(after.total);

    const events = (await server.services.events.listRecent(50)).filter((e) => e.data.agent_id === old.id);
    expect(events.map((e) => e.type)).toContain('agent.updated');
    const audit = (await query('audit.list', { entityId: old.id })).data;
    expect(audit.entries.map((e: { action: string }) => e.action)).toContain('agent.deprecate');

    // Active again: the message goes.
    expect((await mutation('agents.setStatus', { id: old.id, status: 'active' })).data).toMatchObject({
      status: 'active',
      status_message: null,
    });
  });

  it('moderators unlist and relist', async () => {
    const agent = await createAgent({ name: 'Relistable Bot' });
    expect((await mutation('agents.setListed', { id: agent.id, listed: false })).data.listed).toBe(false);
    expect((await server.api(`/agents/${agent.id}`)).status).toBe(404);
    expect((await mutation('agents.setListed', { id: agent.id, listed: true })).data.listed).toBe(true);
    expect((await server.api(`/agents/${agent.id}`)).status).toBe(200);
  });
});

describe('abuse reports', () => {
  it('202 for a report, one open report per agent per client, a clear answer for bad input', async () => {
    const agent = await createAgent({ name: 'Spammy Bot' });
    const response = await server.post(`/agents/${agent.id}/reports`, {
      reason: 'spam',
      details: 'Posts ads',
      contact_email: 'r@example.com',
    });
    expect(response.status).toBe(202);
    expect(await json(response)).toMatchObject({ id: expect.stringMatching(/^rpt_/), agent_id: agent.id, reason: 'spam', status: 'open' });

    const again = await server.post(`/agents/${agent.id}/reports`, { reason: 'malware' });
    expect(again.status).toBe(409);
    expect(await json(again)).toMatchObject({ code: 'duplicate_report' });

    const bad = await server.post(`/agents/${agent.id}/reports`, { reason: 'boring' });
    expect(bad.status).toBe(400);
    expect((await json(bad)).errors[0].pointer).toBe('/reason');
    expect((await server.post('/agents/no-such-agent/reports', { reason: 'spam' })).status).toBe(404);
    expect((await server.post(`/agents/${agent.id}/reports`, { reason: 'spam', extra: 1 })).status).toBe(400);
  });

  it('the Reports queue: flags, dismiss, unlist and edit, each with a reason, audited', async () => {
    const [a, b, c] = [
      await createAgent({ name: 'Report Dismiss' }),
      await createAgent({ name: 'Report Unlist' }),
      await createAgent({ name: 'Report Edit' }),
    ];
    const ids: string[] = [];
    for (const agent of [a!, b!, c!]) {
      ids.push((await json(await server.post(`/agents/${agent.id}/reports`, { reason: 'impersonation' }))).id);
    }
    expect((await query('reports.openCounts', { agentIds: [a!.id, b!.id, c!.id] })).data).toEqual({ [a!.id]: 1, [b!.id]: 1, [c!.id]: 1 });
    const open = (await query('reports.list', { status: 'open' })).data;
    expect(open.reports.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining(ids));

    // A reason is required.
    expect((await mutation('reports.resolve', { id: ids[0], resolution: 'dismiss', reason: ' ' })).status).toBe(400);
    expect((await mutation('reports.resolve', { id: ids[0], resolution: 'dismiss', reason: 'Not impersonation' })).data).toMatchObject({
      status: 'dismissed',
      resolution: 'dismiss',
      resolution_reason: 'Not impersonation',
    });
    expect((await mutation('reports.resolve', { id: ids[1], resolution: 'unlist', reason: 'Copies another agent' })).data.status).toBe(
      'resolved',
    );
    expect((await server.api(`/agents/${b!.id}`)).status).toBe(404);
    await mutation('reports.resolve', {
      id: ids[2],
      resolution: 'edit',
      reason: 'Misleading name',
      patch: { name: 'Report Edit (fan-made)' },
    });
    expect((await json(await server.api(`/agents/${c!.id}`))).name).toBe('Report Edit (fan-made)');

    // Decided once.
    expect((await mutation('reports.resolve', { id: ids[0], resolution: 'dismiss', reason: 'again' })).status).toBe(409);
    expect((await query('reports.openCounts', { agentIds: [a!.id, b!.id, c!.id] })).data).toEqual({});
    const audit = (await query('audit.list', { entityId: ids[1] })).data;
    expect(audit.entries[0]).toMatchObject({ action: 'report.unlist' });
  });
});
