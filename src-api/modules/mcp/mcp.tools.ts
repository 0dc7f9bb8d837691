import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isAppError } from '../../errors';
import { idParamSchema } from '../../lib/schemas';
import { API_VERSION } from '../../version';
import { agentProfileSchema, agentTypeSchema, type AgentProfile } from '../agents/agents.schemas';
import type { AgentsService } from '../agents/agents.service';
import {
  connectionsResultSchema,
  MAX_CAPABILITY_FILTERS,
  MAX_CONNECTIONS_LIMIT,
  MAX_QUERY_LENGTH,
  MAX_SEARCH_LIMIT,
  searchResultSchema,
  type ConnectionsResult,
  type SearchResult,
} from '../search/search.schemas';
import type { SearchService } from '../search/search.service';

/**
 * The directory as MCP tools (contract §9): read-only views of the same
 * service methods the REST routes call, each answering with readable text
 * (for the model) and the REST body as `structuredContent` (for programs).
 */

export const MCP_TOOL_NAMES = ['search_agents', 'get_agent', 'related_agents'] as const;

const searchInput = {
  query: z.string().max(MAX_QUERY_LENGTH).describe('What the agent should do, in a few words (e.g. "review pull requests")'),
  limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).optional().describe(`Hits to return, 1–${MAX_SEARCH_LIMIT} (default 10)`),
  type: agentTypeSchema.optional().describe('Only agents of this type'),
  min_trust: z.number().min(0).max(100).optional().describe('Only agents with trust_score ≥ this (0–100)'),
  capabilities: z
    .array(z.string().trim().min(1).max(60))
    .max(MAX_CAPABILITY_FILTERS)
    .optional()
    .describe('Capabilities the agent must all have (case-insensitive exact match)'),
};

const getInput = { id: idParamSchema.describe('Agent id, as search_agents returns it') };

const relatedInput = {
  id: idParamSchema.describe('Agent id'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_CONNECTIONS_LIMIT)
    .optional()
    .describe(`Related agents to return, 1–${MAX_CONNECTIONS_LIMIT} (default 10)`),
};

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

function describeAgent(agent: AgentProfile, index?: number): string {
  const rating = agent.rating.count > 0 ? `, rated ${agent.rating.average}/5 by ${agent.rating.count}` : '';
  const head = `${index === undefined ? '' : `${index + 1}. `}${agent.name} (id ${agent.id}): ${agent.tagline}`;
  const facts = `   type ${agent.type}, trust ${agent.trust_score}${agent.verified ? ', verified' : ''}${rating}; by ${agent.author || 'unknown'}`;
  const capabilities = agent.capabilities.length > 0 ? `\n   capabilities: ${agent.capabilities.join(', ')}` : '';
  return `${head}\n${facts}${capabilities}\n   ${agent.source_url}`;
}

function searchText(result: SearchResult): string {
  if (result.agents.length === 0) return `No listed agent matches "${result.query}".`;
  const shown = result.agents.length < result.total ? ` (the best ${result.agents.length})` : '';
  return [`${result.total} agents match "${result.query}"${shown}:`, ...result.agents.map((agent, i) => describeAgent(agent, i))].join(
    '\n',
  );
}

function relatedText(result: ConnectionsResult): string {
  if (result.connections.length === 0) return `No listed agent is related to ${result.agent_id}.`;
  return [
    `Agents related to ${result.agent_id}, best first:`,
    ...result.connections.map((connection, i) => {
      const why = [
        connection.same_author ? 'same author' : '',
        connection.shared_categories.length ? `categories ${connection.shared_categories.join(', ')}` : '',
        connection.shared_capabilities.length ? `capabilities ${connection.shared_capabilities.join(', ')}` : '',
      ].filter(Boolean);
      return `${describeAgent(connection.agent, i)}\n   shares: ${why.join('; ')}`;
    }),
  ].join('\n');
}

/** A service error (unknown id, bad filter) as a tool error the model can read, never a protocol failure. */
function toolError(error: unknown): CallToolResult {
  if (!isAppError(error) || error.status >= 500) throw error;
  return { isError: true, content: [{ type: 'text', text: error.detail }] };
}

function answer<T extends Record<string, unknown>>(structured: T, text: string): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/** A fresh MCP server over the services (one per request: the transport is stateless). */
export function createDirectoryMcpServer({ agents, search }: { agents: AgentsService; search: SearchService }): McpServer {
  const server = new McpServer(
    { name: 'agent-directory', title: 'Agent Directory', version: API_VERSION },
    { instructions: 'Find software agents: search_agents by task, then get_agent for a profile or related_agents for alternatives.' },
  );

  server.registerTool(
    'search_agents',
    {
      title: 'Search agents',
      description:
        'Typo-tolerant full-text search over the listed agents (name, capabilities, tagline, description, author), best first, with optional filters.',
      inputSchema: searchInput,
      outputSchema: searchResultSchema,
      annotations: READ_ONLY,
    },
    async (input) => {
      try {
        const result = await search.search({ ...input, limit: input.limit ?? 10 });
        return answer(result, searchText(result));
      } catch (error) {
        return toolError(error);
      }
    },
  );

  server.registerTool(
    'get_agent',
    {
      title: 'Get an agent',
      description: 'The full public profile of one listed agent by id.',
      inputSchema: getInput,
      // The shape without the schema's id: a root that is only a $ref to "Agent" is not an object schema to MCP clients.
      outputSchema: z.object(agentProfileSchema.shape),
      annotations: READ_ONLY,
    },
    async ({ id }) => {
      try {
        const agent = await agents.get(id);
        const description = agent.description ? `\n\n${agent.description}` : '';
        return answer(agent, `${describeAgent(agent)}${description}`);
      } catch (error) {
        return toolError(error);
      }
    },
  );

  server.registerTool(
    'related_agents',
    {
      title: 'Related agents',
      description: 'Listed agents related to one agent (shared categories, capabilities or author), best first; never the agent itself.',
      inputSchema: relatedInput,
      outputSchema: connectionsResultSchema,
      annotations: READ_ONLY,
    },
    async ({ id, limit }) => {
      try {
        const result = await search.connections(id, limit ?? 10);
        return answer(result, relatedText(result));
      } catch (error) {
        return toolError(error);
      }
    },
  );

  return server;
}
