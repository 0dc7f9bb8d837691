import { z } from 'zod';
import { idParamSchema } from '../../lib/schemas';
import { adminProcedure, router } from '../../trpc/init';
import { agentPatchSchema } from '../agents/agents.schemas';
import { listReportsQuerySchema } from './reports.schemas';

const reason = z.string().trim().min(1).max(1000);
const expectedVersion = z.number().int().positive().optional();

/** The console's Reports queue: dismiss, unlist or edit, each with a reason (audited). */
export const reportsRouter = router({
  list: adminProcedure.input(listReportsQuerySchema.prefault({})).query(async ({ ctx, input }) => {
    const page = await ctx.services.reports.list(input);
    return { reports: page.items, page: page.page, limit: page.limit, total: page.total };
  }),

  counts: adminProcedure.query(({ ctx }) => ctx.services.reports.countByStatus()),

  /** Open reports per agent, for the flags in the Agents screen. */
  openCounts: adminProcedure
    .input(z.strictObject({ agentIds: z.array(idParamSchema).max(100) }))
    .query(({ ctx, input }) => ctx.services.reports.openCounts(input.agentIds)),

  resolve: adminProcedure
    .input(
      z.discriminatedUnion('resolution', [
        z.strictObject({ id: idParamSchema, resolution: z.literal('dismiss'), reason, expectedVersion }),
        z.strictObject({ id: idParamSchema, resolution: z.literal('unlist'), reason, expectedVersion }),
        z.strictObject({ id: idParamSchema, resolution: z.literal('edit'), reason, patch: agentPatchSchema, expectedVersion }),
      ]),
    )
    .mutation(({ ctx, input }) => {
      const { id, expectedVersion: version, ...decision } = input;
      return ctx.services.reports.resolve(id, decision, ctx.actor, version);
    }),
});
