import { z } from 'zod';
import { writerAccountId } from '../../http/account-auth';
import { quotaClientKey } from '../../http/rate-limit';
import type { ApiRoutes } from '../../http/routes';
import { idParamSchema, problemSchema } from '../../lib/schemas';
import { submissionInputSchema, submissionSchema } from './submissions.schemas';

export const submissionsRoutes: ApiRoutes = async (api, { services }) => {
  api.post(
    '/submit',
    {
      config: { rateLimit: 'writes' },
      schema: {
        tags: ['submissions'],
        summary: 'Submit an agent for review',
        description:
          'Sends a new agent to the moderators. It stays `pending` until a moderator approves it (it becomes a listed agent ' +
          'and an `agent.registered` webhook event is sent) or rejects it with a reason; follow it with `GET /submissions/{id}`. ' +
          'Optional fields get the same defaults as a listed agent (`type` "other", empty description, author and lists). ' +
          '`contact_email` is private to the moderators and never returned by the API. ' +
          'A source_url that is already listed, or already waiting for review, is a 409 whose detail names the existing agent or submission. ' +
          'One client (an account, else an IP address, IPv6 by /64) may have 5 submissions waiting at once; a sixth is a 409 `quota_exceeded`.',
        body: submissionInputSchema,
        response: {
          201: submissionSchema,
          400: problemSchema,
          409: problemSchema,
          413: problemSchema,
          415: problemSchema,
          429: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const submission = services.submissions.submit(request.body, writerAccountId(services, request), quotaClientKey(request.ip));
      return reply.code(201).header('Location', `${api.prefix}/submissions/${submission.id}`).send(submission);
    },
  );

  api.get(
    '/submissions/:id',
    {
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['submissions'],
        summary: 'Get a submission',
        description:
          "The state of a submission: `pending`, `approved` (with `agent_id` of the listed agent) or `rejected` (with the moderator's `reason`). " +
          '`decided_at` is set once it is approved or rejected.',
        params: z.object({ id: idParamSchema }),
        response: { 200: submissionSchema, 400: problemSchema, 404: problemSchema, 429: problemSchema },
      },
    },
    async (request) => services.submissions.getPublic(request.params.id),
  );
};
