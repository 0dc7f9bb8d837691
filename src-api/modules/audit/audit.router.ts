import { z } from 'zod';
import { idParamSchema, pageQuerySchema } from '../../lib/schemas';
import { adminProcedure, router } from '../../trpc/init';

/** An instant with any offset, compared as UTC (the log stores ISO 8601 UTC). */
const instantSchema = z.iso
  .datetime({ offset: true, message: 'must be an ISO 8601 date-time' })
  .transform((value) => new Date(value).toISOString());

const filterText = (max: number) => z.string().trim().min(1).max(max).optional();

export const auditListInputSchema = pageQuerySchema
  .extend({
    entityType: filterText(40),
    entityId: filterText(100),
    actor: filterText(100),
    action: filterText(60),
    /** Part of the entity id, case-insensitive. */
    q: filterText(100),
    /** Entries at or after this instant. */
    from: instantSchema.optional(),
    /** Entries before this instant. */
    to: instantSchema.optional(),
  })
  .refine((query) => !query.from || !query.to || query.from <= query.to, { path: ['to'], message: 'must not be before "from"' });

/** The moderator audit log, newest first. */
export const auditRouter = router({
  list: adminProcedure.input(auditListInputSchema.prefault({})).query(async ({ ctx, input }) => {
    const page = await ctx.services.audit.list(input);
    return { entries: page.items, page: page.page, limit: page.limit, total: page.total };
  }),

  get: adminProcedure.input(z.strictObject({ id: idParamSchema })).query(({ ctx, input }) => ctx.services.audit.get(input.id)),

  /** The actors, actions and entity types in the log: the choices of the console's filters. */
  facets: adminProcedure.query(({ ctx }) => ctx.services.audit.facets()),
});
