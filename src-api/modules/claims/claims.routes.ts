import { z } from 'zod';
import { writerAccountId } from '../../http/account-auth';
import type { ApiRoutes } from '../../http/routes';
import { idParamSchema, problemSchema } from '../../lib/schemas';
import { claimSchema, createClaimBodySchema, newClaimSchema, verifyClaimBodySchema, WELL_KNOWN_CLAIM_PATH } from './claims.schemas';

const params = z.object({ id: idParamSchema });

export const claimsRoutes: ApiRoutes = async (api, { services }) => {
  api.post(
    '/claims',
    {
      config: { rateLimit: 'writes' },
      schema: {
        tags: ['claims'],
        summary: 'Claim ownership of an agent',
        description:
          'Starts an ownership claim on a listed agent that is not verified yet. The response is the only one that ' +
          'carries the verification token (and echoes the claimant’s name and e-mail address, which are never shown ' +
          `publicly). To prove control, serve a file at \`verification.url\` (the origin of the agent’s source_url + \`${WELL_KNOWN_CLAIM_PATH}\`) ` +
          'whose body contains the token, then call `POST /claims/{id}/verify`. Unknown agent: 404; already verified agent: 409.',
        body: createClaimBodySchema,
        response: { 201: newClaimSchema, 400: problemSchema, 404: problemSchema, 409: problemSchema, 429: problemSchema },
      },
    },
    async (request, reply) => reply.status(201).send(services.claims.create(request.body, writerAccountId(services, request))),
  );

  api.get(
    '/claims/:id',
    {
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['claims'],
        summary: 'Get a claim',
        description:
          'Status of a claim and the result of its last check, for claimants polling. Never shows the token or the ' +
          'claimant’s details.',
        params,
        response: { 200: claimSchema, 400: problemSchema, 404: problemSchema, 429: problemSchema },
      },
    },
    async (request) => services.claims.getPublic(request.params.id),
  );

  api.post(
    '/claims/:id/verify',
    {
      config: { rateLimit: 'writes' },
      schema: {
        tags: ['claims'],
        summary: 'Verify a pending claim',
        description:
          'Fetches `verification.url` once (no redirects followed, 5 s deadline, first 64 KiB read, private and loopback ' +
          'addresses refused). When the body contains the token the claim becomes `verified`, the agent becomes ' +
          '`verified: true` (events `claim.approved` and `agent.verified`) and any other pending claim on the agent is ' +
          'rejected as superseded. Otherwise 422 `verification_failed` says what was found; the claim stays pending and ' +
          'the result is kept in `last_check`. No body is needed (an empty body or `{}` is accepted). Not pending: 409.',
        params,
        body: verifyClaimBodySchema,
        response: { 200: claimSchema, 400: problemSchema, 404: problemSchema, 409: problemSchema, 422: problemSchema, 429: problemSchema },
      },
    },
    async (request) => services.claims.verify(request.params.id),
  );
};
