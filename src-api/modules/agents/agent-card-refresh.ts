import type { Clock } from '../../lib/clock';
import type { SafeFetch } from '../../lib/safe-fetch';
import { fetchAgentCard } from './agent-card';
import type { AgentsService } from './agents.service';

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

/**
 * The weekly re-fetch of Agent Cards: each card last fetched over a week ago is fetched again
 * with `If-None-Match` (its ETag). A 304 or an unchanged card only moves its fetch time; a
 * changed one updates the profile and skills (`agent.updated`). A card that fails (gone,
 * invalid) keeps the profile as it was and is tried again next week.
 */
export function createAgentCardRefresher({ agents, safeFetch, clock }: { agents: AgentsService; safeFetch: SafeFetch; clock: Clock }) {
  return {
    async refetchDue(limit = CARDS_PER_RUN): Promise<RefetchSummary> {
      const before = new Date(clock.now().getTime() - AGENT_CARD_REFETCH_MS).toISOString();
      const summary: RefetchSummary = { checked: 0, updated: 0, notModified: 0, failed: 0 };
      for (const due of agents.agentCardsDue(before, limit)) {
        summary.checked++;
        try {
          const fetched = await fetchAgentCard(safeFetch, due.agentCardUrl!, due.agentCardEtag);
          if (fetched.status === 'not_modified') {
            agents.touchAgentCard(due.id);
            summary.notModified++;
            continue;
          }
          // Type and categories stay as the moderators set them; the card speaks for the rest.
          const { name, tagline, description, author, capabilities, source_url } = fetched.profile;
          const before = agents.findRow(due.id)?.version;
          const after = agents.applyAgentCard(
            due.id,
            { name, tagline, description, author, capabilities, source_url },
            { url: due.agentCardUrl!, skills: fetched.skills, etag: fetched.etag },
          );
          if (after.version !== before) summary.updated++;
        } catch {
          agents.touchAgentCard(due.id);
          summary.failed++;
        }
      }
      return summary;
    },
  };
}
