import fastifyCookie from '@fastify/cookie';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type FastifyPluginAsyncZod,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Config } from '../config';
import { AppError, InvalidApiKeyError, RateLimitedError } from '../errors';
import { createMetrics } from '../modules/metrics/metrics.registry';
import { mcpRoutes } from '../modules/mcp/mcp.routes';
import { installMetrics } from '../modules/metrics/metrics.routes';
import type { Services } from '../services';
import { API_VERSION } from '../version';
import { logIfServerError, problem, sendProblem, toProblem, type Problem } from './problem';
import { clientBucket, rateLimitHeaders, type RateLimitDecision, type RateLimitPolicy } from './rate-limit';
import { createOpenApiRouteInfo, polishOpenApiDocument } from './openapi';
import { apiRoutes } from './routes';
import {
  applyCorsHeaders,
  clientErrorHandler,
  createMethodIndex,
  createRequestHeadersHook,
  installAnswerBatching,
  installMethodHandling,
  transportServerOptions,
  trustProxyOption,
} from './transport';
import { installExpectContinue } from './unread-body';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The budget this route spends; routes without one are not limited. */
    rateLimit?: RateLimitPolicy;
    /** Answers leave with the rest of their event-loop turn's (`installAnswerBatching`): for routes whose answers are slow to make. */
    batchAnswers?: boolean;
  }
  interface FastifyInstance {
    /** Every route under /api/v1 as registered: what the OpenAPI document must describe. */
    apiRouteTable: ApiRouteEntry[];
  }
  interface FastifyRequest {
    /** Id of the API key the request authenticated with, if any. */
    apiKeyId?: string;
  }
}

export const API_PREFIX = '/api/v1';

export interface ApiRouteEntry {
  method: string;
  url: string;
  /** Hidden from the OpenAPI document (the document itself, the docs page). */
  hidden: boolean;
}
export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface BuildAppOptions {
  services: Services;
  config: Config;
  /** Extra plugins mounted at the root after the API (the console's /trpc and static files). */
  extensions?: FastifyPluginAsyncZod[];
  logger?: FastifyServerOptions['logger'];
  /** Opens GET /metrics to any client that sends it (see config.metrics). */
  adminToken?: string;
}

