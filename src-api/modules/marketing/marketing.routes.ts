import type { ApiRoutes } from '../../http/routes';
import { setPageLinks } from '../../http/pagination';
import { problemSchema } from '../../lib/schemas';
import {
  abTestListSchema,
  listAbTestsQuerySchema,
  publicListPostsQuerySchema,
  marketingMetricsSchema,
  METRICS_WINDOW_DAYS,
  postListSchema,
  TONES,
} from './marketing.schemas';

const errors = { 400: problemSchema, 429: problemSchema };

export const marketingRoutes: ApiRoutes = async (api, { services }) => {
  api.get(
    '/marketing/posts',
    {
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['marketing'],
        summary: 'List generated marketing posts',
        description:
          'Posts generated from directory events (agent.registered, agent.verified, review.created with rating ≥ 4), ' +
          `one per tone (${TONES.join(', ')}) and channel, newest first. Filter by status, tone, channel or agent. ` +
          'Only published posts, and archived posts that had been published, are listed: drafts stay in the console. ' +
          'A post generated from a review that a moderator later hides is archived.',
        querystring: publicListPostsQuerySchema,
        response: { 200: postListSchema, ...errors },
      },
    },
    async (request, reply) => {
      const page = await services.marketing.listPosts(request.query, { publicOnly: true });
      setPageLinks(request, reply, page);
      return { posts: page.items, page: page.page, limit: page.limit, total: page.total };
    },
  );

  api.get(
    '/marketing/ab-tests',
    {
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['marketing'],
        summary: 'A/B test results',
        description:
          'Tests between two tones of the same post, newest first. For each variant: rate and a 95 % Wilson interval. ' +
          '`p_value` is a pooled, two-sided two-proportion z-test on the stored counts (present once both variants have impressions); ' +
          '`winner` is the label of the higher-rate variant, present only when p_value < 0.05 and each variant has at least 30 impressions.',
        querystring: listAbTestsQuerySchema,
        response: { 200: abTestListSchema, ...errors },
      },
    },
    async (request, reply) => {
      const page = await services.marketing.listAbTests(request.query);
      setPageLinks(request, reply, page);
      return { ab_tests: page.items, page: page.page, limit: page.limit, total: page.total };
    },
  );

  api.get(
    '/marketing/metrics',
    {
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['marketing'],
        summary: 'Marketing metrics',
        description:
          'Posts per tone and per channel, posts per status, and posts published on each of the last ' +
          `${METRICS_WINDOW_DAYS} UTC days (oldest first, zeros included), all computed from stored posts.`,
        response: { 200: marketingMetricsSchema, 429: problemSchema },
      },
    },
    async () => services.marketing.metrics(),
  );
};
