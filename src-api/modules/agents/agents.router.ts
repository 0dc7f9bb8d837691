import { z } from 'zod';
import { idParamSchema } from '../../lib/schemas';
import { adminProcedure, router } from '../../trpc/init';
import { searchBodySchema } from '../search/search.schemas';
import { agentPatchSchema, agentStatusSchema, consoleListAgentsQuerySchema, listAgentsQuerySchema } from './agents.schemas';
import { toAdminAgent } from './agent-profile';

const agentRef = z.strictObject({ id: idParamSchema });
/** The version the moderator last saw; a newer one means someone else changed the agent meanwhile (409 stale_version). */
const expectedVersion = z.number().int().positive().optional();

export const agentsRouter = router({
  /** Listed agents, as the public API pages them. */
  list: adminProcedure.input(listAgentsQuerySchema.prefault({})).query(async ({ ctx, input }) => {
    const page = await ctx.services.agents.list(input);
    return { agents: page.items, page: page.page, limit: page.limit, total: page.total };
  }),

  /** The console's browse: listed, unlisted or all agents with moderation fields, paged and sorted like `list`. */
  browse: adminProcedure.input(consoleListAgentsQuerySchema.prefault({})).query(async ({ ctx, input }) => {
    const page = await ctx.services.agents.listForConsole(input);
    return { agents: page.items, page: page.page, limit: page.limit, total: page.total };
  }),

  /** The public search (typo-tolerant, best first), with the same parameters as POST /agents/search. */
  search: adminProcedure.input(searchBodySchema.prefault({})).query(({ ctx, input }) => ctx.services.search.search(input)),

  /** Any agent, listed or not, with its moderation fields. */
  get: adminProcedure.input(agentRef).query(async ({ ctx, input }) => toAdminAgent(await ctx.services.agents.getRow(input.id))),

  update: adminProcedure
    .input(z.strictObject({ id: idParamSchema, patch: agentPatchSchema, expectedVersion }))
    .mutation(async ({ ctx, input }) =>
      toAdminAgent(await ctx.services.agents.edits.update(input.id, input.patch, { actor: ctx.actor, expectedVersion: input.expectedVersion })),
    ),

  setVerified: adminProcedure
    .input(z.strictObject({ id: idParamSchema, verified: z.boolean(), expectedVersion }))
    .mutation(async ({ ctx, input }) =>
      toAdminAgent(
        await ctx.services.agents.edits.setVerified(input.id, input.verified, {
          actor: ctx.actor,
          via: 'moderator',
          expectedVersion: input.expectedVersion,
        }),
      ),
    ),

  /** Deprecates an agent with a message (it stays findable, ranked below active ones) or makes it active again. */
  setStatus: adminProcedure
    .input(
      z.strictObject({
        id: idParamSchema,
        status: agentStatusSchema,
        message: z.string().trim().max(500).nullish(),
        expectedVersion,
      }),
    )
    .mutation(async ({ ctx, input }) =>
      toAdminAgent(
        await ctx.services.agents.edits.setStatus(input.id, input.status, input.message ?? null, {
          actor: ctx.actor,
          expectedVersion: input.expectedVersion,
        }),
      ),
    ),

  /**
   * Fetches an agent's A2A Agent Card now instead of at the weekly re-fetch (with its ETag); a
   * changed card updates the profile and skills. Answers what happened and the agent as it is after.
   */
  refetchCard: adminProcedure.input(agentRef).mutation(async ({ ctx, input }) => {
    const result = await ctx.services.agentCards.refetchNow(input.id, { actor: ctx.actor });
    return { ...result, agent: toAdminAgent(await ctx.services.agents.getRow(input.id)) };
  }),

  /** Hides an agent from the public API (listed: false) or lists it again. */
  setListed: adminProcedure
    .input(z.strictObject({ id: idParamSchema, listed: z.boolean(), expectedVersion }))
    .mutation(async ({ ctx, input }) =>
      toAdminAgent(await ctx.services.agents.edits.setListed(input.id, input.listed, { actor: ctx.actor, expectedVersion: input.expectedVersion })),
    ),
});
