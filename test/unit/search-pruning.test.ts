import { describe, expect, it, onTestFinished } from 'vitest';
import { SearchIndex, type IndexableAgent, type SearchFilters } from '../../src-api/modules/search/search-index';
import { BLOCK_SIZE } from '../../src-api/modules/search/accelerators';
import { IMPACT_ORDER } from '../../src-api/modules/search/impact-orders';
import { BOUND_ORDER_BLOCKS, pruningStats, THRESHOLD } from '../../src-api/modules/search/pruned';
import { AGENT_TYPES } from '../../src-api/modules/agents/agents.schemas';
import { seededRandom } from '../../src-api/lib/seeded-random';

const random = seededRandom;

// A small vocabulary with skew: a few words in most agents, word forms ("deploy", "deploys", "deployment"), prefixes, near misses.
const COMMON = ['agent', 'data', 'workflow', 'model'];
const WORDS = [
  ...COMMON,
  'agents',
  'deploy',
  'deploys',
  'deployment',
  'summarize',
  'summarizer',
  'summarization',
  'translate',
  'translator',
  'security',
  'secure',
  'review',
  'reviewer',
  'code',
  'search',
  'searches',
  'dataset',
  'datasets',
  'platform',
  'cloud',
  'monitor',
  'monitoring',
  'report',
  'reports',
  'kestrel',
];
const QUERY_WORDS = [...WORDS, 'agnet', 'deplyment', 'summ', 'sec', 'dat', 'wor', 'Agent Data', 'reviw'];

function text(r: ReturnType<typeof random>, length: number): string {
  const words: string[] = [];
  for (let i = 0; i < length; i++) words.push(r.next() < 0.5 ? r.pick(COMMON) : r.pick(WORDS));
  return words.join(' ');
}

function corpus(seed: number, size: number): IndexableAgent[] {
  const r = random(seed);
  return Array.from({ length: size }, (_, i) => ({
    id: `a-${i.toString(36).padStart(4, '0')}`,
    name: r.next() < 0.05 ? 'Agent Data' : `${r.pick(WORDS)} ${r.pick(WORDS)}`,
    tagline: text(r, 1 + r.int(4)),
    description: text(r, r.int(30)),
    author: r.next() < 0.2 ? 'Kestrel Security' : `author${r.int(20)}`,
    // 'vision' on few agents: a filter few pass tests them one by one (matching-bits' sparse path).
    capabilities: r.next() < 0.5 ? [r.pick(['python', 'sql', 'ocr'])] : r.next() < 0.1 ? ['vision', 'sql'] : [],
    categories: [],
    type: r.pick(AGENT_TYPES),
    // Few distinct trust scores, so ties on score are broken by trust and id as well.
    trustScore: r.int(4) * 25,
    listed: true,
    status: r.next() < 0.1 ? 'deprecated' : 'active',
  }));
}

function queries(seed: number, count: number): { q: string; limit: number; filters: SearchFilters }[] {
  const r = random(seed);
  return Array.from({ length: count }, () => {
    const words = 1 + r.int(3);
    const q = Array.from({ length: words }, () => r.pick(QUERY_WORDS)).join(' ');
    const filters: SearchFilters = {};
    if (r.next() < 0.2) filters.type = r.pick(AGENT_TYPES);
    if (r.next() < 0.2) filters.minTrust = 25 * r.int(4);
    if (r.next() < 0.3) filters.capabilities = r.pick([['python'], ['sql'], ['ocr'], ['vision'], ['Vision', 'sql']]);
    return { q, limit: r.pick([1, 3, 10, 20, 50]), filters };
  });
}

function expectSame(index: SearchIndex, seed: number, count: number): void {
  for (const { q, limit, filters } of queries(seed, count)) {
    const exhaustive = index.search(q, limit, filters, 'exhaustive');
    const pruned = index.search(q, limit, filters, 'pruned');
    expect(pruned, `seed ${seed}, query ${JSON.stringify({ q, limit, filters })}`).toEqual(exhaustive);
  }
}