/** The public REST API as a Fastify instance; `serve`, Electron and tests all start it through here. */
export async function buildApp({ services, config, extensions = [], logger, adminToken }: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: logger ?? (config.logRequests ? { level: 'info' } : false),
    bodyLimit: BODY_LIMIT_BYTES,
    // A number trusts that many right-most X-Forwarded-For hops, a list trusts hops from those addresses.
    trustProxy: trustProxyOption(config.trustProxy),
    ...transportServerOptions(config.transport),
    clientErrorHandler,
    // Ids can be long and odd; let the schema judge them rather than the router.
    routerOptions: { maxParamLength: 500, ignoreTrailingSlash: true },
    // Errors raised before routing (bad URL encoding, over-long ids) get problem details too; hooks do not run for them.
    frameworkErrors: (error, request, reply) => {
      applyCorsHeaders(request, reply, API_PREFIX);
      void sendProblem(reply, toProblem(error));
    },
  }).withTypeProvider<ZodTypeProvider>();

  // Session cookies of accounts (REST /me and the console's /trpc): set through the reply, read by
  // sessionTokenOf on the routes that take a session; no parsing hook on every request.
  await app.register(fastifyCookie, { hook: false });
  // Before any route is added: the method index behind 405s is fed by onRoute.
  const methodIndex = createMethodIndex();
  installMethodHandling(app, methodIndex);
  installExpectContinue(app, BODY_LIMIT_BYTES);
  const openApiRoutes = createOpenApiRouteInfo();
  app.addHook('onRoute', (route) => openApiRoutes.add(route));
  // Before any route, so that its onResponse hook counts them all.
  installMetrics(app, { metrics: createMetrics({ services }), config, adminToken });
  // nosniff and CORS first, so every later answer (400 Host, 401, 429, 404, 405) carries them; then the Host check.
  app.addHook('onRequest', createRequestHeadersHook(API_PREFIX, methodIndex));
  // Before any route is added: it is fed by onRoute.
  if (config.transport.batchAnswers) installAnswerBatching(app);

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // Only JSON is accepted; anything else is a 415. An empty body is "no body",
  // so a POST with a JSON content type and nothing in it still reaches the schema.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new AppError(400, 'malformed_json', 'Malformed JSON', 'The request body is not valid JSON'), undefined);
    }
  });

  app.setErrorHandler((error, request, reply) => {
    let body: Problem;
    try {
      body = toProblem(error);
    } catch (mappingError) {
      // The mapper must never turn a 4xx into Fastify's own non-problem 500.
      request.log.error({ err: mappingError }, 'error mapping failed');
      body = problem(500, 'internal_error', 'Internal error', 'Something went wrong on our side; it has been logged');
    }
    logIfServerError(request, error, body);
    // Limits enforced by services (sign-in attempts) say when to retry, like the rate limiter does.
    const retryAfter = error instanceof AppError ? error.extra.retryAfterSeconds : undefined;
    if (retryAfter !== undefined && !reply.hasHeader('Retry-After')) reply.header('Retry-After', String(retryAfter));
    return sendProblem(reply, body);
  });

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Agent Directory API',
        version: API_VERSION,
        description:
          'A public directory of software agents. Read endpoints need no key; errors are RFC 9457 problem details. ' +
          'Limits: 100 reads/min per IP (1,000 per API key), 20 writes/min per IP.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearerKey: { type: 'http', scheme: 'bearer', description: 'An API key (adk_…) as a bearer token' },
          headerKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          sessionCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'agentdir_session',
            description: 'The session cookie set by POST /sessions',
          },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: (input) =>
      polishOpenApiDocument(jsonSchemaTransformObject(input) as Record<string, unknown>, openApiRoutes) as ReturnType<
        typeof jsonSchemaTransformObject
      >,
  });

  const apiRouteTable: ApiRouteEntry[] = [];
  app.decorate('apiRouteTable', apiRouteTable);

  // One limiter for every limited scope (/api/v1 and /mcp), so that a client has one budget of reads
  // (in memory, or in Redis with --redis-url: see services.ts).
  const limiter = services.rateLimits;
  const enforce = (reply: FastifyReply, decision: RateLimitDecision): void => {
    reply.headers(rateLimitHeaders(decision));
    if (!decision.allowed) {
      reply.header('Retry-After', String(decision.resetSeconds));
      throw new RateLimitedError(decision.resetSeconds, decision.name);
    }
  };
  /** API-key authentication, the route's rate limit and per-key usage, for every route of `scope`. */
  const installClientLimits = (scope: FastifyInstance): void => {
    // A request with a key: authentication first (a bad key is a 401, never anonymous), then the rate limit.
    const authenticateAndLimit = async (request: FastifyRequest, reply: FastifyReply, key: string): Promise<void> => {
      let keyId: string;
      try {
        keyId = request.apiKeyId = await services.keys.authenticate(key);
      } catch (error) {
        // Guessing keys costs the guesser's IP its read budget: counted before the 401.
        if (error instanceof InvalidApiKeyError && config.rateLimit.enabled)
          enforce(reply, await limiter.hit('reads', clientBucket(request.ip), false));
        throw error;
      }
      const policy = request.routeOptions.config.rateLimit;
      if (!policy || !config.rateLimit.enabled) return;
      // Reads count against the key's own budget; the other policies against the client's address, key or not.
      const keyed = policy === 'reads';
      enforce(reply, await limiter.hit(policy, keyed ? keyId : clientBucket(request.ip), keyed));
    };
    // A callback hook that returns at once when there is nothing to do (no key; limits off or none on the route):
    // no client bucket and no promise for such requests. Without a key, a limiter that decides at once (in
    // memory) is asked without a promise too: that is every anonymous read.
    scope.addHook('onRequest', (request, reply, done) => {
      const key = apiKeyOf(request.headers);
      if (key !== undefined) return void authenticateAndLimit(request, reply, key).then(() => done(), done);
      const policy = config.rateLimit.enabled ? request.routeOptions.config.rateLimit : undefined;
      if (!policy) return done();
      const decision = limiter.hit(policy, clientBucket(request.ip), false);
      if (decision instanceof Promise) return void decision.then((decided) => enforce(reply, decided)).then(() => done(), done);
      try {
        enforce(reply, decision);
      } catch (error) {
        return done(error as Error);
      }
      done();
    });

    // Usage per key and day, for the account dashboard's chart (counted in memory, written in batches).
    scope.addHook('onResponse', (request, reply, done) => {
      if (request.apiKeyId !== undefined) services.keyUsage.record(request.apiKeyId, reply.statusCode === 429);
      done();
    });
  };

  await app.register(
    async (api) => {
      api.addHook('onRoute', (route) => {
        for (const method of [route.method].flat()) {
          apiRouteTable.push({ method, url: route.url, hidden: Boolean((route.schema as { hide?: boolean } | undefined)?.hide) });
        }
      });

      installClientLimits(api);

      api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
      // indexPrefix: the page's assets are linked absolutely when it is opened without the trailing slash.
      await api.register(fastifySwaggerUi, { routePrefix: '/docs', indexPrefix: API_PREFIX });
      await api.register(apiRoutes, { services, config });
    },
    { prefix: API_PREFIX },
  );

  // The MCP server (contract §9), at the root, under the same limits as the REST reads.
  await app.register(async (root) => {
    installClientLimits(root);
    await root.register(mcpRoutes, { services, config });
  });

  for (const extension of extensions) await app.register(extension);

  return app;
}

function apiKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const explicit = headers['x-api-key'];
  if (typeof explicit === 'string') return explicit.trim();
  const authorization = headers.authorization;
  if (typeof authorization === 'string' && /^bearer\s+/i.test(authorization)) return authorization.replace(/^bearer\s+/i, '').trim();
  return undefined;
}
