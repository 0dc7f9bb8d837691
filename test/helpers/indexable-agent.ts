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
