import { z } from 'zod';
import { writerAccountId } from '../../http/account-auth';
import { quotaClientKey } from '../../http/rate-limit';
import type { ApiRoutes } from '../../http/routes';
import { idParamSchema, problemSchema } from '../../lib/schemas';
import { claimSchema, createClaimBodySchema, newClaimSchema, verifyClaimBodySchema } from './claims.schemas';

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
          'publicly). `verification.methods` lists every proof that fits the agent’s source; any one verifies the claim: ' +
          '`repository-file` (sources on github.com, gitlab.com, codeberg.org: commit `.well-known/agent-directory-claim.txt` ' +
          'holding the token to the default branch), `well-known` (other hosts: serve `/.well-known/agent-directory-claim.txt` ' +
          'on the source’s origin) and `dns-txt` (other named hosts: a TXT record `agent-directory-claim=<token>` at ' +
          '`_agent-directory-claim.<host>`). The first method also fills `verification.method` and `url`. Then call ' +
          '`POST /claims/{id}/verify`. Unknown or unlisted agent: 404; already verified agent: 409 `conflict`; five pending ' +
          'claims from this client already: 409 `quota_exceeded`; a forge source that names no repository: 422 `unprovable_source`.',
        body: createClaimBodySchema,
        response: {
          201: newClaimSchema,
          400: problemSchema,
          404: problemSchema,
          409: problemSchema,
          422: problemSchema,
          429: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const accountId = (await writerAccountId(services, request)) ?? undefined;
      return reply.status(201).send(await services.claims.create(request.body, { clientKey: quotaClientKey(request.ip), accountId }));
    },
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
          'Checks every method of `verification.methods` at once: files are fetched once each (no redirects followed, 5 s ' +
          'deadline, at most 64 KiB: a larger file fails as too large; private and loopback addresses refused), TXT records ' +
          'are asked of the DNS with a deadline. When any proof holds the claim becomes `verified` (`verified_method` says ' +
          'which), the agent becomes `verified: true` (events `claim.approved` and `agent.verified`) and any other pending ' +
          'claim on the agent is rejected as superseded. Otherwise 422 `verification_failed` says exactly what failed for ' +
          'each method (DNS error or timeout, HTTP 404, redirect refused, token missing, too large); the claim stays pending ' +
          'and the result is kept in `last_check.results`. No body is needed (an empty body or `{}` is accepted). Not pending: 409.',
        params,
        body: verifyClaimBodySchema,
        response: { 200: claimSchema, 400: problemSchema, 404: problemSchema, 409: problemSchema, 422: problemSchema, 429: problemSchema },
      },
    },
    async (request) => services.claims.verify(request.params.id),
  );
};
