import { z } from 'zod';
import { pageQuerySchema } from '../../lib/schemas';
import { adminProcedure, router } from '../init';

export const auditListInputSchema = pageQuerySchema.extend({
  entityType: z.string().trim().min(1).max(40).optional(),
  entityId: z.string().trim().min(1).max(100).optional(),
  actor: z.string().trim().min(1).max(100).optional(),
});

/** The moderator audit log, newest first. */
export const auditRouter = router({
  list: adminProcedure.input(auditListInputSchema.prefault({})).query(({ ctx, input }) => {
    const page = ctx.services.audit.list(input);
    return { entries: page.items, page: page.page, limit: page.limit, total: page.total };
  }),
});
