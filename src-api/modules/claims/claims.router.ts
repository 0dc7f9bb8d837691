import { z } from 'zod';
import { idParamSchema } from '../../lib/schemas';
import { adminProcedure, router } from '../../trpc/init';
import { listClaimsQuerySchema } from './claims.schemas';

const claimRef = z.strictObject({ id: idParamSchema });
/** The version the moderator last saw; a newer one means the claim changed meanwhile (409 stale_version). */
const expectedVersion = z.number().int().positive().optional();

/** Ownership claims: the evidence, the well-known check, and the moderator's decision. */
export const claimsRouter = router({
  /** Newest first, up to 100 per page, optionally of one status or agent. */
  list: adminProcedure.input(listClaimsQuerySchema.prefault({})).query(async ({ ctx, input }) => {
    const page = await ctx.services.claims.list(input);
    return { claims: page.items, page: page.page, limit: page.limit, total: page.total };
  }),

  /** How many claims are pending, verified and rejected. */
  counts: adminProcedure.query(({ ctx }) => ctx.services.claims.countByStatus()),

  get: adminProcedure.input(claimRef).query(({ ctx, input }) => ctx.services.claims.get(input.id)),

  /**
   * Runs the well-known check now. Token found: verified (the agent too). Otherwise a 422
   * verification_failed saying what was found; the result is kept in last_check (a new version).
   */
  verifyNow: adminProcedure
    .input(z.strictObject({ id: idParamSchema, expectedVersion }))
    .mutation(({ ctx, input }) => ctx.services.claims.verifyNow(input.id, ctx.actor, { expectedVersion: input.expectedVersion })),

  /** A moderator vouches for the claimant without the well-known file. */
  verifyManually: adminProcedure
    .input(z.strictObject({ id: idParamSchema, note: z.string().trim().max(1000).optional(), expectedVersion }))
    .mutation(({ ctx, input }) =>
      ctx.services.claims.verifyManually(input.id, ctx.actor, input.note, { expectedVersion: input.expectedVersion }),
    ),

  reject: adminProcedure
    .input(z.strictObject({ id: idParamSchema, reason: z.string().trim().min(1).max(1000), expectedVersion }))
    .mutation(({ ctx, input }) =>
      ctx.services.claims.reject(input.id, input.reason, ctx.actor, { expectedVersion: input.expectedVersion }),
    ),
});
