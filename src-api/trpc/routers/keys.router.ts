import { z } from 'zod';
import { idParamSchema } from '../../lib/schemas';
import { adminProcedure, router } from '../init';

/** API keys for the public API. A key is shown once, in the answer to `create`. */
export const keysRouter = router({
  list: adminProcedure.query(({ ctx }) => ({ keys: ctx.services.keys.list() })),
  create: adminProcedure
    .input(z.strictObject({ name: z.string().trim().min(1).max(100) }))
    .mutation(({ ctx, input }) => ctx.services.keys.create(input.name, ctx.actor)),
  revoke: adminProcedure
    .input(z.strictObject({ id: idParamSchema }))
    .mutation(({ ctx, input }) => ctx.services.keys.revoke(input.id, ctx.actor)),
});
