import { describe, expect, it } from 'vitest';
import { CONNECTION_WEIGHTS, SearchIndex, type IndexableAgent } from '../../src-api/modules/search/search-index';
import { seededRandom } from '../../src-api/lib/seeded-random';

/** Deterministic, with skewed picks: low indexes far more often, so some tags are on most agents and others on a few. */
function random(seed: number) {
  const { next } = seededRandom(seed);
  const skewed = (n: number) => Math.floor(n * next() ** 3);
  return { next, skewed };
}

function corpus(count: number, seed: number, prefix = 'a'): IndexableAgent[] {
  const r = random(seed);
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}-${String(i).padStart(5, '0')}`,
    name: `Agent ${i}`,
    tagline: '',
    description: '',
    author: `Author ${r.skewed(300)}`,
    capabilities: [...new Set(Array.from({ length: 1 + Math.floor(r.next() * 4) }, () => `cap-${r.skewed(30)}`))],
    categories: [...new Set(Array.from({ length: 1 + Math.floor(r.next() * 3) }, () => `Cat-${r.skewed(12)}`))],
    type: 'other',
    trustScore: Math.floor(r.next() * 100) / 10,
    listed: true,
  }));
}

/** The connection score by definition: 3 per shared category, 4 for the same author, 1 per shared capability. */
function exactScore(from: IndexableAgent, to: IndexableAgent): number {
  const keys = (values: string[]) => new Set(values.map((value) => value.trim().toLowerCase()));
  const shared = (a: string[], b: string[]) => [...keys(a)].filter((key) => keys(b).has(key)).length;
  return (
    CONNECTION_WEIGHTS.category * shared(from.categories, to.categories) +
    (from.author.trim().toLowerCase() === to.author.trim().toLowerCase() ? CONNECTION_WEIGHTS.author : 0) +
    CONNECTION_WEIGHTS.capability * shared(from.capabilities, to.capabilities)
  );
}

/** Every agent related to `from`, ranked as the index ranks: score, then trust, then id. */
function exhaustive(agents: Map<string, IndexableAgent>, from: IndexableAgent, limit: number) {
  return [...agents.values()]
    .filter((other) => other.id !== from.id)
    .map((other) => ({ id: other.id, score: exactScore(from, other), trust: other.trustScore }))
    .filter((hit) => hit.score > 0)
    .sort((a, b) => b.score - a.score || b.trust - a.trust || (a.id < b.id ? -1 : 1))
    .slice(0, limit)
    .map(({ id, score }) => ({ id, score }));
}

describe('connections on very common tags (bitsets)', () => {
  it('scores every hit exactly, through appends, updates and compaction, and ranks exactly when nothing is sampled', () => {
    const agents = new Map(corpus(3000, 1).map((each) => [each.id, each]));
    const sampled = new SearchIndex({ connectionScanBudget: 300, connectionSamplePerList: 60 });
    const full = new SearchIndex({ connectionScanBudget: 1e9, connectionSamplePerList: 60 });
    for (const each of agents.values()) {
      sampled.apply(each);
      full.apply(each);
    }
    const r = random(2);
    const check = () => {
      for (let n = 0; n < 25; n++) {
        const ids = [...agents.keys()];
        const from = agents.get(ids[Math.floor(r.next() * ids.length)]!)!;
        const hits = sampled.connections(from.id, 20)!;
        expect(hits.length).toBeGreaterThan(0);
        for (const hit of hits) expect(hit.score).toBe(exactScore(from, agents.get(hit.id)!));
        for (let i = 1; i < hits.length; i++) expect(hits[i]!.score).toBeLessThanOrEqual(hits[i - 1]!.score);
        expect(full.connections(from.id, 20)!.map(({ id, score }) => ({ id, score }))).toEqual(exhaustive(agents, from, 20));
      }
    };
    check();
    // New slots after the bitsets were made, and changed agents (tombstone + new slot).
    for (const each of corpus(400, 3, 'b')) agents.set(each.id, each);
    for (const id of [...agents.keys()].filter((_, i) => i % 7 === 0)) {
      const changed = { ...agents.get(id)!, categories: ['cat-0', 'Cat-11'], capabilities: ['cap-29'] };
      agents.set(id, changed);
    }
    for (const each of agents.values()) {
      sampled.apply(each);
      full.apply(each);
    }
    check();
    sampled.compact();
    full.compact();
    check();
  });
});
