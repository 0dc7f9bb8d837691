import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilSeen } from '../helpers/change-seen';
import { agentInput, json, servicesBeside, startTestServer, type TestServer } from '../helpers/test-server';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  const { agents } = server.services;
  await agents.edits.create(agentInput({ name: 'Alpha Coder', type: 'coding' }), { emitEvents: false });
  await agents.edits.create(agentInput({ name: 'Beta Researcher', type: 'research' }), { emitEvents: false });
  await agents.edits.create(agentInput({ name: 'Gamma Coder', type: 'coding' }), { emitEvents: false });
});
afterAll(() => server.close());

describe('GET /agents', () => {
  it('lists with paging, a total and Link headers', async () => {
    const response = await server.api('/agents?limit=2&sort=name');
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toMatchObject({ page: 1, limit: 2, total: 3 });
    expect(body.agents.map((a: { name: string }) => a.name)).toEqual(['Alpha Coder', 'Beta Researcher']);
    expect(response.headers.get('link')).toContain('rel="next"');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('filters by type and sorts descending', async () => {
    const body = await json(await server.api('/agents?type=coding&sort=name&order=desc'));
    expect(body.agents.map((a: { name: string }) => a.name)).toEqual(['Gamma Coder', 'Alpha Coder']);
  });

  it('rejects an unknown sort or type with a problem', async () => {
    for (const query of ['sort=popularity', 'type=robot']) {
      const response = await server.api(`/agents?${query}`);
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect((await json(response)).code).toBe('validation_failed');
    }
  });
});

describe('GET /agents/{id}', () => {
  it('returns the full profile', async () => {
    const [first] = (await json(await server.api('/agents?sort=name'))).agents;
    const profile = await json(await server.api(`/agents/${first.id}`));
    expect(Object.keys(profile).sort()).toEqual(
      [
        'author',
        'capabilities',
        'categories',
        'created_at',
        'description',
        'id',
        'name',
        'owner',
        'rating',
        'source_url',
        'tagline',
        'trust_score',
        'type',
        'updated_at',
        'verified',
        'status',
        'status_message',
      ].sort(),
    );
    expect(profile.rating).toEqual({ average: null, count: 0 });
    expect(profile.owner).toBeNull();
    expect(profile.created_at).toMatch(/Z$/);
  });

  it('404s an unknown id as problem+json', async () => {
    const response = await server.api('/agents/no-such-agent');
    expect(response.status).toBe(404);
    expect((await json(response)).code).toBe('not_found');
  });

  it('serves a fresh profile after writes from this or another process (the profile cache empties)', async () => {
    const created = await server.services.agents.edits.create(agentInput({ name: 'Cached Coder', type: 'coding' }), { emitEvents: false });
    const first = await server.api(`/agents/${created.id}`);
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await json(first)).name).toBe('Cached Coder');
    expect((await json(await server.api(`/agents/${created.id}`))).name).toBe('Cached Coder');

    await server.services.agents.edits.update(created.id, { name: 'Renamed Coder' }, { emitEvents: false });
    expect((await json(await server.api(`/agents/${created.id}`))).name).toBe('Renamed Coder');

    // A second connection and service set on the same file: what `cli` commands open while the server runs.
    const beside = await servicesBeside(server.services.config);
    try {
      const other = beside.services;
      // Seen once the server's change cursor has it (PostgreSQL: when the commit's notification arrives).
      const seen = async () => untilSeen(server.services.agents.latestChangeSeqAsync, await other.agents.latestChangeSeqAsync());
      await other.agents.edits.update(created.id, { tagline: 'Changed elsewhere' }, { emitEvents: false });
      await seen();
      expect((await json(await server.api(`/agents/${created.id}`))).tagline).toBe('Changed elsewhere');
      await other.agents.edits.setListed(created.id, false, { emitEvents: false });
      await seen();
      expect((await server.api(`/agents/${created.id}`)).status).toBe(404);
      await other.agents.edits.setListed(created.id, true, { emitEvents: false });
      await seen();
      expect((await server.api(`/agents/${created.id}`)).status).toBe(200);
    } finally {
      await beside.close();
    }
  });
});
