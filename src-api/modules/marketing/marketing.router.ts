import { z } from 'zod';
import { idParamSchema } from '../../lib/schemas';
import { adminProcedure, router } from '../../trpc/init';
import { listAbTestsQuerySchema, listPostsQuerySchema, postPatchSchema } from './marketing.schemas';
import { MAX_BULK_POSTS } from './post-queue';

const ref = z.strictObject({ id: idParamSchema });
/** The version the moderator last saw; a newer one means someone else changed the post meanwhile (409 stale_version). */
const expectedVersion = z.number().int().positive().optional();
const versionedRef = z.strictObject({ id: idParamSchema, expectedVersion });

/** Generated marketing posts, A/B tests and publishing metrics. */
export const marketingRouter = router({
  /** Posts, newest first, with the name of the agent each is about. */
  listPosts: adminProcedure.input(listPostsQuerySchema.prefault({})).query(async ({ ctx, input }) => {
    const page = await ctx.services.postQueue.list(input);
    return { posts: page.items, page: page.page, limit: page.limit, total: page.total };
  }),

  /** Publishes or archives several posts, each on its own: the answer says what happened to each. */
  decidePosts: adminProcedure
    .input(z.strictObject({ ids: z.array(idParamSchema).min(1).max(MAX_BULK_POSTS), decision: z.enum(['publish', 'archive']) }))
    .mutation(async ({ ctx, input }) => ({ results: await ctx.services.postQueue.decide(input.ids, input.decision, ctx.actor) })),

  /** One post with its version and the event it was generated from. */
  getPost: adminProcedure.input(ref).query(({ ctx, input }) => ctx.services.marketing.getPost(input.id)),

  /** Edits title, body, tone or channel; archived posts are final (409). */
  updatePost: adminProcedure
    .input(z.strictObject({ id: idParamSchema, patch: postPatchSchema, expectedVersion }))
    .mutation(({ ctx, input }) =>
      ctx.services.marketing.updatePost(input.id, input.patch, { actor: ctx.actor, expectedVersion: input.expectedVersion }),
    ),

  publishPost: adminProcedure
    .input(versionedRef)
    .mutation(({ ctx, input }) => ctx.services.marketing.publishPost(input.id, ctx.actor, { expectedVersion: input.expectedVersion })),

  archivePost: adminProcedure
    .input(versionedRef)
    .mutation(({ ctx, input }) => ctx.services.marketing.archivePost(input.id, ctx.actor, { expectedVersion: input.expectedVersion })),

  listAbTests: adminProcedure.input(listAbTestsQuerySchema.prefault({})).query(async ({ ctx, input }) => {
    const page = await ctx.services.marketing.listAbTests(input);
    return { ab_tests: page.items, page: page.page, limit: page.limit, total: page.total };
  }),

  getAbTest: adminProcedure.input(ref).query(({ ctx, input }) => ctx.services.marketing.getAbTest(input.id)),

  /** Stops a running test: its counts, p-value and winner are final from then on. */
  completeAbTest: adminProcedure.input(ref).mutation(({ ctx, input }) => ctx.services.marketing.completeAbTest(input.id, ctx.actor)),

  metrics: adminProcedure.query(({ ctx }) => ctx.services.marketing.metrics()),
});
