import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Config } from '../config';
import { accountsRoutes } from '../modules/accounts/accounts.routes';
import { meKeysRoutes } from '../modules/accounts/me-keys.routes';
import { meRecordsRoutes } from '../modules/accounts/me-records.routes';
import { meRoutes } from '../modules/accounts/me.routes';
import { meWebhooksRoutes } from '../modules/accounts/me-webhooks.routes';
import { agentsRoutes } from '../modules/agents/agents.routes';
import { claimsRoutes } from '../modules/claims/claims.routes';
import { ownersRoutes } from '../modules/owners/owners.routes';
import { reportsRoutes } from '../modules/reports/reports.routes';
import { healthRoutes } from '../modules/stats/health.routes';
import { marketingRoutes } from '../modules/marketing/marketing.routes';
import { newsletterRoutes } from '../modules/newsletter/newsletter.routes';
import { reviewsRoutes } from '../modules/reviews/reviews.routes';
import { searchRoutes } from '../modules/search/search.routes';
import { statsRoutes } from '../modules/stats/stats.routes';
import { submissionsRoutes } from '../modules/submissions/submissions.routes';
import type { Services } from '../services';

export interface RouteOptions {
  services: Services;
  config: Config;
}

/** A module's REST routes: a Fastify plugin given the services. */
export type ApiRoutes = FastifyPluginAsyncZod<RouteOptions>;

/** Every public route of /api/v1. */
export const apiRoutes: ApiRoutes = async (api, options) => {
  for (const routes of [
    healthRoutes,
    statsRoutes,
    searchRoutes,
    agentsRoutes,
    reviewsRoutes,
    submissionsRoutes,
    claimsRoutes,
    reportsRoutes,
    newsletterRoutes,
    marketingRoutes,
    accountsRoutes,
    meRoutes,
    meKeysRoutes,
    meWebhooksRoutes,
    meRecordsRoutes,
    ownersRoutes,
  ]) {
    await api.register(routes, options);
  }
};
