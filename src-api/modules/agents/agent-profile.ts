import type { AgentProfile, AgentType } from './agents.schemas';
import type { AgentRow } from './agents.table';

/** The public profile of an agent row (what the `Agent` schema describes). */
export function toAgentProfile(row: AgentRow): AgentProfile {
  return {
    id: row.id,
    name: row.name,
    tagline: row.tagline,
    description: row.description,
    author: row.author,
    capabilities: row.capabilities,
    categories: row.categories,
    type: row.type as AgentType,
    trust_score: row.trustScore,
    source_url: row.sourceUrl,
    verified: row.verified,
    owner: row.ownerAccountId !== null && row.ownerName !== null ? { name: row.ownerName } : null,
    status: row.status,
    status_message: row.statusMessage ?? null,
    rating: {
      average: row.ratingCount > 0 ? Math.round((row.ratingSum / row.ratingCount) * 100) / 100 : null,
      count: row.ratingCount,
    },
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    ...(row.agentCardUrl !== null && { agent_card_url: row.agentCardUrl, skills: row.skills ?? [] }),
  };
}

/** The console's view of an agent: the public profile plus moderation fields. */
export interface AdminAgent extends AgentProfile {
  listed: boolean;
  version: number;
  /** For agents submitted by A2A Agent Card: when it was last fetched and the ETag it answered with. */
  agent_card: { url: string; etag: string | null; fetched_at: string | null } | null;
}

export function toAdminAgent(row: AgentRow): AdminAgent {
  return {
    ...toAgentProfile(row),
    listed: row.listed,
    version: row.version,
    agent_card: row.agentCardUrl === null ? null : { url: row.agentCardUrl, etag: row.agentCardEtag, fetched_at: row.agentCardFetchedAt },
  };
}
