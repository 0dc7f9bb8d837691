import { z } from 'zod';
import type { ApiRoutes } from '../../http/routes';
import { setPageLinks } from '../../http/pagination';
import { sendJson } from '../../http/send-json';
import { commaListSchema, idParamSchema, problemSchema } from '../../lib/schemas';
import {
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
      const page = services.agents.listJson(request.query);
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
        querystring: z.object({ ids: commaListSchema(idParamSchema) }),
        response: { 200: bulkAgentsSchema, ...errors },
      },
    },
    async (request, reply) => sendJson<BulkAgents>(reply, services.agents.bulkJson(request.query.ids)),
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
    async (request, reply) => sendJson<AgentProfile>(reply, services.agents.getJson(request.params.id)),
  );
};
