import { z } from 'zod';
import { idParamSchema } from '../../lib/schemas';
import { adminRoleProcedure, router } from '../../trpc/init';

/** API keys for the public API. A key is shown once, in the answer to `create`. */
export const keysRouter = router({
  /** Every key, newest first; never the key itself, only its prefix. */
  list: adminRoleProcedure.query(async ({ ctx }) => ({ keys: await ctx.services.keys.list() })),

  create: adminRoleProcedure
    .input(z.strictObject({ name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters') }))
    .mutation(({ ctx, input }) => ctx.services.keys.create(input.name, ctx.actor)),

  /** Stops the key at once; revoking a revoked key changes nothing. */
  revoke: adminRoleProcedure
    .input(z.strictObject({ id: idParamSchema }))
    .mutation(({ ctx, input }) => ctx.services.keys.revoke(input.id, ctx.actor)),
});
