import { z } from 'zod';
import { emailSchema, httpUrlSchema, isoDateTimeSchema, pageQuerySchema } from '../../lib/schemas';
import { agentInputSchema, agentTypeSchema, type AgentSkill } from '../agents/agents.schemas';

export const SUBMISSION_STATUSES = ['pending', 'approved', 'rejected'] as const;
export const submissionStatusSchema = z.enum(SUBMISSION_STATUSES);

/**
 * What anyone may send to `POST /submit`: the fields of a listed agent (same
 * types, limits and defaults) plus a contact address for the moderators.
 */
export const submissionInputSchema = agentInputSchema.extend({
  contact_email: emailSchema
    .optional()
    .describe('Private: only moderators see it (to ask questions about the submission); the public API never returns it'),
});
export type SubmissionInput = z.infer<typeof submissionInputSchema>;

const CARD_FIELDS = ['agent_card_url', 'contact_email'];

/**
 * The body of `POST /submit`: the fields of an agent, or `{"agent_card_url"}` (and optionally
 * `contact_email`) alone, the profile then coming from the A2A Agent Card (contract §9).
 */
export const submitBodySchema = submissionInputSchema
  .partial({ name: true, tagline: true, source_url: true })
  .extend({
    agent_card_url: httpUrlSchema
      .optional()
      .describe(
        'An A2A Agent Card (usually https://host/.well-known/agent-card.json): the profile is read from it; give no other agent fields',
      ),
  })
  .superRefine((body, context) => {
    if (body.agent_card_url === undefined) {
      for (const field of ['name', 'tagline', 'source_url'] as const) {
        if (body[field] === undefined) context.addIssue({ code: 'custom', path: [field], message: 'is required (or give agent_card_url)' });
      }
    }
  });
export type SubmitBody = z.infer<typeof submitBodySchema>;

/** Agent fields sent beside `agent_card_url` (defaults aside): the card decides them, so they are refused. */
export function fieldsBesideCard(raw: unknown): string[] {
  if (typeof raw !== 'object' || raw === null) return [];
  return Object.keys(raw).filter((key) => !CARD_FIELDS.includes(key));
}

/** The public view of a submission: what was sent (except the contact address) and the decision. */
export const submissionSchema = z
  .object({
    id: z.string(),
    status: submissionStatusSchema,
    name: z.string(),
    tagline: z.string(),
    source_url: z.string(),
    description: z.string(),
    author: z.string(),
    capabilities: z.array(z.string()),
    categories: z.array(z.string()),
    type: agentTypeSchema,
    agent_card_url: z.string().optional().describe('When submitted by A2A Agent Card'),
    agent_id: z.string().optional().describe('The listed agent; only once approved'),
    reason: z.string().optional().describe("The moderator's reason; only once rejected"),
    created_at: isoDateTimeSchema,
    updated_at: isoDateTimeSchema,
    decided_at: isoDateTimeSchema.optional().describe('When it was approved or rejected; only once decided'),
  })
  .meta({ id: 'Submission' });
export type Submission = z.infer<typeof submissionSchema>;

/** The console's view: the public one plus the private and bookkeeping fields. */
export interface AdminSubmission extends Submission {
  contact_email: string | null;
  decided_by: string | null;
  version: number;
  /** Submitted by Agent Card: the card's skills. */
  skills?: AgentSkill[];
}

export const MAX_REJECTION_REASON_LENGTH = 1_000;
export const rejectionReasonSchema = z.string().trim().min(1).max(MAX_REJECTION_REASON_LENGTH);

export const listSubmissionsQuerySchema = pageQuerySchema.extend({
  status: submissionStatusSchema.optional(),
  /** Matches name, tagline or source_url, case-insensitively. */
  q: z.string().trim().max(200).optional(),
});
export type ListSubmissionsQuery = z.infer<typeof listSubmissionsQuerySchema>;

/** Ready-made reasons the console offers when rejecting; the moderator may edit the text. */
export const REJECTION_REASON_TEMPLATES = [
  {
    id: 'duplicate',
    label: 'Duplicate listing',
    reason: 'This agent is already listed in the directory. Please claim the existing listing instead of submitting it again.',
  },
  {
    id: 'source_unreachable',
    label: 'Source unreachable',
    reason: 'We could not reach the source URL. Please check that it is public and resubmit.',
  },
  {
    id: 'not_an_agent',
    label: 'Not an agent',
    reason: 'The submission does not describe a software agent, so it does not belong in this directory.',
  },
  {
    id: 'insufficient_description',
    label: 'Insufficient description',
    reason: 'The description does not say what the agent does. Please add its purpose, capabilities and how to use it, and resubmit.',
  },
  {
    id: 'spam',
    label: 'Spam',
    reason: 'The submission was identified as spam or advertising.',
  },
] as const;
export type RejectionReasonTemplate = (typeof REJECTION_REASON_TEMPLATES)[number];

/** Per-id outcome of a bulk approve or reject; the batch goes on past a failed id. */
export type BulkDecisionResult =
  { id: string; ok: true; status: 'approved' | 'rejected'; agent_id?: string } | { id: string; ok: false; code: string; detail: string };

export const MAX_BULK_DECISIONS = 100;
