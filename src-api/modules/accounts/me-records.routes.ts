import { z } from 'zod';
import { setPageLinks } from '../../http/pagination';
import { ACCOUNT_SECURITY, accountOf, requireAccount } from '../../http/account-auth';
import type { ApiRoutes } from '../../http/routes';
import { pageQuerySchema, problemSchema } from '../../lib/schemas';
import { agentProfileSchema } from '../agents/agents.schemas';
import { newClaimSchema } from '../claims/claims.schemas';
import { submissionSchema } from '../submissions/submissions.schemas';

const pageFields = { page: z.number().int(), limit: z.number().int(), total: z.number().int() };
const problems = { 400: problemSchema, 401: problemSchema, 403: problemSchema, 429: problemSchema };

/** What the account owns or has filed elsewhere in the directory, paged like every list. */
export const meRecordsRoutes: ApiRoutes = async (api, { services }) => {
  const preHandler = requireAccount(services);
  const common = { tags: ['me'], security: ACCOUNT_SECURITY, querystring: pageQuerySchema };

  api.get(
    '/me/agents',
    {
      preHandler,
      config: { rateLimit: 'reads' },
      schema: {
        ...common,
        summary: 'Agents the account owns',
        description: 'Agents whose claim, made with this account, was verified; newest first.',
        response: { 200: z.object({ agents: z.array(agentProfileSchema), ...pageFields }), ...problems },
      },
    },
    async (request, reply) => {
      const page = await services.accountRecords.agents(accountOf(request).id, request.query);
      setPageLinks(request, reply, page);
      return { agents: page.items, page: page.page, limit: page.limit, total: page.total };
    },
  );

  api.get(
    '/me/claims',
    {
      preHandler,
      config: { rateLimit: 'reads' },
      schema: {
        ...common,
        summary: "The account's claims",
        description: 'Claims made with this account, newest first, with their proof instructions.',
        response: { 200: z.object({ claims: z.array(newClaimSchema), ...pageFields }), ...problems },
      },
    },
    async (request, reply) => {
      const page = await services.accountRecords.claims(accountOf(request).id, request.query);
      setPageLinks(request, reply, page);
      return { claims: page.items, page: page.page, limit: page.limit, total: page.total };
    },
  );

  api.get(
    '/me/submissions',
    {
      preHandler,
      config: { rateLimit: 'reads' },
      schema: {
        ...common,
        summary: "The account's submissions",
        description: 'Agents submitted with this account, newest first, with their review status.',
        response: { 200: z.object({ submissions: z.array(submissionSchema), ...pageFields }), ...problems },
      },
    },
    async (request, reply) => {
      const page = await services.accountRecords.submissions(accountOf(request).id, request.query);
      setPageLinks(request, reply, page);
      return { submissions: page.items, page: page.page, limit: page.limit, total: page.total };
    },
  );
};
