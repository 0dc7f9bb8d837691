import { z } from 'zod';
import { ACCOUNT_SECURITY, accountOf, requireAccount } from '../../http/account-auth';
import type { ApiRoutes } from '../../http/routes';
import { idParamSchema, problemSchema } from '../../lib/schemas';
import { accountActor } from '../accounts/accounts.service';
import { agentProfileSchema } from '../agents/agents.schemas';
import { reviewSchema } from '../reviews/reviews.schemas';
import { setPageLinks } from '../../http/pagination';
import {
  editRequestAcceptedSchema,
  listOwnerEditRequestsQuerySchema,
  ownerEditRequestSchema,
  ownerEditSchema,
  ownerStatusBodySchema,
  replyBodySchema,
} from './owners.schemas';
import type { OwnerActor } from './owners.service';

const agentParams = z.object({ id: idParamSchema.describe('Agent id') });
const problems = {
  400: problemSchema,
  401: problemSchema,
  403: problemSchema,
  404: problemSchema,
  413: problemSchema,
  415: problemSchema,
  429: problemSchema,
};
const NOT_OWNER = 'An agent this account does not own answers 404, the same as an unknown one.';

/** What the owner of an agent (the account of its verified claim) manages: `/me/agents/{id}/…`. */
export const ownersRoutes: ApiRoutes = async (api, { services }) => {
  const preHandler = requireAccount(services);
  const ownerOf = (request: Parameters<typeof accountOf>[0]): OwnerActor => {
    const account = accountOf(request);
    return { accountId: account.id, actor: accountActor(account) };
  };

  api.patch(
    '/me/agents/:id',
    {
      preHandler,
      schema: {
        tags: ['me'],
        operationId: 'updateOwnedAgent',
        summary: 'Edit an owned agent',
        description:
          'The owner changes `tagline`, `description`, `author`, `capabilities`, `categories` and `type` at once: 200 with ' +
          'the profile, and an `agent.updated` event. A new `name` or `source_url` goes to the moderators instead: 202 ' +
          '`{"id","status":"pending"}` (the other fields of the same body are applied); one request may wait per agent ' +
          `(409 \`conflict\`). ${NOT_OWNER}`,
        security: ACCOUNT_SECURITY,
        params: agentParams,
        body: ownerEditSchema,
        response: { 200: agentProfileSchema, 202: editRequestAcceptedSchema, 409: problemSchema, ...problems },
      },
    },
    async (request, reply) => {
      const outcome = await services.owners.edit(ownerOf(request), request.params.id, request.body);
      if (outcome.kind === 'applied') return reply.code(200).send(outcome.agent);
      return reply.code(202).send({ id: outcome.id, status: outcome.status });
    },
  );

  api.get(
    '/me/edit-requests',
    {
      preHandler,
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['me'],
        operationId: 'listOwnEditRequests',
        summary: "The account's edit requests",
        description:
          'Renames and source moves this account asked for (`PATCH /me/agents/{id}` answered 202), newest first: ' +
          '`pending`, `approved` (the agent carries the change) or `rejected` with the moderator’s `reason`. `status` narrows.',
        security: ACCOUNT_SECURITY,
        querystring: listOwnerEditRequestsQuerySchema,
        response: {
          200: z.object({
            edit_requests: z.array(ownerEditRequestSchema),
            page: z.number().int(),
            limit: z.number().int(),
            total: z.number().int(),
          }),
          400: problemSchema,
          401: problemSchema,
          403: problemSchema,
          429: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const page = await services.editRequests.listForAccount(accountOf(request).id, request.query);
      setPageLinks(request, reply, page);
      return { edit_requests: page.items, page: page.page, limit: page.limit, total: page.total };
    },
  );

  api.post(
    '/me/agents/:id/status',
    {
      preHandler,
      schema: {
        tags: ['me'],
        operationId: 'setOwnedAgentStatus',
        summary: 'Deprecate an owned agent, or make it active again',
        description:
          '`deprecated` keeps the agent listed and findable, ranked below active ones, with `status_message` on its ' +
          `profile; \`active\` clears the message. 200 with the profile, and an \`agent.updated\` event. ${NOT_OWNER}`,
        security: ACCOUNT_SECURITY,
        params: agentParams,
        body: ownerStatusBodySchema,
        response: { 200: agentProfileSchema, ...problems },
      },
    },
    async (request) => services.owners.setStatus(ownerOf(request), request.params.id, request.body.status, request.body.message),
  );

  api.post(
    '/me/agents/:id/reviews/:review_id/reply',
    {
      preHandler,
      schema: {
        tags: ['me'],
        operationId: 'replyToReview',
        summary: 'Reply to a review of an owned agent',
        description:
          'The reply is shown with its review in `GET /agents/{id}/reviews` (`reply`); replying again replaces it. ' +
          `A review of another agent, or a hidden one, is a 404. ${NOT_OWNER}`,
        security: ACCOUNT_SECURITY,
        params: agentParams.extend({ review_id: idParamSchema.describe('Review id') }),
        body: replyBodySchema,
        response: { 201: reviewSchema, ...problems },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await services.owners.reply(ownerOf(request), request.params.id, request.params.review_id, request.body.body)),
  );
};
