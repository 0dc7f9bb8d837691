import { adminProcedure, router } from '../../trpc/init';
import { summarizeWebhookHealth } from './webhook-health';

/** The console's overview: queues to work on, directory figures and recent activity. */
export const statsRouter = router({
  /** The public /stats figures: listed and verified agents, per type and category, reviews. */
  directory: adminProcedure.query(({ ctx }) => ctx.services.stats.directory()),

  /**
   * Pending submissions and claims, webhook endpoints failing or disabled, and
   * per-day activity (submissions, visible reviews, new agents) over the last 30 UTC days.
   */
  overview: adminProcedure.query(async ({ ctx }) => ({
    ...(await ctx.services.stats.overview()),
    webhooks: summarizeWebhookHealth(await ctx.services.webhooks.list()),
  })),
});
