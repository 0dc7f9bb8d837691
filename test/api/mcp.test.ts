import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';

/** The MCP server at /mcp (contract §9), through the SDK's own client over Streamable HTTP against a live server. */
let server: TestServer;
let client: Client;
const ids: Record<string, string> = {};

async function connect(target: TestServer): Promise<Client> {
  const mcp = new Client({ name: 'agent-directory-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${target.origin}/mcp`)));
  return mcp;
}

const textOf = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

beforeAll(async () => {
  server = await startTestServer();
  const { agents } = server.services;
  const create = async (name: string, extra: Parameters<typeof agentInput>[0]) => {
    ids[name] = (await agents.edits.create(agentInput({ name, ...extra }), { emitEvents: false })).id;
  };
  await create('Pull Request Reviewer', {
    capabilities: ['code-review', 'github'],
    categories: ['quality'],
    author: 'Acme',
    type: 'coding',
  });
  await create('Diff Critic', { capabilities: ['code-review'], categories: ['quality'], author: 'Other', type: 'coding' });
  await create('Paper Summariser', { capabilities: ['summarization'], categories: ['science'], author: 'Labs', type: 'research' });
  await server.services.search.refresh();
  client = await connect(server);
});
afterAll(async () => {
  await client?.close();
  await server.close();
});

describe('MCP at /mcp', () => {
  it('lists the three read-only tools with input schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['get_agent', 'related_agents', 'search_agents']);
    const search = tools.find((tool) => tool.name === 'search_agents')!;
    expect(search.inputSchema.required).toEqual(['query']);
    expect(Object.keys(search.inputSchema.properties ?? {}).sort()).toEqual(['capabilities', 'limit', 'min_trust', 'query', 'type']);
    expect(tools.find((tool) => tool.name === 'get_agent')!.inputSchema.required).toEqual(['id']);
    expect(tools.find((tool) => tool.name === 'related_agents')!.inputSchema.required).toEqual(['id']);
    for (const tool of tools) {
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);
      expect(tool.outputSchema, tool.name).toBeDefined();
    }
  });

  it('search_agents answers with text and the same hits as REST search', async () => {
    const result = (await client.callTool({ name: 'search_agents', arguments: { query: 'code reviwer', limit: 5 } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { agents: { id: string }[]; total: number };
    const rest = await json(await server.api('/agents/search?q=code+reviwer&limit=5'));
    expect(structured).toEqual(rest);
    expect(structured.agents[0]!.id).toBe(ids['Pull Request Reviewer']);
    expect(textOf(result)).toContain('Pull Request Reviewer');

    const filtered = (await client.callTool({
      name: 'search_agents',
      arguments: { query: '', type: 'research', min_trust: 0, capabilities: ['summarization'] },
    })) as CallToolResult;
    expect((filtered.structuredContent as { agents: { id: string }[] }).agents.map((agent) => agent.id)).toEqual([ids['Paper Summariser']]);
  });

  it('get_agent returns the REST profile; an unknown id is a tool error', async () => {
    const id = ids['Paper Summariser']!;
    const result = (await client.callTool({ name: 'get_agent', arguments: { id } })) as CallToolResult;
    expect(result.structuredContent).toEqual(await json(await server.api(`/agents/${id}`)));
    expect(textOf(result)).toContain('Paper Summariser');

    const missing = (await client.callTool({ name: 'get_agent', arguments: { id: 'no-such-agent' } })) as CallToolResult;
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('no-such-agent');
  });

  it('related_agents returns the REST connections', async () => {
    const id = ids['Pull Request Reviewer']!;
    const result = (await client.callTool({ name: 'related_agents', arguments: { id, limit: 5 } })) as CallToolResult;
    expect(result.structuredContent).toEqual(await json(await server.api(`/agents/${id}/connections?limit=5`)));
    expect(textOf(result)).toContain('Diff Critic');
  });

  it('rejects arguments outside the input schema', async () => {
    const result = (await client.callTool({ name: 'search_agents', arguments: { query: 'x', limit: 1000 } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/limit/);
  });

  it('spends the same read budget as REST', async () => {
    const limited = await startTestServer({ rateLimit: { enabled: true, anonymousReads: 6 } });
    try {
      // initialize + initialized = 2 reads, 3 REST reads, 1 tool call: the budget is spent.
      const mcp = await connect(limited);
      for (let i = 0; i < 3; i++) expect((await limited.api('/agents')).status).toBe(200);
      await mcp.callTool({ name: 'search_agents', arguments: { query: 'a' } });
      await expect(mcp.callTool({ name: 'search_agents', arguments: { query: 'a' } })).rejects.toThrow(/429/);
      expect((await limited.api('/agents')).status).toBe(429);
      await mcp.close();
    } finally {
      await limited.close();
    }
  });
});
