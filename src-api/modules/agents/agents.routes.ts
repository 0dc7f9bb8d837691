import { z } from 'zod';
import type { ApiRoutes } from '../../http/routes';
import { setPageLinks } from '../../http/pagination';
import { sendJson } from '../../http/send-json';
import { commaListSchema, idParamSchema, problemSchema } from '../../lib/schemas';
import {
  agentChangesQuerySchema,
  agentChangesSchema,
  type AgentChanges,
  agentListSchema,
  type AgentList,
  agentProfileSchema,
  type AgentProfile,
  type BulkAgents,
  bulkAgentsSchema,
  listAgentsQuerySchema,
  MAX_BULK_IDS,
} from './agents.schemas';

const errors = { 400: problemSchema, 404: problemSchema, 429: problemSchema };

export const agentsRoutes: ApiRoutes = async (api, { services }) => {
  api.get(
    '/agents',
    {
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['agents'],
        summary: 'List agents',
        description: 'Pages through listed agents, optionally of one type, sorted by trust score (default), name, rating or date.',
        querystring: listAgentsQuerySchema,
        response: { 200: agentListSchema, ...errors },
      },
    },
    async (request, reply) => {
      const page = await services.agents.listJson(request.query);
      setPageLinks(request, reply, page);
      return sendJson<AgentList>(reply, page.json);
    },
  );

  api.get(
    '/agents/bulk',
    {
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['agents'],
        summary: 'Fetch several agents',
        description: `Up to ${MAX_BULK_IDS} ids, comma-separated (\`ids=a,b\`) or repeated (\`ids=a&ids=b\`). Found agents come in request order; unknown ids are listed in \`missing\`.`,
        querystring: z.object({ ids: commaListSchema(idParamSchema, { pattern: '^[A-Za-z0-9_,\\s-]*$', maxItems: MAX_BULK_IDS }) }),
        response: { 200: bulkAgentsSchema, ...errors },
      },
    },
    async (request, reply) => sendJson<BulkAgents>(reply, await services.agents.bulkJson(request.query.ids)),
  );

  api.get(
    '/agents/changes',
    {
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['agents'],
        summary: 'Follow changes to the directory',
        description:
          'Every agent that changed after the cursor `since`, oldest first, each once in its latest state: `created` and `updated` carry the profile, `removed` (unlisted or deleted) does not. Apply the changes in order and poll again with `next_cursor` (always present); a mirror kept this way holds exactly the listed agents.',
        querystring: agentChangesQuerySchema,
        response: { 200: agentChangesSchema, ...errors },
      },
    },
    async (request, reply) => sendJson<AgentChanges>(reply, await services.agents.changesJson(request.query.since, request.query.limit)),
  );

  api.get(
    '/agents/:id',
    {
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['agents'],
        summary: 'Get one agent',
        params: z.object({ id: idParamSchema }),
        response: { 200: agentProfileSchema, ...errors },
      },
    },
    async (request, reply) => sendJson<AgentProfile>(reply, await services.agents.getJson(request.params.id)),
  );
};
