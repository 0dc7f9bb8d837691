import type { ApiRoutes } from '../../http/routes';
import { problemSchema } from '../../lib/schemas';
import { newsletterInputSchema, subscriptionSchema } from './newsletter.schemas';

export const newsletterRoutes: ApiRoutes = async (api, { services }) => {
  api.post(
    '/newsletter',
    {
      config: { rateLimit: 'writes' },
      schema: {
        tags: ['newsletter'],
        summary: 'Subscribe to the newsletter',
        description:
          'Subscribes an e-mail address: 201 when it is new. Subscribing an address that is already on the list ' +
          '(compared case-insensitively) changes nothing and answers 200 with the existing subscription.',
        body: newsletterInputSchema,
        response: {
          200: subscriptionSchema.describe('The address was already subscribed'),
          201: subscriptionSchema.describe('The address is now subscribed'),
          400: problemSchema,
          413: problemSchema,
          415: problemSchema,
          429: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const { subscription, created } = services.newsletter.subscribe(request.body.email);
      return reply.code(created ? 201 : 200).send(subscription);
    },
  );
};
