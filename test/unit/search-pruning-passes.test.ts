import { afterEach, describe, expect, it } from 'vitest';
import { SearchIndex, type IndexableAgent, type SearchFilters } from '../../src-api/modules/search/search-index';
import { NAME_CHECK, SLOT_GATES } from '../../src-api/modules/search/block-scorer';
import { FUSED, LISTED_CLEAR, matchingBits, matchingStats } from '../../src-api/modules/search/matching-bits';
import type { IndexStore } from '../../src-api/modules/search/index-store';
import type { QueryExpander } from '../../src-api/modules/search/expansion';
import { scratchOf } from '../../src-api/modules/search/pruning-scratch';
import { prepareFilter, type PlannedTerm } from '../../src-api/modules/search/scoring';
import { parseQuery } from '../../src-api/modules/search/text';
import { LISTED, pruningStats } from '../../src-api/modules/search/pruned';
import { AGENT_TYPES } from '../../src-api/modules/agents/agents.schemas';
import { seededRandom } from '../../src-api/lib/seeded-random';
import { SIMD_AND } from '../../src-api/modules/search/simd-bits';

// Step 1's one-pass AND of two or three words' bitsets (matching-bits' fusedMatching), the few matches of a rare
// capability scored from their list (pruned.ts scoreListed), and the name key read only when some agent's name is
// the query (block-scorer's checkNames): each on and off, every answer equal to the exhaustive scorer's.
const DOMAINS = ['Data', 'Security', 'Code', 'Cloud', 'Workflow', 'Docs'];
const ROLES = ['Agent', 'Bot', 'Helper', 'Scout'];
const COMMON = ['agent', 'data', 'workflow', 'model', 'platform', 'secure'];
const FILLER = ['it keeps data private', 'teams use it daily', 'results come as json', 'a small secure config'];
/** Names that are exactly a query of common words: they get the exact-name 1 (the name key must be read then). */
const EXACT = ['Data Secure', 'Agent Data', 'Secure', 'Workflow Model Platform'];

function corpus(seed: number, size: number, prefix = 'p'): IndexableAgent[] {
  const r = seededRandom(seed);
  return Array.from({ length: size }, (_, i) => {
    const name = r.next() < 0.01 ? r.pick(EXACT) : `Unit${i} ${r.pick(DOMAINS)} ${r.pick(ROLES)}`;
    const common = COMMON.filter(() => r.int(3) === 0);
    const fillers = Array.from({ length: r.int(4) }, () => r.pick(FILLER));
    const capabilities = [...(r.next() < 0.04 ? ['vision'] : []), ...(r.next() < 0.2 ? ['data-pipelines'] : [])];
    return {
      id: `${prefix}-${((i * 7919) % 100_000).toString(36).padStart(4, '0')}`,
      name,
      tagline: r.next() < 0.1 ? `${r.pick(COMMON)} tools` : 'does things',
      description: [name, ...fillers, common.length > 0 ? `built around ${common.join(', ')}` : ''].join(' '),
      author: `author${r.int(5)}`,
      capabilities,
      categories: [],
      type: r.pick(AGENT_TYPES),
      trustScore: r.int(3) * 10,
      listed: true,
      status: r.next() < 0.03 ? 'deprecated' : 'active',
    };
  });
}

const FILTERS: SearchFilters[] = [
  {},
  { minTrust: 10 },
  { type: 'assistant' },
  { capabilities: ['vision'] },
  { capabilities: ['vision'], type: 'coding', minTrust: 10 },
  { capabilities: ['vision', 'data-pipelines'] },
  { capabilities: ['data-pipelines'] },
];

