import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { SearchIndex, type IndexableAgent } from '../../src-api/modules/search/search-index';
import { COLLECT, collectStats, NAME_SPLIT } from '../../src-api/modules/search/name-split';
import { IMPACT_ORDER } from '../../src-api/modules/search/impact-orders';
import { RESTRICTED_ORDERS, type IndexStore } from '../../src-api/modules/search/index-store';
import { setReadStats } from '../../src-api/modules/search/set-reads';
import { hasBit } from '../../src-api/modules/search/bitsets';
import { pruningStats } from '../../src-api/modules/search/pruned';
import { ADAPTIVE, BATCHED_VISITS, thresholdStats } from '../../src-api/modules/search/threshold';
import { AGENT_TYPES } from '../../src-api/modules/agents/agents.schemas';
import { seededRandom } from '../../src-api/lib/seeded-random';

// As on the bench's data: names of a unique word, a domain and a role, so a few query words ("data", "agent",
// "security" for "secure") are in thousands of names, and each common word in about a third of the descriptions.
const DOMAINS = ['Data', 'Security', 'Code', 'Cloud', 'Workflow', 'Docs'];
const ROLES = ['Agent', 'Bot', 'Helper', 'Scout'];
const COMMON = ['agent', 'data', 'workflow', 'model', 'platform', 'secure'];
const FILLER = ['it keeps data private', 'teams use it daily', 'results come as json', 'a small secure config'];

function corpus(seed: number, size: number, from = 0): IndexableAgent[] {
  const r = seededRandom(seed);
  return Array.from({ length: size }, (_, n) => {
    const i = from + n;
    const name = `Unit${i} ${r.pick(DOMAINS)} ${r.pick(ROLES)}`;
    const common = COMMON.filter(() => r.int(3) === 0);
    const fillers = Array.from({ length: r.int(4) }, () => r.pick(FILLER));
    return {
      id: `n-${((i * 7919) % 100_000).toString(36).padStart(4, '0')}`,
      name,
      tagline: r.next() < 0.1 ? `${r.pick(COMMON)} tools` : 'does things',
      description: [name, ...fillers, common.length > 0 ? `built around ${common.join(', ')}` : ''].join(' '),
      author: r.next() < 0.05 ? 'Kestrel Security' : `author${r.int(5)}`,
      capabilities: r.next() < 0.2 ? ['data-pipelines'] : [],
      categories: [],
      type: r.pick(AGENT_TYPES),
      trustScore: r.int(3) * 10,
      listed: true,
      status: r.next() < 0.03 ? 'deprecated' : 'active',
    };
  });
}

/** Pruned against exhaustive on two to four common words; how many runs the name split ended (and read on by name set). */
let setReads = 0;
function expectSame(index: SearchIndex, seed: number, count: number): number {
  const r = seededRandom(seed);
  let byNames = 0;
  for (let i = 0; i < count; i++) {
    const q = Array.from({ length: 2 + r.int(3) }, () => r.pick(COMMON)).join(' ');
    const filters = i % 7 === 0 ? { minTrust: 10 } : {};
    const limit = r.pick([1, 5, 20, 50]);
    const pruned = index.search(q, limit, filters, 'pruned');
    if (pruningStats.threshold === 'done' && thresholdStats.byNames) byNames++;
    setReads += thresholdStats.setReads;
    expect(pruned, `seed ${seed}: ${JSON.stringify({ q, limit, filters })}`).toEqual(index.search(q, limit, filters, 'exhaustive'));
  }
  return byNames;
}

