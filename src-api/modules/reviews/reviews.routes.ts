import { z } from 'zod';
import { setPageLinks } from '../../http/pagination';
import { writerAccountId } from '../../http/account-auth';
import { quotaClientKey } from '../../http/rate-limit';
import type { ApiRoutes } from '../../http/routes';
import { idParamSchema, problemSchema } from '../../lib/schemas';
import { reviewInputSchema, reviewListQuerySchema, reviewListSchema, reviewSchema } from './reviews.schemas';

const agentParamsSchema = z.object({ id: idParamSchema.describe('Agent id') });

export const reviewsRoutes: ApiRoutes = async (api, { services }) => {
  api.get(
    '/agents/:id/reviews',
    {
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['reviews'],
        summary: "List an agent's reviews",
        description: 'Pages through the reviews of a listed agent, newest first. Reviews hidden by a moderator (spam) are not shown.',
        params: agentParamsSchema,
        querystring: reviewListQuerySchema,
        response: { 200: reviewListSchema, 400: problemSchema, 404: problemSchema, 429: problemSchema },
      },
    },
    async (request, reply) => {
      const page = await services.reviews.listVisible(request.params.id, request.query);
      setPageLinks(request, reply, page);
      return { reviews: page.items, page: page.page, limit: page.limit, total: page.total };
    },
  );

  api.post(
    '/agents/:id/reviews',
    {
      config: { rateLimit: 'writes' },
      schema: {
        tags: ['reviews'],
        summary: 'Review an agent',
        description:
          'Rates a listed agent from 1 to 5 whole stars, with an optional comment and reviewer name ' +
          "(absent, null or blank come back as null). The agent's rating and trust score update at once, " +
          'and a `review.created` webhook event is sent.',
        params: agentParamsSchema,
        body: reviewInputSchema,
        response: {
          201: reviewSchema,
          400: problemSchema,
          404: problemSchema,
          413: problemSchema,
          415: problemSchema,
          429: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const review = await services.reviews.create(request.params.id, request.body, {
        accountId: await writerAccountId(services, request),
        client: quotaClientKey(request.ip),
      });
      return reply.code(201).send(review);
    },
  );
};
