import { describe, expect, it } from 'vitest';
import { SearchIndex, type IndexableAgent } from '../../src-api/modules/search/search-index';
import { pruningStats } from '../../src-api/modules/search/pruned';
import { MarkedSlots } from '../../src-api/modules/search/pruning-scratch';
import { thresholdStats } from '../../src-api/modules/search/threshold';
import { seededRandom } from '../../src-api/lib/seeded-random';

// Words in about half the descriptions and in a share of the names: two-word runs visit thousands of agents, more
// than the list of marked slots first holds, and every query after must find `seen` clear again.
const WORDS = ['agent', 'data', 'workflow', 'model'];

function corpus(size: number): IndexableAgent[] {
  const r = seededRandom(1);
  const nameWord = (other: string) => (r.next() < 0.3 ? WORDS[r.int(WORDS.length)]! : other);
  return Array.from({ length: size }, (_, i) => ({
    id: `m-${i.toString(36).padStart(4, '0')}`,
    name: `unit${i} ${nameWord('tool')} ${nameWord('kit')}`,
    tagline: 'does things',
    description: `${WORDS.filter(() => r.int(2) === 0).join(' ')} filler`,
    author: 'author',
    capabilities: [],
    categories: [],
    type: 'other',
    trustScore: r.int(3) * 10,
    listed: true,
    status: 'active',
  }));
}

describe('the slots a threshold run marks seen', () => {
  it('are all kept past the list’s first size and cleared after: each query equals the exhaustive scorer, run after any other', () => {
    const index = new SearchIndex();
    for (const agent of corpus(20_000)) index.apply(agent);
    index.compact();
    const capacity = new MarkedSlots().slots.length;
    const queries = ['agent model', 'agent data workflow', 'data', 'agent model', 'workflow model', 'data workflow model', 'agent'];
    let mostVisited = 0;
    for (const q of [...queries, ...queries.reverse()]) {
      const pruned = index.search(q, 20, {}, 'pruned');
      if (pruningStats.threshold === 'done') mostVisited = Math.max(mostVisited, thresholdStats.visited);
      expect(pruned, q).toEqual(index.search(q, 20, {}, 'exhaustive'));
    }
    expect(mostVisited).toBeGreaterThan(capacity);
  });
});
