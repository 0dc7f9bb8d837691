import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { resolveAdminToken } from './admin-token';
import type { Config } from './config';
import { openStore } from './db/open-store';
import { connectRedis } from './lib/redis';
import { seedDemoDirectoryIfEmpty } from './demo/seed-demo';
import { buildApp, API_PREFIX } from './http/app';
import { createServices, type Services } from './services';

export interface RunningServer {
  app: FastifyInstance;
  services: Services;
  adminToken: string;
  /** e.g. http://127.0.0.1:8787/api/v1 */
  apiBaseUrl: string;
  origin: string;
  close(): Promise<void>;
}

export interface StartServerOptions {
  /** Folder of migrations, when not running from the source tree (Electron). */
  migrationsFolder?: string;
  /** Extra routes at the root: the console and its /trpc endpoint. */
  extensions?: (services: Services, adminToken: string) => FastifyPluginAsyncZod[];
}

/** Opens the data dir, seeds the demo directory if asked and empty, and listens. */
export async function startServer(config: Config, options: StartServerOptions = {}): Promise<RunningServer> {
  // Limits shared with other processes need their Redis: unreachable, the server does not start (RedisUnreachableError).
  const redis = config.redisUrl ? await connectRedis(config.redisUrl) : undefined;
  // SQLite (the data dir's file) or PostgreSQL (--database postgres://…): opened and migrated. An unreachable
  // PostgreSQL or one that refuses us is a PostgresConnectError, one line (serve prints it and exits 1).
  let database: Awaited<ReturnType<typeof openStore>>;
  try {
    database = await openStore(config, { migrationsFolder: options.migrationsFolder });
  } catch (error) {
    await redis?.quit();
    throw error;
  }
  const services = createServices({ store: database.store, config, redis });
  if (config.demoData) {
    // Seeded once, however many processes start together on an empty database (seedDemoDirectoryIfEmpty).
    // Same agents and text on every machine; dates end today, so the console's "last 30 days" charts show a living directory.
    await seedDemoDirectoryIfEmpty(services, { baseDate: services.clock.now().toISOString() });
  }
  const adminToken = resolveAdminToken(config);

  const app = await buildApp({ services, config, adminToken, extensions: options.extensions?.(services, adminToken) ?? [] });
  await app.listen({ host: config.host, port: config.port, backlog: config.transport.listenBacklog });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const origin = `http://${host}:${port}`;
  services.publicUrl.listeningOn(port);
  // Warm-up after listening: the search index is built in slices between
  // requests (the first slice now, so a small directory is complete at once),
  // and /health answers meanwhile; then the profile cache is filled the same
  // way, and trust scores catch up with the age signal (and again daily).
  let stopProfileWarmUp: (() => void) | undefined;
  let closed = false;
  // Background work that fails (say the database stays locked past busy_timeout) is reported, not fatal:
  // requests finish the index catch-up themselves, the profile cache fills on demand, and the trust
  // refresh runs again tomorrow.
  // Once closing, a read still in flight fails with the closed database (PostgreSQL's ended pool): not reported.
  const reportBackgroundError = (what: string) => (error: unknown) => {
    if (!closed) console.error(`${what} failed:`, error);
  };
  // Each job is marked as background work until it ends (/health's `idle`); the search index then takes in
  // what the trust refresh changed, so an idle server has nothing left to catch up.
  // Through store.runExclusive: one process at a time on PostgreSQL (the others skip that run), and on
  // SQLite one run at a time here (a daily tick while the start-up run still goes is skipped).
  const trustRefresh = { stopped: false };
  let trustRefreshRun: Promise<void> | undefined;
  const refreshTrustScores = (endWork = services.background.begin()) => {
    const run = services.store
      .runExclusive('trust-refresh', () => services.agents.refreshTrustScores(trustRefresh))
      .then(
        async (result) => {
          if (result.ran && !trustRefresh.stopped) {
            try {
              await services.search.refresh();
            } catch (error) {
              reportBackgroundError('Search index catch-up')(error);
            }
          }
          endWork();
        },
        (error) => {
          endWork();
          reportBackgroundError('Trust score refresh')(error);
        },
      );
    // close() waits for every run still going (a daily tick may start while the start-up run goes on).
    trustRefreshRun = Promise.all([trustRefreshRun, run]).then(() => undefined);
  };
  const endWarmUp = services.background.begin();
  const stopIndexWarmUp = services.search.warmUp({
    onDone: () => {
      stopProfileWarmUp = services.agents.warmUpProfiles({
        onDone: () => refreshTrustScores(endWarmUp),
        onError: (error) => {
          endWarmUp();
          reportBackgroundError('Profile cache warm-up')(error);
        },
      });
    },
    onError: (error) => {
      endWarmUp();
      reportBackgroundError('Search index warm-up')(error);
    },
  });
  const dailyTrustRefresh = setInterval(() => refreshTrustScores(), 24 * 60 * 60 * 1000);
  dailyTrustRefresh.unref();
  // Agent Cards older than a week are fetched again (If-None-Match); checked hourly, a bounded batch each time.
  const hourlyAgentCards = setInterval(
    () => {
      // One process at a time (on PostgreSQL, an advisory lock): the others skip this hour's batch.
      services.store
        .runExclusive('agent-card-refetch', () => services.agentCards.refetchDue())
        .catch(reportBackgroundError('Agent Card re-fetch'));
    },
    60 * 60 * 1000,
  );
  hourlyAgentCards.unref();
  // Verified ownership is re-checked when due (weekly by default); looked for hourly, a bounded batch each time.
  const hourlyOwnershipRechecks = setInterval(
    () => {
      services.store
        .runExclusive('ownership-recheck', () => services.claims.recheckDue())
        .catch(reportBackgroundError('Ownership re-check'));
    },
    60 * 60 * 1000,
  );
  hourlyOwnershipRechecks.unref();
  // Webhook deliveries go out only while serving; it polls, so endpoints and events added by CLI commands are picked up.
  services.webhookDispatcher.start();
  // Mail goes out the same way: only while serving, polling so mail queued by CLI commands is sent too.
  services.mailWorker.start();

  return {
    app,
    services,
    adminToken,
    origin,
    apiBaseUrl: `${origin}${API_PREFIX}`,
    async close() {
      if (closed) return;
      closed = true;
      stopIndexWarmUp();
      stopProfileWarmUp?.();
      trustRefresh.stopped = true;
      await trustRefreshRun; // the slice in progress, before the database closes
      clearInterval(dailyTrustRefresh);
      clearInterval(hourlyAgentCards);
      clearInterval(hourlyOwnershipRechecks);
      await app.close();
      await services.webhookDispatcher.stop(); // waits (bounded) for sends in flight, before the database closes
      await services.mailWorker.stop();
      await services.keyUsage.flush();
      await database.close();
      await redis?.quit();
    },
  };
}
