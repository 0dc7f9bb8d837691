import { z } from 'zod';
import { ACCOUNT_SECURITY, accountOf, requireAccount } from '../../http/account-auth';
import type { ApiRoutes } from '../../http/routes';
import { LimitExceededError } from '../../errors';
import { idParamSchema, isoDateTimeSchema, problemSchema } from '../../lib/schemas';
import { accountActor } from './accounts.service';

export const MAX_ACTIVE_KEYS = 10;

const keySummarySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().describe('The first characters of the key, to tell keys apart'),
    created_at: isoDateTimeSchema,
    revoked_at: isoDateTimeSchema.nullable(),
    last_used_at: isoDateTimeSchema.nullable(),
  })
  .meta({ id: 'AccountApiKey' });

const newKeySchema = keySummarySchema
  .extend({ key: z.string().describe('The key (adk_…), shown only in this answer') })
  .meta({ id: 'NewAccountApiKey' });

const authProblems = { 401: problemSchema, 403: problemSchema, 429: problemSchema };

/** The account's API keys and their usage. */
export const meKeysRoutes: ApiRoutes = async (api, { services }) => {
  const preHandler = requireAccount(services);

  api.get(
    '/me/keys',
    {
      preHandler,
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['me'],
        summary: "The account's API keys",
        description: 'Newest first, revoked ones included; never the keys themselves.',
        security: ACCOUNT_SECURITY,
        response: { 200: z.object({ keys: z.array(keySummarySchema) }), ...authProblems },
      },
    },
    async (request) => ({ keys: await services.keys.listForAccount(accountOf(request).id) }),
  );

  api.post(
    '/me/keys',
    {
      preHandler,
      schema: {
        tags: ['me'],
        summary: 'Issue an API key',
        description: `The key is in this answer only; it is stored as a hash. At most ${MAX_ACTIVE_KEYS} active keys per account (409 \`limit_exceeded\`).`,
        security: ACCOUNT_SECURITY,
        body: z.strictObject({ name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters') }),
        response: { 201: newKeySchema, 400: problemSchema, 409: problemSchema, 413: problemSchema, 415: problemSchema, ...authProblems },
      },
    },
    async (request, reply) => {
      const account = accountOf(request);
      if ((await services.keys.countActiveForAccount(account.id)) >= MAX_ACTIVE_KEYS) {
        throw new LimitExceededError(`An account can have at most ${MAX_ACTIVE_KEYS} active keys; revoke one first`);
      }
      const created = await services.keys.create(request.body.name, accountActor(account), account.id);
      return reply.code(201).send(created);
    },
  );

  api.delete(
    '/me/keys/:id',
    {
      preHandler,
      schema: {
        tags: ['me'],
        summary: 'Revoke an API key',
        description: "Stops the key at once. Another account's key is a 404.",
        security: ACCOUNT_SECURITY,
        params: z.object({ id: idParamSchema.describe('Key id') }),
        response: { 204: z.null().describe('Revoked'), 400: problemSchema, 404: problemSchema, ...authProblems },
      },
    },
    async (request, reply) => {
      const account = accountOf(request);
      await services.keys.revoke(request.params.id, accountActor(account), account.id);
      return reply.code(204).send(null);
    },
  );

  api.get(
    '/me/usage',
    {
      preHandler,
      config: { rateLimit: 'reads' },
      schema: {
        tags: ['me'],
        summary: "Requests made with the account's keys, per day",
        description: 'The last `days` UTC days (today included), oldest first, summed over all keys of the account.',
        security: ACCOUNT_SECURITY,
        querystring: z.object({ days: z.coerce.number().int().min(1).max(90).default(30).describe('How many days, 1–90') }),
        response: {
          200: z.object({
            days: z.array(
              z.object({ date: z.string().describe('YYYY-MM-DD (UTC)'), requests: z.number().int(), rate_limited: z.number().int() }),
            ),
          }),
          400: problemSchema,
          ...authProblems,
        },
      },
    },
    async (request) => ({
      days: await services.keyUsage.daily(await services.keys.idsOfAccount(accountOf(request).id), request.query.days),
    }),
  );
};
