import { z } from 'zod';
import { httpUrlSchema, isoDateTimeSchema, pageQuerySchema } from '../../lib/schemas';

/** The kinds of agent the directory lists. `/stats` reports counts for each. */
export const AGENT_TYPES = [
  'assistant',
  'coding',
  'research',
  'data',
  'devops',
  'security',
  'customer-support',
  'sales-marketing',
  'writing',
  'design',
  'workflow',
  'education',
  'other',
] as const;
export type AgentType = (typeof AGENT_TYPES)[number];
export const agentTypeSchema = z.enum(AGENT_TYPES);

export const AGENT_STATUSES = ['active', 'deprecated'] as const;
export const agentStatusSchema = z.enum(AGENT_STATUSES);
/** Why an agent is deprecated, or what to use instead (shown on its profile). */
export const statusMessageSchema = z.string().trim().max(500);

const tagSchema = z.string().trim().min(1).max(60);
export const tagListSchema = z.array(tagSchema).max(50);

export const ratingSummarySchema = z.object({
  average: z.number().nullable(),
  count: z.number().int(),
});

export const agentSkillSchema = z
  .object({ id: z.string(), name: z.string(), description: z.string(), tags: z.array(z.string()) })
  .meta({ id: 'AgentSkill' });
export type AgentSkill = z.infer<typeof agentSkillSchema>;

export const agentProfileSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    tagline: z.string(),
    description: z.string(),
    author: z.string(),
    capabilities: z.array(z.string()),
    categories: z.array(z.string()),
    type: agentTypeSchema,
    trust_score: z.number().describe('0–100, computed from verification, reviews, completeness and age'),
    source_url: z.string(),
    verified: z.boolean(),
    owner: z
      .object({ name: z.string() })
      .nullable()
      .describe('The account that proved ownership with a verified claim; null when the agent has no owner'),
    status: z.enum(AGENT_STATUSES).describe('`deprecated` agents stay listed and findable but rank below active ones'),
    status_message: z.string().nullable().describe('Why it is deprecated, or what to use instead'),
    rating: ratingSummarySchema,
    created_at: isoDateTimeSchema,
    updated_at: isoDateTimeSchema,
    agent_card_url: z
      .string()
      .optional()
      .describe('The A2A Agent Card the agent was submitted with (re-fetched weekly); only for such agents'),
    skills: z
      .array(agentSkillSchema)
      .optional()
      .describe("The Agent Card's skills as of the last fetch; only for agents submitted by card"),
  })
  .meta({ id: 'Agent' });
export type AgentProfile = z.infer<typeof agentProfileSchema>;

/** The editable profile fields, every one required and without defaults. */
const agentFieldsSchema = z.strictObject({
  name: z.string().trim().min(1).max(120),
  tagline: z.string().trim().min(1).max(200),
  description: z.string().trim().max(10_000),
  author: z.string().trim().max(120),
  capabilities: tagListSchema,
  categories: tagListSchema,
  type: agentTypeSchema,
  source_url: httpUrlSchema,
});

/** Fields a moderator, an import or an approved submission sets when listing an agent. */
export const agentInputSchema = agentFieldsSchema.extend({
  description: agentFieldsSchema.shape.description.default(''),
  author: agentFieldsSchema.shape.author.default(''),
  capabilities: tagListSchema.default([]),
  categories: tagListSchema.default([]),
  type: agentTypeSchema.default('other'),
});
export type AgentInput = z.infer<typeof agentInputSchema>;

/** A change to some fields: no defaults, so a field left out stays as it is. */
export const agentPatchSchema = agentFieldsSchema.partial();
export type AgentPatch = z.infer<typeof agentPatchSchema>;

export const AGENT_SORTS = ['trust_score', 'name', 'rating', 'created_at', 'updated_at'] as const;
export type AgentSort = (typeof AGENT_SORTS)[number];

export const listAgentsQuerySchema = pageQuerySchema.extend({
  type: agentTypeSchema.optional(),
  sort: z.enum(AGENT_SORTS).default('trust_score'),
  order: z.enum(['asc', 'desc']).optional(),
});
export type ListAgentsQuery = z.infer<typeof listAgentsQuerySchema>;

export const AGENT_VISIBILITIES = ['listed', 'unlisted', 'all'] as const;

/** The console's browse: the public list's filters, plus unlisted agents and a plain text filter. */
export const consoleListAgentsQuerySchema = listAgentsQuerySchema.extend({
  visibility: z.enum(AGENT_VISIBILITIES).default('listed'),
  q: z.string().trim().max(200).optional().describe('Case-insensitive substring of the id, name, tagline or author'),
});
export type ConsoleListAgentsQuery = z.infer<typeof consoleListAgentsQuerySchema>;

export const agentListSchema = z.object({
  agents: z.array(agentProfileSchema),
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
});
export type AgentList = z.infer<typeof agentListSchema>;

export const MAX_BULK_IDS = 50;

export const bulkAgentsSchema = z.object({
  agents: z.array(agentProfileSchema),
  missing: z.array(z.string()),
});
export type BulkAgents = z.infer<typeof bulkAgentsSchema>;

export const MAX_CHANGES_PER_PAGE = 1000;

export const agentChangesQuerySchema = z.object({
  since: z
    .string()
    .max(100)
    .optional()
    .describe('A `cursor` or `next_cursor` from an earlier answer (opaque); without it the feed starts at the beginning'),
  limit: z.coerce.number().int().min(1).max(MAX_CHANGES_PER_PAGE).default(100),
});

export const agentChangeSchema = z
  .object({
    agent_id: z.string(),
    change: z
      .enum(['created', 'updated', 'removed'])
      .describe(
        '`created`/`updated`: the agent is listed, `agent` is its profile now; `removed`: it left the public directory (unlisted or deleted)',
      ),
    agent: agentProfileSchema.optional(),
    cursor: z.string().describe('Where this change is in the feed: `since=` this cursor continues after it'),
  })
  .meta({ id: 'AgentChange' });

export const agentChangesSchema = z
  .object({
    changes: z.array(agentChangeSchema).describe('Oldest first; each agent once, in its latest state'),
    next_cursor: z.string().describe('Where to poll next; present also when there are no changes'),
  })
  .meta({ id: 'AgentChanges' });
export type AgentChanges = z.infer<typeof agentChangesSchema>;
