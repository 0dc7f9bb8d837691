import { z } from 'zod';
import { idParamSchema, pageQuerySchema } from '../../lib/schemas';
import { adminProcedure, router } from '../../trpc/init';
import { listRecentReviewsQuerySchema } from './reviews.schemas';

const reviewRef = z.strictObject({ id: idParamSchema });

/** Review moderation: every review, hidden ones too; hiding takes a review out of its agent's rating. */
export const reviewsRouter = router({
  /** One agent's reviews (listed or unlisted agent), newest first, hidden ones flagged. */
  listForAgent: adminProcedure.input(pageQuerySchema.extend({ agentId: idParamSchema })).query(async ({ ctx, input }) => {
    const page = await ctx.services.reviews.listForAgent(input.agentId, input);
    return { reviews: page.items, page: page.page, limit: page.limit, total: page.total };
  }),

  /** The latest reviews across the directory; `hidden` narrows to hidden or visible ones. */
  listRecent: adminProcedure.input(listRecentReviewsQuerySchema.prefault({})).query(async ({ ctx, input }) => {
    const page = await ctx.services.reviews.listRecent(input);
    return { reviews: page.items, page: page.page, limit: page.limit, total: page.total };
  }),

  get: adminProcedure.input(reviewRef).query(({ ctx, input }) => ctx.services.reviews.get(input.id)),

  /** Hides a review as spam (it leaves the public list and the rating) or shows it again. */
  setHidden: adminProcedure
    .input(z.strictObject({ id: idParamSchema, hidden: z.boolean() }))
    .mutation(({ ctx, input }) => ctx.services.reviews.setHidden(input.id, input.hidden, ctx.actor)),
});
