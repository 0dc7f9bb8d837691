import { z } from 'zod';
import { ACCOUNT_SECURITY, accountOf, requireAccount } from '../../http/account-auth';
import type { ApiRoutes } from '../../http/routes';
import { LimitExceededError, NotFoundError } from '../../errors';
import { httpUrlSchema, idParamSchema, isoDateTimeSchema, pageQuerySchema, problemSchema } from '../../lib/schemas';
import type { Services } from '../../services';
import type { WebhookEndpoint } from '../webhooks/webhooks.schemas';
import {
  endpointScopeSchema,
  eventTypeSchema,
  MAX_ENDPOINT_DESCRIPTION_LENGTH,
  subscribedEventsSchema,
} from '../webhooks/webhooks.schemas';
import { accountActor } from './accounts.service';

export const MAX_ENDPOINTS = 10;

const endpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(eventTypeSchema).describe('Subscribed event kinds; empty means all'),
    scope: endpointScopeSchema,
    description: z.string(),
    status: z.enum(['active', 'disabled']),
    disabled_reason: z.string().nullable(),
    created_at: isoDateTimeSchema,
    updated_at: isoDateTimeSchema,
  })
  .meta({ id: 'AccountWebhookEndpoint' });

const endpointWithSecretSchema = endpointSchema
  .extend({
    secret: z.string().describe('The signing secret (whsec_…), shown on creation and rotation only'),
    previous_secret_expires_at: isoDateTimeSchema.optional().describe('After a rotation: until when the old secret still signs'),
  })
  .meta({ id: 'AccountWebhookEndpointWithSecret' });

const attemptSchema = z.object({
  attempt_number: z.number().int(),
  status_code: z.number().int().nullable(),
  latency_ms: z.number().int().nullable(),
  response_excerpt: z.string().nullable(),
  error: z.string().nullable(),
  started_at: isoDateTimeSchema,
});

const deliverySchema = z
  .object({
    id: z.string(),
    event_id: z.string(),
    event_type: eventTypeSchema,
    status: z.enum(['pending', 'in_flight', 'succeeded', 'failed', 'cancelled']),
    attempt_count: z.number().int(),
    next_attempt_at: isoDateTimeSchema.nullable(),
    is_test: z.boolean(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: isoDateTimeSchema,
    attempts: z.array(attemptSchema).optional(),
  })
  .meta({ id: 'AccountWebhookDelivery' });

const testResultSchema = z
  .object({
    ok: z.boolean(),
    delivery_id: z.string(),
    event_id: z.string(),
    event: eventTypeSchema,
    status_code: z.number().int().nullable(),
    latency_ms: z.number().int().nullable(),
    response_excerpt: z.string().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'AccountWebhookTestResult' });

const endpointInputSchema = z.strictObject({
  url: httpUrlSchema.describe('Where deliveries are POSTed'),
  events: subscribedEventsSchema.optional().describe('Event kinds to receive; empty or omitted means all'),
  scope: endpointScopeSchema.optional().describe('"all" (default) or "owned": only events about agents the account owns'),
  description: z.string().trim().max(MAX_ENDPOINT_DESCRIPTION_LENGTH).optional(),
});

const endpointPatchSchema = z.strictObject({
  url: httpUrlSchema.optional(),
  events: subscribedEventsSchema.optional(),
  scope: endpointScopeSchema.optional(),
  description: z.string().trim().max(MAX_ENDPOINT_DESCRIPTION_LENGTH).optional(),
  status: z.enum(['active', 'disabled']).optional().describe('Pause deliveries ("disabled") or resume them ("active")'),
});

const previewSchema = z
  .object({
    endpoint_id: z.string(),
    url: z.string(),
    previews: z.array(
      z.object({
        event: eventTypeSchema,
        body: z.string().describe('The exact bytes a delivery of the sample event carries'),
        signature: z.string().describe('X-Service-Signature of that body with the current secret'),
        headers: z.record(z.string(), z.string()).describe('The headers a delivery sends (X-Service-Delivery is a placeholder)'),
      }),
    ),
    verification: z.object({ node: z.string(), python: z.string() }).describe('Receiver code that verifies these signatures'),
  })
  .meta({ id: 'AccountWebhookPreview' });

const idParams = z.object({ id: idParamSchema.describe('Endpoint id') });
const deliveryParams = idParams.extend({ delivery_id: idParamSchema.describe('Delivery id') });
const authProblems = { 401: problemSchema, 403: problemSchema, 429: problemSchema };
const notFound = { 400: problemSchema, 404: problemSchema };

function toAccountEndpoint(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    scope: endpoint.scope,
    description: endpoint.description,
    status: endpoint.active ? ('active' as const) : ('disabled' as const),
    disabled_reason: endpoint.disabled_reason,
    created_at: endpoint.created_at,
    updated_at: endpoint.updated_at,
  };
}