describe('threshold algorithm split by the name field', () => {
  // Two words from the start too, to test them (the service starts their split late, see NAME_SPLIT).
  const defaults = { ...NAME_SPLIT };
  // Small chunks (the service reads up to 256 agents a round): on 12,000 agents the runs then take enough rounds to
  // reach every path of the split (sets stopped and resumed, sets reading on by themselves).
  const chunks = { chunk: ADAPTIVE.chunk, chunkEvery: ADAPTIVE.chunkEvery };
  beforeAll(() => {
    NAME_SPLIT.earlyWords = 2;
    Object.assign(ADAPTIVE, { chunk: 32, chunkEvery: 16 });
    return () => {
      Object.assign(NAME_SPLIT, defaults);
      Object.assign(ADAPTIVE, chunks);
    };
  });

  it('equals the exhaustive scorer on words in many names, with the split on and off, name sets reading on by themselves or not', () => {
    onTestFinished(() => {
      Object.assign(NAME_SPLIT, defaults, { earlyWords: 2 });
      COLLECT.enabled = true;
    });
    const index = new SearchIndex();
    for (const agent of corpus(5, 12_000)) index.apply(agent);
    index.compact();
    // The split from the start or late (two words after 64 agents), name sets reading on by themselves or not, or off.
    // A name set counted and listed in one pass (stopping early when too large), or counted, then covered, in two.
    for (const [on, readOn, earlyWords, collect] of [
      [true, true, 2, true],
      [true, true, 2, false],
      [true, true, 3, true],
      [true, false, 2, true],
      [false, false, 2, true],
    ] as const) {
      Object.assign(NAME_SPLIT, { enabled: on, readOn, earlyWords, lateAfter: 64 });
      COLLECT.enabled = collect;
      setReads = 0;
      Object.assign(collectStats, { listed: 0, stopped: 0, words: 0, reached: 0 });
      const byNames = expectSame(index, on ? 51 + earlyWords : 50, 120);
      if (on && collect) expect(collectStats.listed * collectStats.stopped, JSON.stringify(collectStats)).toBeGreaterThan(0);
      else expect(collectStats.listed + collectStats.stopped).toBe(0);
      // Some runs were ended by covering name sets, and name sets read on by themselves (else this would not test it).
      if (on) expect(byNames).toBeGreaterThan(10);
      else expect(byNames).toBe(0);
      if (readOn) expect(setReads).toBeGreaterThan(20);
      else expect(setReads).toBe(0);
    }
    // And with the service's chunks.
    Object.assign(NAME_SPLIT, defaults, { earlyWords: 2, lateAfter: 64 });
    Object.assign(ADAPTIVE, chunks);
    onTestFinished(() => void Object.assign(ADAPTIVE, { chunk: 32, chunkEvery: 16 }));
    setReads = 0;
    expect(expectSame(index, 55, 120)).toBeGreaterThan(10);
    expect(setReads).toBeGreaterThan(0);
  });

  it('scores runs of visits together (impacts read term by term) with the same hits as one at a time', () => {
    const defaultMin = BATCHED_VISITS.min;
    onTestFinished(() => {
      BATCHED_VISITS.min = defaultMin;
    });
    const index = new SearchIndex();
    for (const agent of corpus(8, 12_000)) index.apply(agent);
    index.compact();
    for (const min of [Infinity, 1, defaultMin]) {
      BATCHED_VISITS.min = min;
      let batches = 0;
      const r = seededRandom(60);
      for (let i = 0; i < 60; i++) {
        const q = Array.from({ length: 2 + r.int(3) }, () => r.pick(COMMON)).join(' ');
        const limit = r.pick([1, 5, 20, 50]);
        const pruned = index.search(q, limit, {}, 'pruned');
        batches += thresholdStats.batches;
        expect(pruned, `min ${min}: ${JSON.stringify({ q, limit })}`).toEqual(index.search(q, limit, {}, 'exhaustive'));
      }
      if (min === Infinity) expect(batches).toBe(0);
      else expect(batches).toBeGreaterThan(60);
    }
  });

  it('reads the bitsets of each name set at most once a query: a pass stopped on a set too large to cover resumes where it stopped', () => {
    onTestFinished(() => {
      Object.assign(NAME_SPLIT, defaults, { earlyWords: 2 });
    });
    const index = new SearchIndex();
    for (const agent of corpus(10, 12_000)) index.apply(agent);
    index.compact();
    const words = (12_000 + 31) >>> 5;
    // A small allowance at first: sets stop early, then are read on as it grows.
    Object.assign(NAME_SPLIT, { lateAfter: 64, minAllowance: 16 });
    const r = seededRandom(64);
    let resumed = 0;
    for (let i = 0; i < 120; i++) {
      const q = Array.from({ length: 2 + r.int(3) }, () => r.pick(COMMON)).join(' ');
      Object.assign(collectStats, { listed: 0, stopped: 0, words: 0, reached: 0 });
      const limit = r.pick([1, 5, 20, 50]);
      const pruned = index.search(q, limit, {}, 'pruned');
      const { listed, stopped, words: read, reached } = collectStats;
      expect(pruned, q).toEqual(index.search(q, limit, {}, 'exhaustive'));
      // No word of a set's bitsets read twice (as when each pass started again from the first word).
      expect(read, `${q}: ${JSON.stringify({ listed, stopped, read, reached })}`).toBe(reached);
      expect(reached).toBeLessThanOrEqual(((1 << q.split(' ').length) - 1) * words);
      if (stopped > 0 && listed > 0) resumed++;
    }
    expect(resumed).toBeGreaterThan(5);
  });

  it('keeps which postings are in names across compactions, with agents added, renamed and unlisted', () => {
    const index = new SearchIndex();
    const agents = corpus(6, 10_000);
    for (const agent of agents) index.apply(agent);
    index.compact();
    // Renamed agents and new ones are tails; a second compaction carries the first one's name flags over.
    const r = seededRandom(60);
    for (let i = 0; i < 600; i++) {
      const agent = agents[r.int(agents.length)]!;
      const roll = r.int(3);
      if (roll === 0) index.apply({ ...agent, listed: false });
      else if (roll === 1) index.apply({ ...agent, name: `Renamed${i} ${r.pick(DOMAINS)} ${r.pick(ROLES)}` });
      else index.apply({ ...agent, name: `${agent.name.split(' ')[0]} Plain` });
    }
    for (const agent of corpus(7, 800, 20_000)) index.apply(agent);
    expectSame(index, 61, 60);
    index.compact();
    expect(expectSame(index, 62, 120)).toBeGreaterThan(10);
  });

  it('keeps per term in names its best postings outside names (rest orders), which name sets read: exact with short prefixes too', () => {
    onTestFinished(() => {
      Object.assign(NAME_SPLIT, defaults, { earlyWords: 2 });
      Object.assign(IMPACT_ORDER, { minimum: 4096, share: 1 / 8 });
    });
    Object.assign(NAME_SPLIT, { lateAfter: 64 });
    for (const [minimum, share] of [
      [4096, 1 / 8],
      [64, 1 / 32],
    ] as const) {
      Object.assign(IMPACT_ORDER, { minimum, share });
      const index = new SearchIndex();
      for (const agent of corpus(8, 12_000)) index.apply(agent);
      index.compact();
      const store = (index as unknown as { store: IndexStore }).store;
      let terms = 0;
      for (let termId = 0; termId < store.baseTermCount; termId++) {
        const names = store.nameBits[termId];
        if (names === undefined) {
          expect(store.restOrderSlots[termId]).toBeUndefined();
          continue;
        }
        terms++;
        // Every posting outside names, best first (impacts from the base postings), as many as the impact order keeps.
        const outside = new Map<number, number>();
        for (let p = store.baseOffsets[termId]!; p < store.baseOffsets[termId + 1]!; p++) {
          if (!hasBit(store.baseNameBits, p)) outside.set(store.baseSlots[p]!, store.baseImpacts[p]!);
        }
        const slots = store.restOrderSlots[termId]!;
        const values = store.restOrderValues[termId]!;
        expect(slots.length).toBe(Math.min(outside.size, Math.max(minimum, Math.ceil(outside.size * share))));
        const best = [...outside.values()].sort((a, b) => b - a);
        for (let i = 0; i < slots.length; i++) {
          expect(hasBit(names, slots[i]!)).toBe(false);
          expect(values[i]).toBe(outside.get(slots[i]!));
          expect(values[i]).toBe(best[i]);
        }
        if (slots.length > 0) expect(values[0]).toBe(store.restMaxes[termId]);
      }
      expect(terms).toBeGreaterThan(3);
      setReads = 0;
      expect(expectSame(index, 63, 120)).toBeGreaterThan(10);
      expect(setReads).toBeGreaterThan(20);
    }
  });

  it("reads a name set's orders cut to its word's names: the same hits for a fraction of the postings, cuts made on first use and gone at compaction", () => {
    onTestFinished(() => {
      Object.assign(NAME_SPLIT, defaults, { earlyWords: 2 });
      RESTRICTED_ORDERS.enabled = true;
    });
    Object.assign(NAME_SPLIT, { lateAfter: 64 });
    const index = new SearchIndex();
    for (const agent of corpus(10, 12_000)) index.apply(agent);
    index.compact();
    const store = (index as unknown as { store: IndexStore }).store;
    const postings: number[] = [];
    for (const enabled of [false, true]) {
      RESTRICTED_ORDERS.enabled = enabled;
      setReads = setReadStats.postings = 0;
      expect(expectSame(index, 64, 120)).toBeGreaterThan(10);
      expect(setReads).toBeGreaterThan(20);
      postings.push(setReadStats.postings);
      expect(store.restOrdersWithinCount > 0).toBe(enabled);
    }
    // A word in a quarter of the names or fewer: its sets pass over a fraction of what they did.
    expect(postings[1]! * 2, JSON.stringify(postings)).toBeLessThan(postings[0]!);
    // Each cut: its term's rest order (its impact order when in no name), in order, kept to the word's name slots.
    let cuts = 0;
    for (const [nameKey, byTerm] of store.restOrdersWithin) {
      const names = new Uint32Array(store.nameBits[0]?.length ?? (store.baseSlotCount + 31) >>> 5);
      for (const termId of nameKey.split(',').map(Number)) {
        for (let w = 0; w < names.length; w++) names[w] = names[w]! | store.nameBits[termId]![w]!;
      }
      byTerm.forEach((cut, termId) => {
        cuts++;
        const slots = store.restOrderSlots[termId] ?? store.impactOrderSlots[termId]!;
        const values = store.restOrderValues[termId] ?? store.impactOrderValues[termId]!;
        const kept = [...slots.keys()].filter((i) => hasBit(names, slots[i]!));
        expect([...cut.slots]).toEqual(kept.map((i) => slots[i]));
        expect([...cut.values]).toEqual(kept.map((i) => values[i]));
      });
    }
    expect(cuts).toBe(store.restOrdersWithinCount);
    // Past the cap none are made, and the hits stay the same.
    index.compact();
    expect(store.restOrdersWithin.size + store.restOrdersWithinCount).toBe(0);
    const max = RESTRICTED_ORDERS.max;
    onTestFinished(() => {
      RESTRICTED_ORDERS.max = max;
    });
    RESTRICTED_ORDERS.max = 2;
    expectSame(index, 65, 60);
    expect(store.restOrdersWithinCount).toBe(2);
  });

  it('splits no run whose words are in no name (every agent is in the set of none: nothing to gain)', () => {
    const index = new SearchIndex();
    for (const agent of corpus(9, 4_000)) index.apply(agent);
    index.compact();
    // "model" and "platform" are in no name; "data" is in many.
    for (const [q, split] of [
      ['model platform', false],
      ['platform model', false],
      ['data model', true],
      ['model platform data', true],
    ] as const) {
      expect(index.search(q, 20, {}, 'pruned'), q).toEqual(index.search(q, 20, {}, 'exhaustive'));
      expect(pruningStats.threshold, q).not.toBe('skipped');
      expect(thresholdStats.split, q).toBe(split);
    }
  });
});
