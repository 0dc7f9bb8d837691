import { z } from 'zod';
import { ACCOUNT_SECURITY, accountOf, requireAccount } from '../../http/account-auth';
import type { ApiRoutes } from '../../http/routes';
import { problemSchema } from '../../lib/schemas';
import { accountSchema, updateAccountInputSchema } from './accounts.schemas';
import { SESSION_COOKIE } from './sessions';
import { cookieOptions } from './accounts.routes';

const authProblems = { 401: problemSchema, 403: problemSchema, 429: problemSchema };

/** The signed-in account itself. Cookie or the account's own key; no CORS. */
export const meRoutes: ApiRoutes = async (api, { services }) => {
  const preHandler = requireAccount(services);

  api.get(
    '/me',
    {
      preHandler,
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['me'],
        summary: 'The signed-in account',
        security: ACCOUNT_SECURITY,
        response: { 200: accountSchema, ...authProblems },
      },
    },
    async (request) => accountOf(request),
  );

  api.patch(
    '/me',
    {
      preHandler,
      schema: {
        tags: ['me'],
        summary: 'Rename the account',
        security: ACCOUNT_SECURITY,
        body: updateAccountInputSchema,
        response: { 200: accountSchema, 400: problemSchema, 413: problemSchema, 415: problemSchema, ...authProblems },
      },
    },
    async (request) => services.accounts.rename(accountOf(request).id, request.body.name),
  );

  api.delete(
    '/me',
    {
      preHandler,
      schema: {
        tags: ['me'],
        summary: 'Close the account',
        description:
          'Revokes its API keys, removes its webhook endpoints and ends its sessions; agents it owns stay listed without an owner.',
        security: ACCOUNT_SECURITY,
        response: { 204: z.null().describe('Closed'), ...authProblems },
      },
    },
    async (request, reply) => {
      await services.accounts.close(accountOf(request).id);
      reply.clearCookie(SESSION_COOKIE, cookieOptions(services));
      return reply.code(204).send(null);
    },
  );
};
