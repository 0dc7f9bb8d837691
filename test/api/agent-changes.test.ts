import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';

/** GET /agents/changes (contract §9): an opaque cursor, oldest first, removals included. */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

interface Change {
  agent_id: string;
  change: 'created' | 'updated' | 'removed';
  agent?: { id: string; name: string };
  cursor: string;
}

async function changes(query = ''): Promise<{ changes: Change[]; next_cursor: string }> {
  const response = await server.api(`/agents/changes${query}`);
  expect(response.status).toBe(200);
  return json(response);
}

describe('GET /agents/changes', () => {
  it('starts at the beginning, has a next_cursor when empty, and follows creates, edits and unlistings', async () => {
    const empty = await changes();
    expect(empty.changes).toEqual([]);
    expect(typeof empty.next_cursor).toBe('string');
    // Polling again from an empty feed's cursor stays empty and keeps the cursor.
    expect(await changes(`?since=${empty.next_cursor}`)).toEqual(empty);

    const { agents } = server.services;
    const a = await agents.edits.create(agentInput({ name: 'Feed Alpha' }), { emitEvents: false });
    const b = await agents.edits.create(agentInput({ name: 'Feed Beta' }), { emitEvents: false });
    const first = await changes(`?since=${empty.next_cursor}`);
    expect(first.changes.map((c) => [c.agent_id, c.change])).toEqual([
      [a.id, 'created'],
      [b.id, 'created'],
    ]);
    expect(first.changes[0]!.agent).toMatchObject({ id: a.id, name: 'Feed Alpha' });
    expect(first.next_cursor).toBe(first.changes[1]!.cursor);
    // The whole feed from the start says the same.
    expect((await changes()).changes).toEqual(first.changes);

    await agents.edits.update(a.id, { name: 'Feed Alpha 2' });
    await agents.edits.setListed(b.id, false);
    const second = await changes(`?since=${first.next_cursor}`);
    expect(second.changes.map((c) => [c.agent_id, c.change])).toEqual([
      [a.id, 'updated'],
      [b.id, 'removed'],
    ]);
    expect(second.changes[0]!.agent?.name).toBe('Feed Alpha 2');
    expect(second.changes[1]).not.toHaveProperty('agent');

    // Each agent once, in its latest state, oldest change first.
    await agents.edits.setListed(b.id, true);
    await agents.edits.update(a.id, { name: 'Feed Alpha 3' });
    const third = await changes(`?since=${first.next_cursor}`);
    expect(third.changes.map((c) => [c.agent_id, c.change, c.agent?.name])).toEqual([
      [b.id, 'updated', 'Feed Beta'],
      [a.id, 'updated', 'Feed Alpha 3'],
    ]);
  });

  it('pages with limit, each cursor continuing after its change', async () => {
    const all = await changes('?limit=1000');
    expect(all.changes.length).toBeGreaterThanOrEqual(2);
    const one = await changes('?limit=1');
    expect(one.changes).toEqual(all.changes.slice(0, 1));
    const next = await changes(`?limit=1&since=${one.next_cursor}`);
    expect(next.changes).toEqual(all.changes.slice(1, 2));
    const end = await changes(`?since=${all.next_cursor}`);
    expect(end).toEqual({ changes: [], next_cursor: all.next_cursor });
  });

  it('refuses a cursor it did not give out (also one past every change) and a bad limit with a 4xx problem', async () => {
    for (const since of [
      'nope',
      Buffer.from('v1.999999').toString('base64url'),
      Buffer.from('v1.01').toString('base64url'),
      '%00',
      'x'.repeat(200),
    ]) {
      const response = await server.api(`/agents/changes?since=${encodeURIComponent(since)}`);
      expect(response.status, since).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(['invalid_cursor', 'validation_failed']).toContain((await json(response)).code);
    }
    const bad = await server.api(`/agents/changes?since=nope`);
    expect(await json(bad)).toMatchObject({ code: 'invalid_cursor', errors: [{ pointer: '/since' }] });
    for (const limit of ['0', '1001', 'ten', '1.5']) {
      const response = await server.api(`/agents/changes?limit=${limit}`);
      expect(response.status, limit).toBe(400);
      expect((await json(response)).code).toBe('validation_failed');
    }
  });
});
