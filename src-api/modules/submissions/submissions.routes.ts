import { z } from 'zod';
import { writerAccountId } from '../../http/account-auth';
import { quotaClientKey } from '../../http/rate-limit';
import type { ApiRoutes } from '../../http/routes';
import { idParamSchema, problemSchema } from '../../lib/schemas';
import { ValidationError } from '../../errors';
import { fieldsBesideCard, submitBodySchema, submissionSchema, type SubmissionInput } from './submissions.schemas';

const sentKeys = new WeakMap<object, string[]>();

export const submissionsRoutes: ApiRoutes = async (api, { services }) => {
  api.post(
    '/submit',
    {
      config: { rateLimit: 'writes' },
      // The keys as sent, before defaults fill in the body: with agent_card_url, other agent fields are refused.
      preValidation: (request, _reply, done) => {
        sentKeys.set(request, fieldsBesideCard(request.body));
        done();
      },
      schema: {
        tags: ['submissions'],
        summary: 'Submit an agent for review',
        description:
          'Sends a new agent to the moderators. It stays `pending` until a moderator approves it (it becomes a listed agent ' +
          'and an `agent.registered` webhook event is sent) or rejects it with a reason; follow it with `GET /submissions/{id}`. ' +
          'Optional fields get the same defaults as a listed agent (`type` "other", empty description, author and lists). ' +
          '`contact_email` is private to the moderators and never returned by the API. ' +
          'A source_url that is already listed, or already waiting for review, is a 409 whose detail names the existing agent or submission. ' +
          'One client (an account, else an IP address, IPv6 by /64) may have 5 submissions waiting at once; a sixth is a 409 `quota_exceeded`.' +
          '\n\nOr send `{"agent_card_url"}` (and optionally `contact_email`) alone: the A2A Agent Card is fetched (public addresses only, ' +
          '10 s, 256 KiB), validated against the A2A AgentCard schema and mapped to the profile (name; description → tagline and ' +
          "description; provider.organization → author; each skill's id and tags → capabilities; url → source_url). " +
          'A card that cannot be fetched or is not valid is a 422 `invalid_agent_card` whose `errors` point at the failing fields. ' +
          'The agent it becomes carries `agent_card_url` and `skills`; its card is re-fetched weekly (with `If-None-Match`) and a change is an `agent.updated`.',
        body: submitBodySchema,
        response: {
          201: submissionSchema,
          400: problemSchema,
          409: problemSchema,
          413: problemSchema,
          422: problemSchema,
          415: problemSchema,
          429: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const accountId = await writerAccountId(services, request);
      let submission;
      if (body.agent_card_url !== undefined) {
        const given = sentKeys.get(request) ?? [];
        if (given.length > 0) {
          throw new ValidationError(
            'With agent_card_url the profile comes from the card: send no other agent fields',
            given.map((field) => ({ pointer: `/${field}`, detail: 'not allowed with agent_card_url' })),
          );
        }
        submission = await services.submissions.submitAgentCard(
          body.agent_card_url,
          body.contact_email,
          accountId,
          quotaClientKey(request.ip),
        );
      } else {
        submission = await services.submissions.submit(body as SubmissionInput, accountId, quotaClientKey(request.ip));
      }
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