/** Pruned against exhaustive on one to four common words (exact names among them) under each filter; which paths ran. */
function expectSame(index: SearchIndex, seed: number, count: number): Record<string, number> {
  const r = seededRandom(seed);
  const paths: Record<string, number> = { fused: 0, listed: 0, named: 0 };
  for (let i = 0; i < count; i++) {
    const q = r.next() < 0.2 ? r.pick(EXACT).toLowerCase() : Array.from({ length: 1 + r.int(4) }, () => r.pick(COMMON)).join(' ');
    const filters = FILTERS[i % FILTERS.length]!;
    const limit = r.pick([1, 5, 20, 50]);
    const pruned = index.search(q, limit, filters, 'pruned');
    if (matchingStats.path === 'fused') paths.fused!++;
    if (pruningStats.listed) paths.listed!++;
    if (EXACT.some((name) => name.toLowerCase() === q)) paths.named!++;
    expect(pruned, `seed ${seed}: ${JSON.stringify({ q, limit, filters })}`).toEqual(index.search(q, limit, filters, 'exhaustive'));
  }
  return paths;
}

describe('pruned top-k: one-pass matching bits, listed matches, name keys read only when needed', () => {
  afterEach(() => {
    FUSED.enabled = true;
    LISTED.enabled = true;
    NAME_CHECK.skip = true;
    LISTED_CLEAR.enabled = true;
    SLOT_GATES.enabled = true;
    LISTED.batched = true;
    SIMD_AND.enabled = true;
  });

  it('equals the exhaustive scorer with each path on and off, before and after agents are added, changed and unlisted', () => {
    for (const seed of [1, 2]) {
      const index = new SearchIndex();
      for (const agent of corpus(seed, 8_000)) index.apply(agent);
      index.compact();
      const runAll = (querySeed: number): Record<string, number> => {
        let used: Record<string, number> = {};
        for (const on of [true, false]) {
          FUSED.enabled = on;
          LISTED.enabled = on;
          NAME_CHECK.skip = on;
          LISTED_CLEAR.enabled = on;
          SLOT_GATES.enabled = on;
          LISTED.batched = on;
          SIMD_AND.enabled = on;
          const paths = expectSame(index, querySeed, 120);
          if (on) used = paths;
        }
        return used;
      };
      const before = runAll(seed * 10);
      expect(before.fused, JSON.stringify(before)).toBeGreaterThan(10);
      expect(before.listed, JSON.stringify(before)).toBeGreaterThan(10);
      expect(before.named, JSON.stringify(before)).toBeGreaterThan(5);

      // Tail slots (added or changed since the compaction, exact names among them) and tombstones (unlisted).
      const r = seededRandom(seed + 100);
      for (const [i, agent] of corpus(seed + 200, 700, 'q').entries()) {
        if (i % 3 === 0) index.apply({ ...agent, listed: r.next() < 0.5 });
        else index.apply({ ...agent, id: `p-${((r.int(8_000) * 7919) % 100_000).toString(36).padStart(4, '0')}` });
      }
      const after = runAll(seed * 10 + 1);
      expect(after.fused, JSON.stringify(after)).toBeGreaterThan(10);
      expect(after.listed, JSON.stringify(after)).toBeGreaterThan(10);
    }
  });

  it('gives the same matching bits and count in one pass as in a pass per expansion, whichever word has two expansions', () => {
    const index = new SearchIndex();
    for (const agent of corpus(3, 8_000)) index.apply(agent);
    index.compact();
    const { store, expander } = index as unknown as { store: IndexStore; expander: QueryExpander };
    // Each word as planned when last (completions: "data" gains "datasets"-like forms) or not; stems ("secure":
    // secure and security) give two expansions.
    const word = (text: string, last: boolean): PlannedTerm => ({
      bit: 0,
      expansions: expander.expand(parseQuery(text, 1).terms[0]!, last),
      postings: 0,
    });
    const pair = word('secure', false);
    expect(pair.expansions.terms.filter(({ termId }) => store.termBits[termId] !== undefined).length).toBe(2);
    const plans = [
      [pair, word('model', false)],
      [word('model', false), pair],
      [pair, word('data', true), word('agent', false)],
      [word('workflow', false), word('platform', false), pair],
    ];
    const compare = (): void => {
      const words = (store.slotCount + 31) >>> 5;
      const filter = prepareFilter(store, {})!;
      for (const plan of plans) {
        FUSED.enabled = false;
        const passes = matchingBits(store, plan, filter, scratchOf(store), words);
        const bits = scratchOf(store).matching.slice(0, words);
        FUSED.enabled = true;
        // In WebAssembly SIMD and in JavaScript.
        for (const simd of [true, false]) {
          SIMD_AND.enabled = simd;
          const fused = matchingBits(store, plan, filter, scratchOf(store), words);
          expect(matchingStats.path).toBe('fused');
          expect(fused).toEqual(passes);
          expect(scratchOf(store).matching.slice(0, words)).toEqual(bits);
        }
      }
    };
    compare();
    // Tombstones and tail slots.
    const r = seededRandom(33);
    for (const [i, agent] of corpus(34, 500, 'q').entries()) {
      if (i % 3 === 0) index.apply({ ...agent, listed: false, id: `p-${((r.int(8_000) * 7919) % 100_000).toString(36).padStart(4, '0')}` });
      else index.apply(agent);
    }
    compare();
  });

  it('leaves out the trust test only while no agent is under the floor: trusts lowered in place and new agents still count', () => {
    const agents = corpus(5, 6_000).map((agent) => ({ ...agent, trustScore: 20 }));
    const filters: SearchFilters = { capabilities: ['vision'], minTrust: 20 };
    const expectExact = (index: SearchIndex): number => {
      let total = 0;
      for (const q of ['data', 'secure', 'agent data', 'workflow model platform']) {
        const pruned = index.search(q, 20, filters, 'pruned');
        expect(matchingStats.path).toBe('sparse');
        expect(pruned, q).toEqual(index.search(q, 20, filters, 'exhaustive'));
        total += pruned.total;
      }
      return total;
    };
    const fresh = (): SearchIndex => {
      const index = new SearchIndex();
      for (const agent of agents) index.apply(agent);
      index.compact();
      return index;
    };
    // Half the vision agents lose trust in place (same text: no new slot).
    const inPlace = fresh();
    const before = expectExact(inPlace);
    expect(before).toBeGreaterThan(20);
    agents
      .filter((agent) => agent.capabilities.includes('vision'))
      .forEach((agent, i) => i % 2 === 0 && inPlace.apply({ ...agent, trustScore: 10 }));
    expect(expectExact(inPlace)).toBeLessThan(before);
    // New agents under the floor, then above it.
    const added = fresh();
    const newcomers = corpus(6, 300, 'q');
    for (const agent of newcomers) added.apply({ ...agent, trustScore: 5 });
    expect(expectExact(added)).toBe(before);
    for (const agent of newcomers) added.apply({ ...agent, trustScore: 30 });
    expect(expectExact(added)).toBeGreaterThan(before);
  });

  it('keeps type filters exact while types change in place, agents come and go, and after a compaction', () => {
    const agents = corpus(7, 6_000);
    const index = new SearchIndex();
    for (const agent of agents) index.apply(agent);
    index.compact();
    // Per type, with the rare capability (the sparse path, its candidates split by type) and without (an AND with the type's bits).
    const expectExact = (): number[] => {
      const totals: number[] = [];
      let sparse = 0;
      for (const type of AGENT_TYPES) {
        for (const filters of [
          { type, capabilities: ['vision'] },
          { type, capabilities: ['vision'], minTrust: 10 },
          { type },
        ] as SearchFilters[]) {
          for (const q of ['data', 'agent data', 'secure model']) {
            const pruned = index.search(q, 20, filters, 'pruned');
            // (No match with every word: the sparse path hands over to the passes, for agents with any word.)
            if (filters.capabilities && matchingStats.path === 'sparse') sparse++;
            expect(pruned, JSON.stringify({ q, filters })).toEqual(index.search(q, 20, filters, 'exhaustive'));
            totals.push(pruned.total);
          }
        }
      }
      expect(sparse).toBeGreaterThan(AGENT_TYPES.length * 4);
      return totals;
    };
    const before = expectExact();
    // Half the vision agents change type in place (same text: same slot), so each type's list gains and loses agents.
    const vision = agents.filter((agent) => agent.capabilities.includes('vision'));
    const next = (type: string) => AGENT_TYPES[(AGENT_TYPES.indexOf(type as never) + 1) % AGENT_TYPES.length]!;
    vision.forEach((agent, i) => i % 2 === 0 && index.apply({ ...agent, type: next(agent.type) }));
    const changed = expectExact();
    expect(changed).not.toEqual(before);
    // New agents (tail slots) of each type, and some unlisted.
    for (const [i, agent] of corpus(8, 400, 'q').entries())
      index.apply({ ...agent, capabilities: ['vision'], type: AGENT_TYPES[i % AGENT_TYPES.length]! });
    vision.forEach((agent, i) => i % 3 === 1 && index.apply({ ...agent, listed: false }));
    const added = expectExact();
    expect(added).not.toEqual(changed);
    index.compact();
    expect(expectExact()).toEqual(added);
  });
});

