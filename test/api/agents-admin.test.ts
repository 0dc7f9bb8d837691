import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { trpcClient } from '../helpers/trpc';

/** agents.* and reviews.* over real HTTP with the admin token, checked against the public API and the audit log. */
const ADMIN_TOKEN = 'test-admin-token-agents-0123456789';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(
    { adminToken: ADMIN_TOKEN },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken) },
  );
});
afterAll(() => server.close());

const { query, mutation } = trpcClient(() => server.origin, ADMIN_TOKEN);

const auditOf = async (entityId: string) =>
  (await query('audit.list', { entityId })).data.entries as Array<{ action: string; actor: string }>;

async function createAgent(overrides: Parameters<typeof agentInput>[0] = {}) {
  return await server.services.agents.edits.create(agentInput(overrides), { emitEvents: false });
}

describe('agents.browse', () => {
  it('lists unlisted agents only when asked, with their moderation fields', async () => {
    const shown = await createAgent({ name: 'Browse Shown', author: 'Browse Author' });
    const hidden = await createAgent({ name: 'Browse Hidden', author: 'Browse Author' });
    await server.services.agents.edits.setListed(hidden.id, false);

    const listed = await query('agents.browse', { q: 'browse', limit: 100 });
    expect(listed.status).toBe(200);
    expect(listed.data.agents.map((agent: { id: string }) => agent.id)).toEqual([shown.id]);
    expect(listed.data.agents[0]).toMatchObject({ listed: true, version: 1, name: 'Browse Shown' });

    const all = await query('agents.browse', { q: 'BROWSE', visibility: 'all', sort: 'name', limit: 100 });
    expect(all.data.agents.map((agent: { id: string }) => agent.id)).toEqual([hidden.id, shown.id]);
    expect(all.data.total).toBe(2);

    const unlisted = await query('agents.browse', { visibility: 'unlisted', limit: 100 });
    expect(unlisted.data.agents.map((agent: { id: string; listed: boolean }) => agent.listed)).not.toContain(true);
    expect(unlisted.data.agents.map((agent: { id: string }) => agent.id)).toContain(hidden.id);
  });

  it('pages, filters by type and takes % and _ in the text literally', async () => {
    for (const name of ['Paging 100% One', 'Paging 100% Two', 'Paging 1000 Three']) await createAgent({ name, type: 'research' });
    await createAgent({ name: 'Paging 100% Data', type: 'data' });

    const first = await query('agents.browse', { q: '100%', type: 'research', sort: 'name', order: 'asc', limit: 1 });
    expect(first.data).toMatchObject({ page: 1, limit: 1, total: 2 });
    expect(first.data.agents[0].name).toBe('Paging 100% One');
    const second = await query('agents.browse', { q: '100%', type: 'research', sort: 'name', order: 'asc', limit: 1, page: 2 });
    expect(second.data.agents[0].name).toBe('Paging 100% Two');
    expect((await query('agents.browse', { q: 'g_1' })).data.total).toBe(0);
  });

  it('refuses an unknown visibility', async () => {
    const refused = await query('agents.browse', { visibility: 'secret' });
    expect(refused.status).toBe(400);
    expect(refused.error.data.code).toBe('validation_failed');
  });
});

