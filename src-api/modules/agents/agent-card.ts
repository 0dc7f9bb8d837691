import { z } from 'zod';
import { InvalidAgentCardError } from '../../errors';
import { SafeRequestError, type SafeFetch } from '../../lib/safe-fetch';
import type { AgentInput } from './agents.schemas';
import type { AgentSkill } from './agents.table';

/**
 * A2A Agent Cards (contract §9): fetched with the safe fetch, validated against the AgentCard
 * schema of the A2A specification (the fields `@a2a-js/sdk`'s `AgentCard` type declares as
 * required, with their types; that package ships types only, no runtime schema, and pulls in
 * gRPC and Express as peers, so the schema is written here), and mapped to a profile.
 */

const MAX_CARD_BYTES = 256 * 1024;
const CARD_TIMEOUT_MS = 10_000;

const skillSchema = z.looseObject({
  id: z.string().trim().min(1).max(200),
  name: z.string().trim().min(1).max(200),
  description: z.string().trim().max(2_000),
  tags: z.array(z.string().trim().min(1).max(60)).max(50),
  examples: z.array(z.string()).optional(),
  inputModes: z.array(z.string()).optional(),
  outputModes: z.array(z.string()).optional(),
});

export const agentCardSchema = z.looseObject({
  protocolVersion: z.string().optional(),
  name: z.string().trim().min(1).max(120),
  description: z.string().trim().min(1).max(10_000),
  url: z.url({ protocol: /^https?$/ }),
  version: z.string().min(1).max(100),
  provider: z.looseObject({ organization: z.string().trim().min(1).max(120), url: z.string() }).optional(),
  documentationUrl: z.string().optional(),
  iconUrl: z.string().optional(),
  capabilities: z.looseObject({
    streaming: z.boolean().optional(),
    pushNotifications: z.boolean().optional(),
    stateTransitionHistory: z.boolean().optional(),
  }),
  defaultInputModes: z.array(z.string()),
  defaultOutputModes: z.array(z.string()),
  skills: z.array(skillSchema).max(100),
});
export type AgentCard = z.infer<typeof agentCardSchema>;

export type CardFetch =
  { status: 'not_modified' } | { status: 'ok'; card: AgentCard; etag: string | null; profile: AgentInput; skills: AgentSkill[] };

const problem = (detail: string, pointer = '/agent_card_url') => new InvalidAgentCardError(detail, [{ pointer, detail }]);

/** The card at `url`; with `etag`, a 304 is `not_modified`. Anything else wrong is an InvalidAgentCardError (422). */
export async function fetchAgentCard(safeFetch: SafeFetch, url: string, etag?: string | null): Promise<CardFetch> {
  let response;
  try {
    response = await safeFetch({
      url,
      headers: { accept: 'application/json', ...(etag ? { 'if-none-match': etag } : {}) },
      timeoutMs: CARD_TIMEOUT_MS,
      maxResponseBytes: MAX_CARD_BYTES,
    });
  } catch (error) {
    if (error instanceof SafeRequestError) throw problem(`The Agent Card could not be fetched: ${error.message}`);
    throw error;
  }
  if (response.status === 304 && etag) return { status: 'not_modified' };
  if (response.status !== 200) throw problem(`The Agent Card URL answered HTTP ${response.status}, not 200`);
  if (response.truncated) throw problem(`The Agent Card is larger than ${MAX_CARD_BYTES / 1024} KiB`);
  let json: unknown;
  try {
    json = JSON.parse(response.body);
  } catch {
    throw problem('The Agent Card is not valid JSON');
  }
  const parsed = agentCardSchema.safeParse(json);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((issue) => ({ pointer: `/${issue.path.join('/')}`, detail: issue.message }));
    throw new InvalidAgentCardError(
      `The Agent Card is not valid (A2A AgentCard schema): ${errors.map((e) => `${e.pointer} ${e.detail}`).join('; ')}`,
      errors,
    );
  }
  const header = response.headers.etag;
  return { status: 'ok', card: parsed.data, etag: typeof header === 'string' ? header : null, ...profileOf(parsed.data) };
}

/** skills → capabilities (each skill's id and tags), provider → author, url → source_url. */
export function profileOf(card: AgentCard): { profile: AgentInput; skills: AgentSkill[] } {
  const skills = card.skills.map(({ id, name, description, tags }) => ({ id, name, description, tags }));
  const capabilities = [...new Set(skills.flatMap((skill) => [skill.id, ...skill.tags]).map((tag) => tag.slice(0, 60)))].slice(0, 50);
  const firstLine = card.description.split('\n')[0]!.trim();
  return {
    skills,
    profile: {
      name: card.name,
      tagline: firstLine.length <= 200 ? firstLine : `${firstLine.slice(0, 199).trimEnd()}…`,
      description: card.description,
      author: card.provider?.organization ?? '',
      capabilities,
      categories: ['a2a'],
      type: 'other',
      source_url: card.url,
    },
  };
}
