import type { AgentInput } from '../../src-api/modules/agents/agents.schemas';
import type { IndexableAgent } from '../../src-api/modules/search/index-store';

/** A plain listed agent as the search index takes it: `id` and `name` given, the rest bland unless overridden. */
export function indexableAgent(id: string, name: string, overrides: Partial<IndexableAgent> = {}): IndexableAgent {
  return {
    id,
    name,
    tagline: 'Does things',
    description: '',
    author: '',
    capabilities: [],
    categories: [],
    type: 'other',
    trustScore: 10,
    listed: true,
    ...overrides,
  };
}

/** A plain agent as the write path takes it: `name` given, its source URL made from it, the rest bland unless overridden. */
export function plainAgentInput(name: string, fields: Partial<AgentInput> = {}): AgentInput {
  return {
    name,
    tagline: `${name} does things`,
    description: '',
    author: 'Author',
    capabilities: [],
    categories: [],
    type: 'other',
    source_url: `https://example.org/${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`,
    ...fields,
  };
}
