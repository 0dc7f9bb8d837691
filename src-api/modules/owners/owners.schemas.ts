import { z } from 'zod';
import { isoDateTimeSchema, pageQuerySchema } from '../../lib/schemas';
import { agentPatchSchema, agentStatusSchema, statusMessageSchema } from '../agents/agents.schemas';

/**
 * What an owner may send to `PATCH /me/agents/{id}`: the profile fields of a moderator's
 * edit (the same schema, so the same rules); `name` and `source_url` go to the moderation queue.
 */
export const ownerEditSchema = agentPatchSchema.refine((patch) => Object.keys(patch).length > 0, {
  message: 'Give at least one field to change',
});
export type OwnerEdit = z.infer<typeof ownerEditSchema>;

/** The fields an owner changes only through a moderator. */
export const MODERATED_FIELDS = ['name', 'source_url'] as const;

export const editRequestAcceptedSchema = z
  .object({
    id: z.string().describe('The edit request, in the moderation queue'),
    status: z.literal('pending'),
  })
  .meta({ id: 'EditRequestAccepted' });

export const ownerStatusBodySchema = z.strictObject({
  status: agentStatusSchema.describe('`deprecated`: stays findable, ranks below active agents; `active`: clears the message'),
  message: statusMessageSchema.optional().describe('Why it is deprecated, or what to use instead (ignored for `active`)'),
});

export const MAX_REPLY_LENGTH = 2_000;

export const replyBodySchema = z.strictObject({
  body: z.string().trim().min(1).max(MAX_REPLY_LENGTH).describe(`The owner's answer, 1 to ${MAX_REPLY_LENGTH} characters`),
});

const editFieldsSchema = z.object({ name: z.string().optional(), source_url: z.string().optional() });

/** The console's view of an edit request: what was asked and what it was, for the diff. */
export const editRequestSchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  agent_name: z.string().nullable(),
  account_id: z.string(),
  account_name: z.string().nullable().describe('The requesting owner; null once the account is closed'),
  account_email: z.string().nullable(),
  changes: editFieldsSchema,
  before: editFieldsSchema,
  status: z.enum(['pending', 'approved', 'rejected']),
  reason: z.string().nullable(),
  decided_by: z.string().nullable(),
  decided_at: isoDateTimeSchema.nullable(),
  version: z.number().int(),
  created_at: isoDateTimeSchema,
});
export type EditRequest = z.infer<typeof editRequestSchema>;

/** What the owner sees of their own edit requests: the change, its status and the moderator's reason, never who decided. */
export const ownerEditRequestSchema = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    agent_name: z.string().nullable().describe('The agent as it is named now'),
    changes: editFieldsSchema.describe('The new name and/or source_url asked for'),
    before: editFieldsSchema.describe('The same fields when the request was made'),
    status: z.enum(['pending', 'approved', 'rejected']),
    reason: z.string().nullable().describe("The moderator's reason, when the request was rejected"),
    decided_at: isoDateTimeSchema.nullable(),
    created_at: isoDateTimeSchema,
  })
  .meta({ id: 'OwnerEditRequest', description: 'A rename or source move the account asked for, as its owner sees it' });
export type OwnerEditRequest = z.infer<typeof ownerEditRequestSchema>;

export const listOwnerEditRequestsQuerySchema = pageQuerySchema.extend({
  status: z.enum(['pending', 'approved', 'rejected']).optional().describe('Only requests in this status'),
});
export type ListOwnerEditRequestsQuery = z.infer<typeof listOwnerEditRequestsQuerySchema>;

export const listEditRequestsQuerySchema = pageQuerySchema.extend({
  status: z.enum(['pending', 'approved', 'rejected']).optional(),
  agent_id: z.string().optional(),
});
export type ListEditRequestsQuery = z.infer<typeof listEditRequestsQuerySchema>;