describe('pruned top-k', () => {
  it('returns exactly the exhaustive scorer’s hits, order and total on random corpora and queries', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const index = new SearchIndex();
      for (const agent of corpus(seed, 300 + seed * 150)) index.apply(agent);
      // Before compaction every posting is a tail posting; after it, in the base with block maxima and bitsets.
      expectSame(index, seed * 1000, 40);
      index.compact();
      expectSame(index, seed * 1000 + 1, 120);
    }
  });

  it('stays exact with tail postings, tombstones and in-place changes after a compaction', () => {
    for (let seed = 20; seed <= 25; seed++) {
      const agents = corpus(seed, 2500);
      const index = new SearchIndex();
      for (const agent of agents) index.apply(agent);
      index.compact();
      const r = random(seed);
      const changed = corpus(seed + 100, 400);
      for (let i = 0; i < 400; i++) {
        const target = agents[r.int(agents.length)]!;
        const roll = r.next();
        if (roll < 0.3) index.apply({ ...target, listed: false });
        else if (roll < 0.6) index.apply({ ...changed[i]!, id: target.id });
        else if (roll < 0.8)
          index.apply({ ...target, trustScore: r.int(4) * 25, type: r.pick(AGENT_TYPES), status: r.pick(['active', 'deprecated']) });
        else index.apply({ ...changed[i]!, id: `new-${seed}-${i}` });
      }
      expectSame(index, seed * 7, 150);
    }
  });

  it('prunes: a common word on a large corpus scores few blocks, yet ranks and counts every match', () => {
    // The block-max scorer on its own (the threshold algorithm below).
    THRESHOLD.enabled = false;
    onTestFinished(() => {
      THRESHOLD.enabled = true;
    });
    const index = new SearchIndex();
    for (const agent of corpus(99, 20_000)) index.apply(agent);
    index.compact();
    const pruned = index.search('agent', 10, {}, 'pruned');
    const exhaustive = index.search('agent', 10, {}, 'exhaustive');
    const { blocks, scored } = pruningStats;
    expect(pruned).toEqual(exhaustive);
    expect(pruned.total).toBeGreaterThan(10_000);
    expect(blocks).toBe(Math.ceil(20_000 / BLOCK_SIZE));
    expect(scored).toBeLessThan(blocks / 10);
    // A word standing for one term walks its blocks in the stored order of their maxima: as exact, and as few blocks.
    for (const word of ['model', 'workflow', 'cloud']) {
      for (const limit of [1, 10, 50]) {
        const single = index.search(word, limit, {}, 'pruned');
        expect(pruningStats.scored, word).toBeLessThan(blocks / 4);
        expect(single, word).toEqual(index.search(word, limit, {}, 'exhaustive'));
      }
    }
  });

  it('stays exact for several common words on a large corpus: bound order, then the slot-order sweep over impact columns', () => {
    THRESHOLD.enabled = false;
    onTestFinished(() => {
      THRESHOLD.enabled = true;
    });
    const index = new SearchIndex();
    for (const agent of corpus(77, 20_000)) index.apply(agent);
    index.compact();
    const r = random(78);
    let swept = 0;
    for (let i = 0; i < 60; i++) {
      const words = 2 + r.int(2);
      const q = Array.from({ length: words }, () => r.pick([...COMMON, 'agents', 'dataset', 'deploy'])).join(' ');
      const filters: SearchFilters = i % 5 === 0 ? { minTrust: 25 } : i % 7 === 0 ? { type: r.pick(AGENT_TYPES) } : {};
      const limit = r.pick([1, 10, 20, 50]);
      const pruned = index.search(q, limit, filters, 'pruned');
      if (pruningStats.scored > BOUND_ORDER_BLOCKS) swept++;
      expect(pruned, JSON.stringify({ q, limit, filters })).toEqual(index.search(q, limit, filters, 'exhaustive'));
    }
    // The sweep was reached (else this test would not cover it).
    expect(swept).toBeGreaterThan(0);
  });

  it('threshold algorithm over impact-ordered prefixes: exact when it finishes, and when a prefix runs out and the block scorer takes over', () => {
    for (const [minimum, share] of [
      [4096, 1 / 8],
      [24, 1 / 16],
    ] as const) {
      Object.assign(IMPACT_ORDER, { minimum, share });
      onTestFinished(() => {
        Object.assign(IMPACT_ORDER, { minimum: 4096, share: 1 / 8 });
      });
      const index = new SearchIndex();
      for (const agent of corpus(55 + minimum, 20_000)) index.apply(agent);
      index.compact();
      const r = random(56);
      const outcomes = { skipped: 0, done: 0, 'gave up': 0 };
      for (let i = 0; i < 60; i++) {
        const words = 1 + r.int(3);
        const q = Array.from({ length: words }, () => r.pick([...COMMON, 'agents', 'dataset', 'deploy', 'Agent Data'])).join(' ');
        const filters: SearchFilters =
          i % 5 === 0
            ? { minTrust: 25 }
            : i % 7 === 0
              ? { type: r.pick(AGENT_TYPES) }
              : i % 3 === 0
                ? { capabilities: ['vision'], minTrust: 25 }
                : {};
        const limit = r.pick([1, 10, 20, 50]);
        const pruned = index.search(q, limit, filters, 'pruned');
        outcomes[pruningStats.threshold]++;
        expect(pruned, JSON.stringify({ minimum, q, limit, filters })).toEqual(index.search(q, limit, filters, 'exhaustive'));
      }
      expect(outcomes.done, JSON.stringify(outcomes)).toBeGreaterThan(0);
      if (minimum < 100) expect(outcomes['gave up'], JSON.stringify(outcomes)).toBeGreaterThan(0);
    }
  });
});