describe('agents moderation', () => {
  it('edits a profile with expectedVersion and the public API shows it; a stale version is refused', async () => {
    const agent = await createAgent({ name: 'Editable Agent' });
    const edited = await mutation('agents.update', {
      id: agent.id,
      patch: { name: 'Edited Agent', capabilities: ['a', 'b'], categories: ['c'], type: 'data' },
      expectedVersion: 1,
    });
    expect(edited.status).toBe(200);
    expect(edited.data).toMatchObject({ name: 'Edited Agent', version: 2, type: 'data' });
    expect(await json(await server.api(`/agents/${agent.id}`))).toMatchObject({ name: 'Edited Agent', capabilities: ['a', 'b'] });

    const stale = await mutation('agents.update', { id: agent.id, patch: { name: 'Lost edit' }, expectedVersion: 1 });
    expect(stale.status).toBe(409);
    expect(stale.error.data.code).toBe('stale_version');

    const invalid = await mutation('agents.update', { id: agent.id, patch: { source_url: 'ftp://nope' }, expectedVersion: 2 });
    expect(invalid.status).toBe(400);
    expect(invalid.error.data.errors[0].pointer).toBe('/patch/source_url');
  });

  it('verifies and unlists, with audit entries, and the public API follows', async () => {
    const agent = await createAgent({ name: 'Moderated Agent' });
    const verified = await mutation('agents.setVerified', { id: agent.id, verified: true, expectedVersion: 1 });
    expect(verified.data).toMatchObject({ verified: true, version: 2 });
    expect((await json(await server.api(`/agents/${agent.id}`))).verified).toBe(true);

    const unlisted = await mutation('agents.setListed', { id: agent.id, listed: false, expectedVersion: 2 });
    expect(unlisted.data).toMatchObject({ listed: false, version: 3 });
    expect((await server.api(`/agents/${agent.id}`)).status).toBe(404);

    const relisted = await mutation('agents.setListed', { id: agent.id, listed: true, expectedVersion: 3 });
    expect(relisted.data.listed).toBe(true);
    expect((await server.api(`/agents/${agent.id}`)).status).toBe(200);

    expect((await auditOf(agent.id)).map((entry) => entry.action)).toEqual(['agent.list', 'agent.unlist', 'agent.verify']);
  });
});

describe('reviews moderation', () => {
  it("lists an agent's reviews with hidden ones, and hiding one moves the public rating", async () => {
    const agent = await createAgent({ name: 'Reviewed Agent' });
    const good = await server.services.reviews.create(agent.id, { rating: 5, comment: 'Great', reviewer_name: 'Ann' });
    const spam = await server.services.reviews.create(agent.id, { rating: 1, comment: 'BUY NOW', reviewer_name: null });

    const hidden = await mutation('reviews.setHidden', { id: spam.id, hidden: true });
    expect(hidden.status).toBe(200);
    expect(hidden.data).toMatchObject({ id: spam.id, hidden: true, agent_name: 'Reviewed Agent' });

    const publicAgent = await json(await server.api(`/agents/${agent.id}`));
    expect(publicAgent.rating).toEqual({ average: 5, count: 1 });
    const publicReviews = await json(await server.api(`/agents/${agent.id}/reviews`));
    expect(publicReviews.reviews.map((review: { id: string }) => review.id)).toEqual([good.id]);

    const moderated = await query('reviews.listForAgent', { agentId: agent.id });
    expect(moderated.data.total).toBe(2);
    expect(moderated.data.reviews.map((review: { id: string; hidden: boolean }) => [review.id, review.hidden])).toEqual([
      [spam.id, true],
      [good.id, false],
    ]);
    expect((await query('reviews.listRecent', { hidden: true })).data.reviews.map((review: { id: string }) => review.id)).toContain(
      spam.id,
    );

    const shown = await mutation('reviews.setHidden', { id: spam.id, hidden: false });
    expect(shown.data.hidden).toBe(false);
    expect((await json(await server.api(`/agents/${agent.id}`))).rating).toEqual({ average: 3, count: 2 });
    expect((await auditOf(spam.id)).map((entry) => [entry.action, entry.actor])).toEqual([
      ['review.unhide', 'admin-token'],
      ['review.hide', 'admin-token'],
    ]);
  });

  it('answers an unknown agent or review with not_found', async () => {
    expect((await query('reviews.listForAgent', { agentId: 'no-such-agent' })).error.data.code).toBe('not_found');
    expect((await mutation('reviews.setHidden', { id: 'rev_nope', hidden: true })).error.data.code).toBe('not_found');
  });
});
