import { describe, expect, it } from 'vitest';
import { SearchIndex, type IndexableAgent, type SearchFilters } from '../../src-api/modules/search/search-index';
import { pruningStats } from '../../src-api/modules/search/pruned';
import { thresholdStats } from '../../src-api/modules/search/threshold';
import { AGENT_TYPES } from '../../src-api/modules/agents/agents.schemas';
import { seededRandom } from '../../src-api/lib/seeded-random';

const random = seededRandom;

// A word in half the agents ("can") next to rare words that share a prefix with a typo of it ("caln…"): the prefix
// query "caln" stands for a few rare completions and the one-edit typo "can". Fillers of few lengths make long runs
// of equal impacts, and few trust scores make ties on score that trust and id break.
const RARE = ['calnex', 'calnexor', 'calnia', 'calnor', 'calnus', 'calnessa', 'calnix'];
const COMMON = ['agent', 'data', 'workflow'];
const FILLER = ['it runs locally', 'teams use it daily', 'results come as json'];

function corpus(seed: number, size: number, prefix = 'r'): IndexableAgent[] {
  const r = random(seed);
  // Each rare word in its own number of agents (0 to about 40), some of them in names.
  const rareShare = RARE.map(() => r.int(40) / size);
  return Array.from({ length: size }, (_, i) => {
    const rare = RARE.filter((_, w) => r.next() < rareShare[w]!);
    const common = COMMON.filter(() => r.int(3) === 0);
    const fillers = Array.from({ length: 1 + r.int(3) }, () => r.pick(FILLER));
    return {
      id: `${prefix}-${((i * 7919) % size).toString(36).padStart(4, '0')}`,
      name: rare.length > 0 && r.next() < 0.3 ? `${rare[0]} helper` : `unit${i} ${r.next() < 0.05 ? 'Agent' : 'tool'}`,
      tagline: r.next() < 0.1 ? 'can do things' : 'does things',
      description: [...fillers, r.next() < 0.5 ? 'it can help' : '', rare.join(' '), common.join(' ')].join(' '),
      author: `author${r.int(5)}`,
      capabilities: r.next() < 0.3 ? ['python'] : [],
      categories: [],
      type: r.pick(AGENT_TYPES),
      trustScore: r.int(3) * 10,
      listed: true,
      status: r.next() < 0.05 ? 'deprecated' : 'active',
    };
  });
}

const QUERIES = ['caln', 'calne', 'calnex', 'cann', 'caln agent', 'data caln', 'can', 'calx', 'caln data workflow'];

function expectSame(index: SearchIndex, seed: number, count: number): Record<string, number> {
  const r = random(seed);
  const outcomes: Record<string, number> = { skipped: 0, done: 0, 'gave up': 0 };
  for (let i = 0; i < count; i++) {
    const q = r.pick(QUERIES);
    const filters: SearchFilters = i % 6 === 0 ? { minTrust: 10 } : i % 9 === 0 ? { capabilities: ['python'] } : i % 7 === 0 ? { type: r.pick(AGENT_TYPES) } : {};
    const limit = r.pick([1, 5, 20, 50]);
    const pruned = index.search(q, limit, filters, 'pruned');
    outcomes[pruningStats.threshold]!++;
    expect(pruned, `seed ${seed}: ${JSON.stringify({ q, limit, filters })}`).toEqual(index.search(q, limit, filters, 'exhaustive'));
  }
  return outcomes;
}

describe('pruned top-k with rare expansions beside a frequent one', () => {
  it('equals the exhaustive scorer, and the threshold algorithm reads the rare terms whole instead of giving up', () => {
    for (const seed of [1, 2, 3]) {
      const index = new SearchIndex();
      for (const agent of corpus(seed, 12_000)) index.apply(agent);
      index.compact();
      const outcomes = expectSame(index, seed * 10, 80);
      // The rare completions have no impact order: before, every such run gave up and the sweep scored most blocks.
      expect(outcomes.done, JSON.stringify(outcomes)).toBeGreaterThan(40);

      // "caln" (rare completions and "can", in about half the agents): a few hundred agents read, not thousands.
      const caln = index.search('caln', 20, {}, 'pruned');
      expect(pruningStats.threshold).toBe('done');
      expect(caln.total).toBeGreaterThan(4_000);
      expect(thresholdStats.visited).toBeLessThan(caln.total / 8);
      expect(caln).toEqual(index.search('caln', 20, {}, 'exhaustive'));

      // Agents added, changed and unlisted since the compaction (tail postings, tombstones), rare words among them.
      const r = random(seed + 100);
      const fresh = corpus(seed + 200, 600, 'n');
      for (const [i, agent] of fresh.entries()) {
        if (i % 3 === 0) index.apply({ ...agent, listed: r.next() < 0.5 });
        else index.apply({ ...agent, id: `r-${r.int(12_000).toString(36).padStart(4, '0')}` });
      }
      expectSame(index, seed * 10 + 1, 60);
    }
  });
});
