import type { AgentInput, AgentType } from '../agents/agents.schemas';
import type { AdminSubmission, Submission } from './submissions.schemas';
import type { SubmissionRow } from './submissions.table';

/** The public view: never the contact address nor who decided. */
export function toSubmission(row: SubmissionRow): Submission {
  return {
    id: row.id,
    status: row.status,
    name: row.name,
    tagline: row.tagline,
    source_url: row.sourceUrl,
    description: row.description ?? '',
    author: row.author ?? '',
    capabilities: row.capabilities ?? [],
    categories: row.categories ?? [],
    type: (row.type ?? 'other') as AgentType,
    ...(row.agentCardUrl !== null && { agent_card_url: row.agentCardUrl }),
    ...(row.agentId !== null && { agent_id: row.agentId }),
    ...(row.reason !== null && { reason: row.reason }),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    ...(row.decidedAt !== null && { decided_at: row.decidedAt }),
  };
}

export function toAdminSubmission(row: SubmissionRow): AdminSubmission {
  return {
    ...toSubmission(row),
    contact_email: row.contactEmail,
    decided_by: row.decidedBy,
    version: row.version,
    // The card's skills, for the moderator to read before approving (the public view keeps to the contract's fields).
    ...(row.agentCardUrl !== null && { skills: row.skills ?? [] }),
  };
}

/** The agent a submission becomes when approved. */
export function agentInputOf(row: SubmissionRow): AgentInput {
  const submission = toSubmission(row);
  return {
    name: submission.name,
    tagline: submission.tagline,
    description: submission.description,
    author: submission.author,
    capabilities: submission.capabilities,
    categories: submission.categories,
    type: submission.type,
    source_url: submission.source_url,
  };
}
