import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config';
import { bearerToken, isAdminToken } from '../../console/admin-auth';
import { RateLimitedError } from '../../errors';
import { problem, sendProblem } from '../../http/problem';
import type { Metrics } from './metrics.registry';

export const METRICS_PATH = '/metrics';

export interface MetricsRouteOptions {
  metrics: Metrics;
  config: Pick<Config, 'metrics'>;
  /** The admin token opens /metrics from anywhere; without one, only loopback clients (in `local` mode) get in. */
  adminToken?: string;
}

/**
 * Counts every answered request (an onResponse hook on the root, so it sees
 * every route, the 404s and the 429s) and every rate-limit refusal, and serves GET /metrics. Call it on the
 * root instance before any route is registered.
 */
export function installMetrics(app: FastifyInstance, { metrics, config, adminToken }: MetricsRouteOptions): void {
  // A callback hook, not an async one: it runs on every response, after it was sent.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime);
    done();
  });
  // Every limit (the rate limits, sign-in attempts) refuses by throwing RateLimitedError, naming itself.
  app.addHook('onError', (_request, _reply, error, done) => {
    if (error instanceof RateLimitedError) metrics.observeRateLimited(error.policy);
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    metrics.close();
    done();
  });

  if (config.metrics === 'off') return;
  app.get(METRICS_PATH, { schema: { hide: true } }, async (request, reply) => {
    const token = bearerToken(request.headers.authorization);
    const allowed =
      (adminToken !== undefined && isAdminToken(token, adminToken)) ||
      (config.metrics === 'local' && token === undefined && isLoopback(request));
    if (!allowed) {
      reply.header('WWW-Authenticate', 'Bearer realm="agent-directory-metrics"');
      return sendProblem(
        reply,
        problem(
          401,
          'unauthorized',
          'Unauthorized',
          config.metrics === 'local'
            ? 'Metrics are served to loopback clients, or with "Authorization: Bearer <admin token>"'
            : 'Metrics are served with "Authorization: Bearer <admin token>"',
        ),
      );
    }
    const { contentType, body } = await metrics.scrape();
    return reply.header('Cache-Control', 'no-store').type(contentType).send(body);
  });
}

/**
 * A client on this machine. `request.ip` is the socket address unless the
 * server trusts a proxy, and then the client the proxy names: a public client
 * behind a local reverse proxy is not "loopback".
 */
function isLoopback(request: FastifyRequest): boolean {
  const ip = request.ip;
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}