describe('a filtered query that lists its few matches', () => {
  afterEach(() => {
    LISTED_CLEAR.enabled = true;
    SLOT_GATES.enabled = true;
    LISTED.batched = true;
    SIMD_AND.enabled = true;
  });

  it('clears only the words of the last listed matches, whatever path wrote the bits before', () => {
    const index = new SearchIndex();
    for (const agent of corpus(9, 8_000)) index.apply(agent);
    index.compact();
    const { store } = index as unknown as { store: IndexStore };
    const words = (store.slotCount + 31) >>> 5;
    const queries: [string, SearchFilters][] = [
      ['data', { capabilities: ['vision'] }],
      ['agent data', { capabilities: ['vision'], minTrust: 10 }],
      ['secure', {}],
      ['model', { capabilities: ['vision'], type: 'coding' }],
      ['data', { capabilities: ['vision'], type: 'assistant', minTrust: 10 }],
      ['workflow model', {}],
      ['platform', { capabilities: ['vision'], type: 'coding' }],
      ['agent', { capabilities: ['vision'], type: 'assistant' }],
      ['agent data secure', { capabilities: ['data-pipelines'], type: 'assistant' }],
      ['secure', { capabilities: ['vision'] }],
    ];
    let previous: { sparse: boolean; listed: number } = { sparse: false, listed: 0 };
    let listedClears = 0;
    for (let round = 0; round < 3; round++) {
      for (const [q, filters] of queries) {
        const pruned = index.search(q, 20, filters, 'pruned');
        const { path, cleared } = matchingStats;
        // Read now: the exhaustive scorer below leaves the bits alone, the next pruned query rewrites them.
        const bits = scratchOf(store).matching.slice(0, words);
        expect(pruned, JSON.stringify({ q, filters })).toEqual(index.search(q, 20, filters, 'exhaustive'));
        if (path !== 'sparse') {
          previous = { sparse: false, listed: 0 };
          continue;
        }
        // The bits are exactly the listed matches: nothing left over from the query before.
        const expected = new Uint32Array(words);
        const { matched, matchedCount } = scratchOf(store);
        for (let i = 0; i < matchedCount; i++) expected[matched[i]! >>> 5]! |= 1 << (matched[i]! & 31);
        expect(bits).toEqual(expected);
        expect(matchedCount).toBe(pruned.total);
        // After a sparse query with few matches, their words; else all of them.
        if (previous.sparse && previous.listed * 4 < words) {
          expect(cleared).toBe(previous.listed);
          listedClears++;
        } else expect(cleared).toBe(words);
        previous = { sparse: true, listed: matchedCount };
      }
    }
    expect(listedClears).toBeGreaterThan(3);
  });

  it("reads a word's impacts only for the expansions a listed match has (its bit), with the same answers", () => {
    // "agent" and "agents" each in over a quarter of the agents (each with an impact column), some in both.
    const r = seededRandom(12);
    const agents: IndexableAgent[] = Array.from({ length: 40_000 }, (_, i) => {
      const form = r.int(3);
      return {
        id: `g-${i.toString(36).padStart(4, '0')}`,
        name: `Gate${i} ${r.pick(DOMAINS)}`,
        tagline: 'does things',
        description: `${form === 1 ? '' : 'an agent for'} ${r.pick(FILLER)} ${form === 0 ? '' : 'with agents'}`,
        author: `author${r.int(5)}`,
        capabilities: r.next() < 0.001 ? ['vision'] : [],
        categories: [],
        type: r.pick(AGENT_TYPES),
        trustScore: r.int(3) * 10,
        listed: true,
        status: 'active',
      };
    });
    const index = new SearchIndex();
    for (const agent of agents) index.apply(agent);
    index.compact();
    const { store, expander } = index as unknown as { store: IndexStore; expander: QueryExpander };
    const termIds = expander
      .expand(parseQuery('agent', 1).terms[0]!, true)
      .terms.map(({ termId }) => termId)
      .filter((termId) => store.impactColumn(termId) !== undefined);
    expect(termIds.length).toBe(2);
    // Each column counts the slots read from it.
    const reads = new Map<number, number>();
    for (const termId of termIds) {
      const column = store.impactColumns[termId]!;
      store.impactColumns[termId] = new Proxy(column, {
        get(target, key) {
          if (typeof key === 'string' && /^[0-9]+$/.test(key)) reads.set(termId, (reads.get(termId) ?? 0) + 1);
          const value = Reflect.get(target, key, target) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    }
    const filters: SearchFilters = { capabilities: ['vision'] };
    for (const [gated, batched] of [
      [true, true],
      [true, false],
      [false, true],
      [false, false],
    ]) {
      SLOT_GATES.enabled = gated!;
      LISTED.batched = batched!;
      reads.clear();
      const pruned = index.search('agent', 50, filters, 'pruned');
      expect(matchingStats.path).toBe('sparse');
      expect(pruningStats.listed).toBe(true);
      expect(pruned).toEqual(index.search('agent', 50, filters, 'exhaustive'));
      const { matched, matchedCount } = scratchOf(store);
      expect(matchedCount).toBeGreaterThan(20);
      for (const termId of termIds) {
        const bits = store.termBits[termId]!;
        let having = 0;
        for (let i = 0; i < matchedCount; i++) if ((bits[matched[i]! >>> 5]! & (1 << (matched[i]! & 31))) !== 0) having++;
        expect(having).toBeLessThan(matchedCount);
        expect(reads.get(termId) ?? 0).toBe(gated ? having : matchedCount);
      }
    }
  });
});

describe('impact columns', () => {
  it('are made for a frequent term on its first query, hold its impacts, and go with the next compaction', () => {
    const index = new SearchIndex();
    for (const agent of corpus(21, 8_000)) index.apply(agent);
    index.compact();
    const { store, expander } = index as unknown as { store: IndexStore; expander: QueryExpander };
    const made = () => store.impactColumns.flatMap((column, termId) => (column === undefined ? [] : [termId]));
    const termsOf = (word: string) => expander.expand(parseQuery(word, 1).terms[0]!, true).terms.map(({ termId }) => termId);
    expect(made()).toEqual([]);

    expect(index.search('agent data', 20, {}, 'pruned')).toEqual(index.search('agent data', 20, {}, 'exhaustive'));
    const columns = made();
    expect(columns.length).toBeGreaterThan(0);
    for (const termId of columns) {
      expect([...termsOf('agent'), ...termsOf('data')]).toContain(termId);
      const column = store.impactColumns[termId]!;
      let postings = 0;
      for (let p = store.baseOffsets[termId]!; p < store.baseOffsets[termId + 1]!; p++, postings++) {
        expect(column[store.baseSlots[p]!]).toBe(store.baseImpacts[p]);
      }
      // Every other slot reads 0 (no posting).
      expect(column.filter((impact) => impact !== 0).length).toBe(postings);
    }
    // A word as frequent that no query used has none until asked.
    for (const termId of termsOf('workflow')) expect(store.impactColumns[termId]).toBeUndefined();
    expect(termsOf('workflow').some((termId) => store.impactColumn(termId) !== undefined)).toBe(true);

    index.apply({ ...corpus(21, 1)[0]!, description: 'agent data workflow' });
    index.compact();
    expect(made()).toEqual([]);
    expect(index.search('agent data', 20, {}, 'pruned')).toEqual(index.search('agent data', 20, {}, 'exhaustive'));
  });
});
