import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import type { FastifyPluginAsync } from 'fastify';
import { problem, sendProblem } from '../http/problem';
import type { Services } from '../services';
import { createTrpcContext } from '../trpc/init';
import { appRouter, type AppRouter } from '../trpc/root';
import { bearerToken, isAdminToken } from './admin-auth';

export const TRPC_PREFIX = '/trpc';

export interface TrpcHttpOptions {
  services: Services;
  adminToken: string;
}

/**
 * The console's tRPC API over HTTP, for the web build of the console. Only
 * the admin token opens it; it sends no CORS headers, so no other origin's
 * page can read its answers.
 */
export function trpcHttpPlugin({ services, adminToken }: TrpcHttpOptions): FastifyPluginAsync {
  return async (scope) => {
    // The console's private API is no part of the public OpenAPI document.
    scope.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });

    scope.addHook('onRequest', async (request, reply) => {
      const token = bearerToken(request.headers.authorization);
      if (isAdminToken(token, adminToken)) return;
      reply.header('WWW-Authenticate', 'Bearer realm="agent-directory-console"');
      return sendProblem(
        reply,
        token === undefined
          ? problem(401, 'unauthorized', 'Unauthorized', 'Send the admin token as "Authorization: Bearer <admin token>"')
          : problem(401, 'unauthorized', 'Unauthorized', 'The admin token is not valid'),
      );
    });

    const trpcOptions: FastifyTRPCPluginOptions<AppRouter>['trpcOptions'] = {
      router: appRouter,
      createContext: ({ req }) =>
        createTrpcContext({
          services,
          actor: 'admin',
          logError: (error, path) => req.log.error({ err: error, path }, 'tRPC procedure failed'),
        }),
    };
    await scope.register(fastifyTRPCPlugin, { prefix: TRPC_PREFIX, trpcOptions });
  };
}
