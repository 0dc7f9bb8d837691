import { z } from 'zod';
import { commaListSchema } from '../../lib/schemas';
import { agentProfileSchema, agentTypeSchema } from '../agents/agents.schemas';
import { CONNECTION_WEIGHTS } from './search-index';

export const MAX_QUERY_LENGTH = 500;
export const MAX_SEARCH_LIMIT = 100;
export const DEFAULT_SEARCH_LIMIT = 20;
/** Pages reach this many matches deep at most (page × limit): deeper, nobody reads, and each page costs a top-(page × limit) ranking. */
export const MAX_SEARCH_DEPTH = 10_000;
export const MAX_CAPABILITY_FILTERS = 20;
export const MAX_CONNECTIONS_LIMIT = 50;
export const DEFAULT_CONNECTIONS_LIMIT = 10;

const queryText = z
  .string()
  .max(MAX_QUERY_LENGTH)
  .describe(`Free text, at most ${MAX_QUERY_LENGTH} characters; empty lists by trust score`);
const capabilityName = z.string().trim().min(1).max(60);
const minTrust = z.number().min(0).max(100).describe('Only agents with trust_score ≥ this (0–100)');
const typeFilter = agentTypeSchema.describe('Only agents of this type');

const pageOf = (page: z.ZodNumber) =>
  page.int().min(1).max(MAX_SEARCH_DEPTH).default(1).describe(`1-based page of \`limit\` hits; page × limit at most ${MAX_SEARCH_DEPTH}`);
const withinDepth = (params: { page: number; limit: number }) => params.page * params.limit <= MAX_SEARCH_DEPTH;
const depthError = { message: `page × limit must be at most ${MAX_SEARCH_DEPTH}`, path: ['page'] };

export const searchQuerySchema = z
  .object({
    q: queryText.optional(),
    page: pageOf(z.coerce.number()),
    limit: z.coerce.number().int().min(1).max(MAX_SEARCH_LIMIT).default(DEFAULT_SEARCH_LIMIT),
    type: typeFilter.optional(),
    min_trust: z.coerce.number().min(0).max(100).describe(minTrust.description!).optional(),
    capabilities: commaListSchema(capabilityName, { maxItems: MAX_CAPABILITY_FILTERS })
      .pipe(z.array(z.string()).max(MAX_CAPABILITY_FILTERS))
      .optional()
      .describe('Comma-separated; every one is required (case-insensitive exact match)'),
  })
  .refine(withinDepth, depthError);

export const searchBodySchema = z
  .strictObject({
    query: queryText.optional(),
    q: queryText.optional().describe('The same as `query` (as in GET); give one of them'),
    page: pageOf(z.number()),
    limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(DEFAULT_SEARCH_LIMIT),
    type: typeFilter.optional(),
    min_trust: minTrust.optional(),
    capabilities: z
      .array(capabilityName)
      .max(MAX_CAPABILITY_FILTERS)
      .optional()
      .describe('Every one is required (case-insensitive exact match)'),
  })
  .refine(withinDepth, depthError)
  .refine((body) => body.query === undefined || body.q === undefined || body.query === body.q, {
    message: 'give `query` or `q`, not two different texts',
    path: ['q'],
  });

export const searchHitSchema = agentProfileSchema
  .extend({ score: z.number().describe('Relevance: higher is better; see the endpoint description') })
  .meta({ id: 'SearchHit' });
export type SearchHit = z.infer<typeof searchHitSchema>;

export const searchResultSchema = z.object({
  query: z.string().describe('The query as understood (trimmed; empty when none was given)'),
  agents: z.array(searchHitSchema).describe('Best first'),
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int().describe('Every match, on all pages'),
});
export type SearchResult = z.infer<typeof searchResultSchema>;

export const connectionsQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_CONNECTIONS_LIMIT).default(DEFAULT_CONNECTIONS_LIMIT),
});

export const connectionSchema = z
  .object({
    agent: agentProfileSchema,
    score: z
      .number()
      .int()
      .describe(
        `${CONNECTION_WEIGHTS.category} per shared category + ${CONNECTION_WEIGHTS.author} for the same author + ` +
          `${CONNECTION_WEIGHTS.capability} per shared capability`,
      ),
    shared_categories: z.array(z.string()).describe('Categories both agents have, as the requested agent spells them'),
    shared_capabilities: z.array(z.string()).describe('Capabilities both agents have, as the requested agent spells them'),
    same_author: z.boolean().describe('Both have the same non-empty author (case-insensitive)'),
  })
  .meta({ id: 'Connection' });
export type Connection = z.infer<typeof connectionSchema>;

export const connectionsResultSchema = z.object({
  agent_id: z.string(),
  connections: z.array(connectionSchema).describe('Best first; never the agent itself'),
});
export type ConnectionsResult = z.infer<typeof connectionsResultSchema>;

/** What the service takes, whichever route it came from: the POST body's fields. */
export interface SearchParams {
  query?: string;
  /** The same as `query` (POST accepts both spellings). */
  q?: string;
  page?: number;
  limit?: number;
  type?: z.infer<typeof agentTypeSchema>;
  min_trust?: number;
  capabilities?: string[];
}
