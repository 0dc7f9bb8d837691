import { z } from 'zod';
import { idParamSchema } from '../../lib/schemas';
import { adminRoleProcedure, router } from '../../trpc/init';
import { EVENT_TYPES } from '../events/events.table';
import {
  endpointInputSchema,
  endpointPatchSchema,
  eventTypeSchema,
  listDeliveriesQuerySchema,
  redeliverFailedInputSchema,
} from './webhooks.schemas';

/**
 * The console's webhooks API: endpoints, the delivery log, redelivery, test
 * sends and the payload preview. A thin layer: the service validates and audits
 * (with the caller as actor); inputs are checked here too, so bad ones are 400s.
 */
const byId = z.strictObject({ id: idParamSchema });
const expectedVersion = z.number().int().positive().optional();

export const webhooksRouter = router({
  /** Every endpoint, oldest first, never with its secret, with its latest delivery; plus the event kinds there are. */
  list: adminRoleProcedure.query(async ({ ctx }) => ({
    endpoints: await ctx.services.webhooks.listWithLastDelivery(),
    eventKinds: [...EVENT_TYPES],
  })),

  get: adminRoleProcedure.input(byId).query(({ ctx, input }) => ctx.services.webhooks.get(input.id)),

  /** The new endpoint with its secret (shown here, and again only through revealSecret). */
  create: adminRoleProcedure
    .input(endpointInputSchema)
    .mutation(({ ctx, input }) => ctx.services.webhooks.add(input, { actor: ctx.actor })),

  update: adminRoleProcedure
    .input(endpointPatchSchema.extend({ id: idParamSchema, expectedVersion }))
    .mutation(({ ctx, input: { id, expectedVersion: version, ...patch } }) =>
      ctx.services.webhooks.update(id, patch, { actor: ctx.actor, expectedVersion: version }),
    ),

  /** Disabling cancels what waits for the endpoint; enabling clears the failure count. */
  setActive: adminRoleProcedure
    .input(z.strictObject({ id: idParamSchema, active: z.boolean(), reason: z.string().trim().max(500).optional(), expectedVersion }))
    .mutation(({ ctx, input }) =>
      ctx.services.webhooks.setActive(input.id, input.active, {
        actor: ctx.actor,
        reason: input.reason,
        expectedVersion: input.expectedVersion,
      }),
    ),

  /** A mutation, not a query: seeing a secret is audited. */
  revealSecret: adminRoleProcedure
    .input(byId)
    .mutation(({ ctx, input }) => ctx.services.webhooks.revealSecret(input.id, { actor: ctx.actor })),

  rotateSecret: adminRoleProcedure
    .input(z.strictObject({ id: idParamSchema, expectedVersion }))
    .mutation(({ ctx, input }) =>
      ctx.services.webhooks.rotateSecret(input.id, { actor: ctx.actor, expectedVersion: input.expectedVersion }),
    ),

  remove: adminRoleProcedure.input(byId).mutation(({ ctx, input }) => ctx.services.webhooks.remove(input.id, { actor: ctx.actor })),

  /** The delivery log, newest first: filter by endpoint, status, event kind, since, test or not. */
  deliveries: adminRoleProcedure.input(listDeliveriesQuerySchema.prefault({})).query(async ({ ctx, input }) => {
    const page = await ctx.services.webhooks.listDeliveries(input);
    return { deliveries: page.items, page: page.page, limit: page.limit, total: page.total };
  }),

  /** One delivery with every attempt: request headers and body, status, latency, response excerpt, error. */
  delivery: adminRoleProcedure.input(byId).query(({ ctx, input }) => ctx.services.webhooks.getDelivery(input.id)),

  /** How many deliveries are in each state. */
  deliveryCounts: adminRoleProcedure.query(({ ctx }) => ctx.services.webhooks.queue.countByStatus()),

  redeliver: adminRoleProcedure.input(byId).mutation(({ ctx, input }) => ctx.services.webhooks.redeliver(input.id, { actor: ctx.actor })),

  redeliverFailed: adminRoleProcedure
    .input(redeliverFailedInputSchema)
    .mutation(({ ctx, input }) => ctx.services.webhooks.redeliverFailed(input, { actor: ctx.actor })),

  /** Per event kind (or one): the exact body, signature and headers, and receiver code in Node and Python. */
  preview: adminRoleProcedure
    .input(z.strictObject({ id: idParamSchema, event: eventTypeSchema.optional() }))
    .query(({ ctx, input }) => ctx.services.webhooks.preview(input.id, input.event)),

  /** Sends the sample event now and answers with the receiver's response. */
  sendTest: adminRoleProcedure
    .input(z.strictObject({ id: idParamSchema, event: eventTypeSchema.default('agent.registered') }))
    .mutation(({ ctx, input }) => ctx.services.webhooks.sendTest(input.id, input.event, { actor: ctx.actor })),
});