/**
 * The account's webhook endpoints: the console's webhook machinery, narrowed to
 * what the account owns. Anything of another account is a 404.
 */
export const meWebhooksRoutes: ApiRoutes = async (api, { services }) => {
  const preHandler = requireAccount(services);
  const common = { tags: ['me'], security: ACCOUNT_SECURITY };
  const owned = (s: Services, accountId: string, id: string) => s.webhooks.getOwned(accountId, id);

  api.get(
    '/me/webhooks',
    {
      preHandler,
      config: { rateLimit: 'reads' },
      schema: {
        ...common,
        summary: "The account's webhook endpoints",
        response: { 200: z.object({ webhooks: z.array(endpointSchema) }), ...authProblems },
      },
    },
    async (request) => ({ webhooks: (await services.webhooks.listForAccount(accountOf(request).id)).map(toAccountEndpoint) }),
  );

  api.post(
    '/me/webhooks',
    {
      preHandler,
      schema: {
        ...common,
        summary: 'Add a webhook endpoint',
        description: `Deliveries are signed with the secret in this answer (shown once). At most ${MAX_ENDPOINTS} endpoints per account (409 \`limit_exceeded\`).`,
        body: endpointInputSchema,
        response: {
          201: endpointWithSecretSchema,
          400: problemSchema,
          409: problemSchema,
          413: problemSchema,
          415: problemSchema,
          ...authProblems,
        },
      },
    },
    async (request, reply) => {
      const account = accountOf(request);
      if ((await services.webhooks.countForAccount(account.id)) >= MAX_ENDPOINTS) {
        throw new LimitExceededError(`An account can have at most ${MAX_ENDPOINTS} webhook endpoints; remove one first`);
      }
      const created = await services.webhooks.add(request.body, { actor: accountActor(account), ownerAccountId: account.id });
      return reply.code(201).send({ ...toAccountEndpoint(created), secret: created.secret });
    },
  );

  api.get(
    '/me/webhooks/:id',
    {
      preHandler,
      config: { rateLimit: 'reads' },
      schema: {
        ...common,
        summary: 'One webhook endpoint',
        params: idParams,
        response: { 200: endpointSchema, ...notFound, ...authProblems },
      },
    },
    async (request) => toAccountEndpoint(await owned(services, accountOf(request).id, request.params.id)),
  );

  api.patch(
    '/me/webhooks/:id',
    {
      preHandler,
      schema: {
        ...common,
        summary: 'Change a webhook endpoint',
        params: idParams,
        body: endpointPatchSchema,
        response: { 200: endpointSchema, 413: problemSchema, 415: problemSchema, ...notFound, ...authProblems },
      },
    },
    async (request) => {
      const account = accountOf(request);
      const actor = accountActor(account);
      await owned(services, account.id, request.params.id);
      const { status, ...patch } = request.body;
      let endpoint = await services.webhooks.update(request.params.id, patch, { actor });
      if (status !== undefined)
        endpoint = await services.webhooks.setActive(request.params.id, status === 'active', { actor, reason: 'paused by its owner' });
      return toAccountEndpoint(endpoint);
    },
  );

  api.delete(
    '/me/webhooks/:id',
    {
      preHandler,
      schema: {
        ...common,
        summary: 'Remove a webhook endpoint',
        params: idParams,
        response: { 204: z.null().describe('Removed'), ...notFound, ...authProblems },
      },
    },
    async (request, reply) => {
      const account = accountOf(request);
      await owned(services, account.id, request.params.id);
      await services.webhooks.remove(request.params.id, { actor: accountActor(account) });
      return reply.code(204).send(null);
    },
  );

  api.post(
    '/me/webhooks/:id/rotate-secret',
    {
      preHandler,
      schema: {
        ...common,
        summary: "Rotate an endpoint's signing secret",
        description: 'The new secret signs from now on; the old one keeps signing beside it for 24 hours.',
        params: idParams,
        response: { 200: endpointWithSecretSchema, ...notFound, ...authProblems },
      },
    },
    async (request) => {
      const account = accountOf(request);
      await owned(services, account.id, request.params.id);
      const rotated = await services.webhooks.rotateSecret(request.params.id, { actor: accountActor(account) });
      return { ...toAccountEndpoint(rotated), secret: rotated.secret, previous_secret_expires_at: rotated.previous_secret_expires_at };
    },
  );

  api.post(
    '/me/webhooks/:id/test',
    {
      preHandler,
      schema: {
        ...common,
        summary: 'Send a test event',
        description: "Sends a sample event of the kind given (marked as a test) at once and answers with the receiver's answer.",
        params: idParams,
        body: z.strictObject({ event: eventTypeSchema }),
        response: { 200: testResultSchema, 413: problemSchema, 415: problemSchema, ...notFound, ...authProblems },
      },
    },
    async (request) => {
      const account = accountOf(request);
      await owned(services, account.id, request.params.id);
      return services.webhooks.sendTest(request.params.id, request.body.event, { actor: accountActor(account) });
    },
  );

  api.get(
    '/me/webhooks/:id/preview',
    {
      preHandler,
      config: { rateLimit: 'reads' },
      schema: {
        ...common,
        summary: 'Preview signed payloads',
        description:
          "Per event kind (or the one named by `event`): the exact body, signature and headers a delivery of the kind's sample " +
          'event to this endpoint carries, with receiver code in Node and Python. A test send of the kind sends the same body.',
        params: idParams,
        querystring: z.object({ event: eventTypeSchema.optional().describe('Only this event kind') }),
        response: { 200: previewSchema, ...notFound, ...authProblems },
      },
    },
    async (request) => {
      await owned(services, accountOf(request).id, request.params.id);
      return services.webhooks.preview(request.params.id, request.query.event);
    },
  );

  api.get(
    '/me/webhooks/:id/deliveries',
    {
      preHandler,
      config: { rateLimit: 'reads' },
      schema: {
        ...common,
        summary: "An endpoint's delivery log",
        description: 'Newest first, each with its attempts (status, latency, response excerpt).',
        params: idParams,
        querystring: pageQuerySchema,
        response: {
          200: z.object({ deliveries: z.array(deliverySchema), page: z.number().int(), limit: z.number().int(), total: z.number().int() }),
          ...notFound,
          ...authProblems,
        },
      },
    },
    async (request) => {
      await owned(services, accountOf(request).id, request.params.id);
      const page = await services.webhooks.listDeliveries({
        endpointId: request.params.id,
        page: request.query.page,
        limit: request.query.limit,
      });
      return {
        deliveries: await Promise.all(page.items.map((delivery) => services.webhooks.getDelivery(delivery.id))),
        page: page.page,
        limit: page.limit,
        total: page.total,
      };
    },
  );

  api.post(
    '/me/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      preHandler,
      schema: {
        ...common,
        summary: 'Redeliver an event',
        description: "Queues the delivery's event again to the endpoint (same event id, new delivery id).",
        params: deliveryParams,
        response: { 202: deliverySchema, 409: problemSchema, ...notFound, ...authProblems },
      },
    },
    async (request, reply) => {
      const account = accountOf(request);
      await owned(services, account.id, request.params.id);
      const delivery = await services.webhooks.getOwnedDelivery(account.id, request.params.delivery_id);
      if (delivery.endpoint_id !== request.params.id) throw new NotFoundError('Webhook delivery', request.params.delivery_id);
      const redelivered = await services.webhooks.redeliver(delivery.id, { actor: accountActor(account) });
      return reply.code(202).send(redelivered);
    },
  );
};
