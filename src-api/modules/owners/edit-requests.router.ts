import { z } from 'zod';
import { idParamSchema } from '../../lib/schemas';
import { adminProcedure, router } from '../../trpc/init';
import { listEditRequestsQuerySchema } from './owners.schemas';

/** The version the moderator last saw; a newer one means the request changed meanwhile (409 stale_version). */
const expectedVersion = z.number().int().positive().optional();

/** Owners' renames and source moves waiting for a moderator: the diff, approve, reject with a reason. */
export const editRequestsRouter = router({
  /** Newest first; pending ones unless `status` says otherwise. */
  list: adminProcedure
    .input(listEditRequestsQuerySchema.extend({ status: listEditRequestsQuerySchema.shape.status.default('pending') }).prefault({}))
    .query(async ({ ctx, input }) => {
      const page = await ctx.services.editRequests.list(input);
      return { editRequests: page.items, page: page.page, limit: page.limit, total: page.total };
    }),

  get: adminProcedure.input(z.strictObject({ id: idParamSchema })).query(({ ctx, input }) => ctx.services.editRequests.get(input.id)),

  /** Applies the new name or source to the agent (audited with the moderator) and closes the request. */
  approve: adminProcedure
    .input(z.strictObject({ id: idParamSchema, expectedVersion }))
    .mutation(({ ctx, input }) => ctx.services.editRequests.approve(input.id, ctx.actor, { expectedVersion: input.expectedVersion })),

  reject: adminProcedure
    .input(z.strictObject({ id: idParamSchema, reason: z.string().trim().min(1).max(1000), expectedVersion }))
    .mutation(({ ctx, input }) =>
      ctx.services.editRequests.reject(input.id, input.reason, ctx.actor, { expectedVersion: input.expectedVersion }),
    ),
});
