import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { isCrossSiteRequest, sessionTokenOf } from '../http/account-auth';
import { problem, sendProblem } from '../http/problem';
import { accountActor } from '../modules/accounts/accounts.service';
import type { Services } from '../services';
import { ADMIN_TOKEN_PRINCIPAL, createTrpcContext, type ConsolePrincipal } from '../trpc/init';
import { appRouter, type AppRouter } from '../trpc/root';
import { bearerToken, isAdminToken } from './admin-auth';

export const TRPC_PREFIX = '/trpc';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who calls /trpc, set by its authentication hook. */
    consolePrincipal?: ConsolePrincipal;
  }
}

export interface TrpcHttpOptions {
  services: Services;
  adminToken: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Who is calling: the admin token (automation), or the session cookie of an
 * account with a role (people, signed in with e-mail and password). A sent
 * token that is wrong is refused outright, never read as "try the cookie".
 */
async function authenticate(
  services: Services,
  adminToken: string,
  request: FastifyRequest,
): Promise<ConsolePrincipal | ReturnType<typeof problem>> {
  const token = bearerToken(request.headers.authorization);
  if (token !== undefined) {
    return isAdminToken(token, adminToken)
      ? ADMIN_TOKEN_PRINCIPAL
      : problem(401, 'unauthorized', 'Unauthorized', 'The admin token is not valid');
  }
  const session = sessionTokenOf(request);
  const account = session ? await services.accounts.authenticateSession(session) : undefined;
  if (!account) {
    return problem(
      401,
      'unauthorized',
      'Unauthorized',
      session
        ? 'The session has ended; sign in again'
        : 'Sign in with an account (POST /api/v1/sessions), or send the admin token as "Authorization: Bearer <admin token>"',
    );
  }
  if (account.roles.length === 0) {
    return problem(
      403,
      'console_role_required',
      'Forbidden',
      'This account has no console role; an admin can grant "moderator" or "admin"',
    );
  }
  // The cookie rides along on requests other sites make; only our own pages may change anything with it.
  if (!SAFE_METHODS.has(request.method) && isCrossSiteRequest(request, services.publicUrl.get())) {
    return problem(403, 'cross_site_request', 'Forbidden', 'Requests that change anything must come from the console itself');
  }
  const row = (await services.accounts.find(account.id))!;
  return { actor: accountActor(row), via: 'account', roles: account.roles, account };
}

/**
 * The console's tRPC API over HTTP, for the web build of the console. Opened
 * by the session cookie of an account with a role, or by the admin token; it
 * sends no CORS headers, so no other origin's page can read its answers.
 */
export function trpcHttpPlugin({ services, adminToken }: TrpcHttpOptions): FastifyPluginAsync {
  return async (scope) => {
    // The console's private API is no part of the public OpenAPI document.
    scope.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });

    scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const outcome = await authenticate(services, adminToken, request);
      if ('actor' in outcome) {
        request.consolePrincipal = outcome;
        return;
      }
      if (outcome.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="agent-directory-console"');
      return sendProblem(reply, outcome);
    });

    const trpcOptions: FastifyTRPCPluginOptions<AppRouter>['trpcOptions'] = {
      router: appRouter,
      createContext: ({ req }) =>
        createTrpcContext({
          services,
          principal: req.consolePrincipal ?? null,
          logError: (error, path) => req.log.error({ err: error, path }, 'tRPC procedure failed'),
        }),
    };
    await scope.register(fastifyTRPCPlugin, { prefix: TRPC_PREFIX, trpcOptions });
  };
}
