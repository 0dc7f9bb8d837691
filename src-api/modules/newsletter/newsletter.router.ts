import { adminRoleProcedure, router } from '../../trpc/init';
import { listSubscribersQuerySchema } from './newsletter.schemas';

/** Newsletter subscribers for the console: a searchable list with each address's status, the counts, and the mailing list as CSV. */
export const newsletterRouter = router({
  /** Newest first; `q` matches any part of the address, case-insensitively; `status` filters. */
  list: adminRoleProcedure.input(listSubscribersQuerySchema.prefault({})).query(async ({ ctx, input }) => {
    const page = await ctx.services.newsletter.list(input);
    return { subscribers: page.items, page: page.page, limit: page.limit, total: page.total };
  }),

  /** Addresses by status: `subscribed` (confirmed), `pending` (waiting for the link), `unsubscribed`. */
  count: adminRoleProcedure.query(({ ctx }) => ctx.services.newsletter.counts()),

  /** The confirmed subscribers as CSV (header row first); the export is audited. A mutation: it is recorded, so never batched or retried as a read. */
  exportCsv: adminRoleProcedure.mutation(async ({ ctx }) => ({ csv: await ctx.services.newsletter.exportCsv({ actor: ctx.actor }) })),
});
