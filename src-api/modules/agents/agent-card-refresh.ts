import type { Clock } from '../../lib/clock';
import type { SafeFetch } from '../../lib/safe-fetch';
import { fetchAgentCard } from './agent-card';
import type { AgentsService } from './agents.service';
import type { AgentRow } from './agents.table';
import { ConflictError } from '../../errors';

/** How old a fetched Agent Card may get before it is fetched again (contract §9: weekly). */
export const AGENT_CARD_REFETCH_MS = 7 * 24 * 60 * 60 * 1000;
/** Cards fetched per run, one after another (each under the safe fetch's deadline and concurrency cap). */
const CARDS_PER_RUN = 100;

export interface RefetchSummary {
  checked: number;
  updated: number;
  notModified: number;
  failed: number;
}

/** What one fetch of an agent's card did. */
export type RefetchOutcome =
  | { outcome: 'updated' | 'unchanged' | 'not_modified' }
  | { outcome: 'failed'; error: string };

/**
 * The weekly re-fetch of Agent Cards: each card last fetched over a week ago is fetched again
 * with `If-None-Match` (its ETag). A 304 or an unchanged card only moves its fetch time; a
 * changed one updates the profile and skills (`agent.updated`). A card that fails (gone,
 * invalid) keeps the profile as it was and is tried again next week.
 */
export function createAgentCardRefresher({ agents, safeFetch, clock }: { agents: AgentsService; safeFetch: SafeFetch; clock: Clock }) {
  async function refetch(
    due: Pick<AgentRow, 'id' | 'agentCardUrl' | 'agentCardEtag'> & { agentCardUrl: string },
    actor?: string,
  ): Promise<RefetchOutcome> {
    try {
      const fetched = await fetchAgentCard(safeFetch, due.agentCardUrl, due.agentCardEtag);
      if (fetched.status === 'not_modified') {
        await agents.edits.touchAgentCard(due.id);
        return { outcome: 'not_modified' };
      }
      // Type and categories stay as the moderators set them; the card speaks for the rest.
      const { name, tagline, description, author, capabilities, source_url } = fetched.profile;
      const before = (await agents.findRowAsync(due.id))?.version;
      const after = await agents.edits.applyAgentCard(
        due.id,
        { name, tagline, description, author, capabilities, source_url },
        { url: due.agentCardUrl, skills: fetched.skills, etag: fetched.etag },
        { actor },
      );
      return { outcome: after.version !== before ? 'updated' : 'unchanged' };
    } catch (cause) {
      await agents.edits.touchAgentCard(due.id);
      return { outcome: 'failed', error: cause instanceof Error ? cause.message : String(cause) };
    }
  }

  return {
    async refetchDue(limit = CARDS_PER_RUN): Promise<RefetchSummary> {
      const before = new Date(clock.now().getTime() - AGENT_CARD_REFETCH_MS).toISOString();
      const summary: RefetchSummary = { checked: 0, updated: 0, notModified: 0, failed: 0 };
      for (const due of await agents.agentCardsDue(before, limit)) {
        summary.checked++;
        const { outcome } = await refetch({ ...due, agentCardUrl: due.agentCardUrl! });
        if (outcome === 'updated') summary.updated++;
        else if (outcome === 'not_modified') summary.notModified++;
        else if (outcome === 'failed') summary.failed++;
      }
      return summary;
    },

    /**
     * A moderator's "fetch the card now": the same fetch as the weekly one, for one agent, out of
     * turn. Unknown agent → NotFoundError; an agent not submitted by card → ConflictError.
     */
    async refetchNow(id: string, { actor }: { actor?: string } = {}): Promise<RefetchOutcome> {
      const row = await agents.getRow(id);
      if (row.agentCardUrl === null) throw new ConflictError(`Agent "${id}" was not submitted by Agent Card: it has no card to fetch`);
      return refetch({ ...row, agentCardUrl: row.agentCardUrl }, actor);
    },
  };
}
