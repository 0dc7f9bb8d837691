import { API_VERSION } from '../../version';
import { adminProcedure, router } from '../init';

/** Who is calling and is the service up: the console's first call after signing in. */
export const systemRouter = router({
  whoami: adminProcedure.query(({ ctx }) => ({ actor: ctx.actor })),
  health: adminProcedure.query(async ({ ctx }) => ({
    status: 'ok' as const,
    agents_indexed: await ctx.services.search.indexedCount(),
    version: API_VERSION,
  })),
  version: adminProcedure.query(() => ({ version: API_VERSION })),
});
