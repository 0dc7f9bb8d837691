import { z } from 'zod';
import { idParamSchema } from '../../lib/schemas';
import { adminProcedure, router } from '../../trpc/init';
import { AGENT_TYPES, agentPatchSchema } from '../agents/agents.schemas';
import { listSubmissionsQuerySchema, MAX_BULK_DECISIONS, REJECTION_REASON_TEMPLATES, rejectionReasonSchema } from './submissions.schemas';

const submissionRef = z.strictObject({ id: idParamSchema });
/** The version the moderator last saw; a newer one means someone else changed the submission meanwhile (409 stale_version). */
const expectedVersion = z.number().int().positive().optional();
const bulkItems = z
  .array(z.strictObject({ id: idParamSchema, expectedVersion }))
  .min(1)
  .max(MAX_BULK_DECISIONS);

/** Only what a moderator may correct before deciding; the source stays what was submitted. */
export const submissionPatchSchema = agentPatchSchema.omit({ source_url: true });

function versionsOf(items: z.infer<typeof bulkItems>): Record<string, number> {
  return Object.fromEntries(items.flatMap((item) => (item.expectedVersion === undefined ? [] : [[item.id, item.expectedVersion]])));
}

/** The moderation queue of submitted agents. */
export const submissionsRouter = router({
  /** Newest first, up to 100 per page; `q` matches name, tagline or source_url. */
  list: adminProcedure.input(listSubmissionsQuerySchema.prefault({})).query(async ({ ctx, input }) => {
    const page = await ctx.services.submissions.list(input);
    return { submissions: page.items, page: page.page, limit: page.limit, total: page.total };
  }),

  /** How many submissions are pending, approved and rejected. */
  counts: adminProcedure.query(({ ctx }) => ctx.services.submissions.countByStatus()),

  /** What the queue's dialogs offer: rejection reason templates and the agent types. */
  options: adminProcedure.query(() => ({ reasonTemplates: REJECTION_REASON_TEMPLATES, agentTypes: AGENT_TYPES })),

  get: adminProcedure.input(submissionRef).query(({ ctx, input }) => ctx.services.submissions.get(input.id)),

  /** Listed agents and other submissions with a similar name or the same source host. */
  duplicates: adminProcedure.input(submissionRef).query(({ ctx, input }) => ctx.services.submissions.findDuplicates(input.id)),

  update: adminProcedure
    .input(z.strictObject({ id: idParamSchema, patch: submissionPatchSchema, expectedVersion }))
    .mutation(({ ctx, input }) =>
      ctx.services.submissions.update(input.id, input.patch, { actor: ctx.actor, expectedVersion: input.expectedVersion }),
    ),

  /** Lists the agent (searchable on the next search request) and records agent.registered. */
  approve: adminProcedure
    .input(z.strictObject({ id: idParamSchema, expectedVersion }))
    .mutation(({ ctx, input }) => ctx.services.submissions.approve(input.id, { actor: ctx.actor, expectedVersion: input.expectedVersion })),

  reject: adminProcedure
    .input(z.strictObject({ id: idParamSchema, reason: rejectionReasonSchema, expectedVersion }))
    .mutation(({ ctx, input }) =>
      ctx.services.submissions.reject(input.id, input.reason, { actor: ctx.actor, expectedVersion: input.expectedVersion }),
    ),

  /** Each item on its own: the answer has one result per id, in order, failures included. */
  bulkApprove: adminProcedure.input(z.strictObject({ items: bulkItems })).mutation(async ({ ctx, input }) => ({
    results: await ctx.services.submissions.bulkApprove(
      input.items.map((item) => item.id),
      ctx.actor,
      { expectedVersions: versionsOf(input.items) },
    ),
  })),

  bulkReject: adminProcedure
    .input(z.strictObject({ items: bulkItems, reason: rejectionReasonSchema }))
    .mutation(async ({ ctx, input }) => ({
      results: await ctx.services.submissions.bulkReject(
        input.items.map((item) => item.id),
        input.reason,
        ctx.actor,
        { expectedVersions: versionsOf(input.items) },
      ),
    })),
});
