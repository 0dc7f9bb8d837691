import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { agentListSchema, agentProfileSchema, bulkAgentsSchema } from '../../src-api/modules/agents/agents.schemas';
import { connectionsResultSchema, searchResultSchema } from '../../src-api/modules/search/search.schemas';
import { untilSeen } from '../helpers/change-seen';
import { agentInput, json, servicesBeside, startTestServer, type TestServer } from '../helpers/test-server';

/**
 * Profiles, bulk, search and connections are written as JSON text from the
 * profile cache instead of by the routes' zod serializers. What goes out must
 * be byte for byte what those serializers would write, and as fresh.
 */
let server: TestServer;
let ids: string[];

beforeAll(async () => {
  server = await startTestServer({ demoData: true });
  // agents.id sorts in byte order on both stores (COLLATE "C" on PostgreSQL).
  ids = (await server.services.store.all<{ id: string }>(sql`SELECT id FROM agents WHERE listed ORDER BY id`)).map((row) => row.id);
});
afterAll(() => server.close());

/** The body as text, and what the schema's serializer (parse, then stringify) writes for the same value. */
async function textAndSchemaText(response: Response, schema: z.ZodType): Promise<[string, string]> {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const text = await response.text();
  return [text, JSON.stringify(schema.parse(JSON.parse(text)))];
}

describe('JSON written from the profile cache', () => {
  it('is what the schemas serialize, for every listed agent of the demo directory', async () => {
    expect(ids.length).toBeGreaterThan(300);
    for (const id of ids) {
      const [text, expected] = await textAndSchemaText(await server.api(`/agents/${encodeURIComponent(id)}`), agentProfileSchema);
      expect(text).toBe(expected);
    }
  });

  it("is what the schemas serialize for list pages of every sort, and equals the console's object pages", async () => {
    for (const sort of ['trust_score', 'name', 'rating', 'created_at', 'updated_at'] as const) {
      for (const query of [`sort=${sort}&limit=100&page=2`, `sort=${sort}&order=asc&type=coding&limit=7`]) {
        const [text, expected] = await textAndSchemaText(await server.api(`/agents?${query}`), agentListSchema);
        expect(text).toBe(expected);
        const params = Object.fromEntries(new URLSearchParams(query));
        const page = await server.services.agents.list({
          sort,
          page: Number(params.page ?? 1),
          limit: Number(params.limit),
          order: params.order as 'asc' | undefined,
          type: params.type as 'coding' | undefined,
        });
        expect(JSON.parse(text)).toEqual({ agents: page.items, page: page.page, limit: page.limit, total: page.total });
        expect(page.items.length).toBeGreaterThan(0);
      }
    }
  });

  it('is what the schemas serialize for bulk, search and connections, and equals the object results', async () => {
    const some = ids.filter((_, i) => i % 9 === 0).slice(0, 40);
    const [bulk, bulkExpected] = await textAndSchemaText(
      await server.api(`/agents/bulk?ids=${[...some, 'nope'].join(',')}`),
      bulkAgentsSchema,
    );
    expect(bulk).toBe(bulkExpected);
    expect(JSON.parse(bulk).agents.map((agent: { id: string }) => agent.id)).toEqual(some);

    for (const query of ['code', 'data pipeline', 'securty', 'a', '']) {
      const params = new URLSearchParams({ q: query, limit: '50' });
      const [text, expected] = await textAndSchemaText(await server.api(`/agents/search?${params}`), searchResultSchema);
      expect(text).toBe(expected);
      expect(JSON.parse(text)).toEqual(await server.services.search.search({ query, limit: 50 }));
      const posted = await server.post('/agents/search', { query, limit: 50, min_trust: 40 });
      const [postedText, postedExpected] = await textAndSchemaText(posted, searchResultSchema);
      expect(postedText).toBe(postedExpected);
    }

    for (const id of some.slice(0, 10)) {
      const [text, expected] = await textAndSchemaText(await server.api(`/agents/${id}/connections?limit=20`), connectionsResultSchema);
      expect(text).toBe(expected);
      expect(JSON.parse(text)).toEqual(await server.services.search.connections(id, 20));
    }
  });

  it('follows writes by another process in bulk, search and connections', async () => {
    const created = await server.services.agents.edits.create(
      agentInput({ name: 'Quorvex Cache Probe', author: 'Probe Works', categories: ['probe-cat'], capabilities: ['probe-cap'] }),
      { emitEvents: false },
    );
    const partner = await server.services.agents.edits.create(
      agentInput({ name: 'Partner Probe', author: 'Probe Works', categories: ['probe-cat'], capabilities: ['probe-cap'] }),
      { emitEvents: false },
    );
    const read = async () => ({
      bulk: await json(await server.api(`/agents/bulk?ids=${created.id}`)),
      search: await json(await server.api('/agents/search?q=quorvex')),
      connections: await json(await server.api(`/agents/${partner.id}/connections`)),
    });
    let seen = await read();
    expect(seen.bulk.agents[0].tagline).toBe(created.tagline);
    expect(seen.search.agents[0].id).toBe(created.id);
    expect(seen.connections.connections[0].agent.id).toBe(created.id);

    const beside = await servicesBeside(server.services.config);
    try {
      const other = beside.services;
      // Read once the server's change cursor has the write (PostgreSQL: when the commit's notification arrives).
      const reached = async () => untilSeen(server.services.agents.latestChangeSeqAsync, await other.agents.latestChangeSeqAsync());
      await other.agents.edits.update(created.id, { tagline: 'Changed by the CLI' }, { emitEvents: false });
      await reached();
      seen = await read();
      expect(seen.bulk.agents[0].tagline).toBe('Changed by the CLI');
      expect(seen.search.agents[0].tagline).toBe('Changed by the CLI');
      expect(seen.connections.connections[0].agent.tagline).toBe('Changed by the CLI');

      await other.agents.edits.setListed(created.id, false, { emitEvents: false });
      await reached();
      seen = await read();
      expect(seen.bulk).toEqual({ agents: [], missing: [created.id] });
      expect(seen.search.agents).toEqual([]);
      expect(seen.connections.connections.map((connection: { agent: { id: string } }) => connection.agent.id)).not.toContain(created.id);
    } finally {
      await beside.close();
    }
  });
});
