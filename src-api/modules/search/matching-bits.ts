import { andInto, countBits, orInto, popcount32, setBit } from './bitsets';
import type { IndexStore } from './index-store';
import type { PruningScratch } from './pruning-scratch';
import type { PlannedTerm, PreparedFilter } from './scoring';
import { andCount } from './simd-bits';
import { slotsOfType } from './type-lists';
import { WORD_UNIONS, type WordUnions } from './word-unions';

/** Which way step 1 found the last query's matches, and how many words of `matching` the sparse path cleared (for tests and the bench). */
export const matchingStats: { path: 'sparse' | 'single word' | 'fused' | 'passes'; cleared: number } = { path: 'passes', cleared: 0 };

/** Step 1 of prunedSearch (pruned.ts): the matching slots into `scratch.matching`; whether they must have every word, and how many there are. */
export function matchingBits(
  store: IndexStore,
  plan: PlannedTerm[],
  filter: PreparedFilter,
  scratch: PruningScratch,
  words: number,
): { requireAll: boolean; total: number } {
  const { matching, union, word: wordBits, capability } = scratch.bitsets(words);
  const { typeCode, minTrust } = filter;
  scratch.matchedCount = -1;
  // Few agents with the required capabilities: test each of them rather than AND every word of the bitsets.
  const sparse = sparseMatching(store, plan, filter, matching, words, scratch);
  if (sparse !== undefined && (sparse > 0 || plan.length === 1)) {
    scratch.matchedCount = sparse;
    matchingStats.path = 'sparse';
    return { requireAll: true, total: sparse };
  }
  // Every other path writes `matching` word by word.
  scratch.matchingListed = -1;
  // One word of one or two frequent terms, no filter (the commonest heavy query): one pass, not five.
  if (SINGLE_WORD.enabled && plan.length === 1 && filter.capabilityStamp === 0 && typeCode < 0 && minTrust === -Infinity) {
    const single = singleWordMatching(store, plan[0]!, matching, words, scratch.wordUnions);
    if (single !== undefined) {
      matchingStats.path = 'single word';
      return { requireAll: true, total: single };
    }
  }
  if (filter.capabilityStamp !== 0) {
    capability.fill(0, 0, words);
    const { exactCandidates, candidates, capabilityStamp } = filter;
    for (const slot of candidates!) if (exactCandidates || store.marks[slot] === capabilityStamp) setBit(capability, slot);
  }
  const finish = (bits: Uint32Array): number => {
    andInto(bits, store.aliveBits, words);
    if (filter.capabilityStamp !== 0) andInto(bits, capability, words);
    if (typeCode >= 0 || minTrust > -Infinity) return retainTypeAndTrust(store, bits, words, typeCode, minTrust);
    return countBits(bits, words);
  };
  // Every expansion of every word in a bitset (words most agents use): one pass over all of them.
  if (FUSED.enabled && plan.length > 1) {
    const fused = filter.capabilityStamp === 0 ? fusedMatching(store, plan, matching, words, scratch.wordUnions) : undefined;
    if (fused !== undefined) {
      matchingStats.path = 'fused';
      const complete = typeCode >= 0 || minTrust > -Infinity ? retainTypeAndTrust(store, matching, words, typeCode, minTrust) : fused;
      if (complete > 0) return { requireAll: true, total: complete };
      return anyWord(store, plan, union, matching, words, finish);
    }
  }
  matchingStats.path = 'passes';
  // Agents with every word: the first word's bits, ANDed with each next word's (its one bitset directly, when it has just one).
  plan.forEach((term, t) => {
    if (t === 0) {
      matching.fill(0, 0, words);
      orWordInto(store, term, matching, words);
      return;
    }
    const only = soleBitset(store, term);
    if (only !== undefined) {
      andInto(matching, only, words);
      return;
    }
    wordBits.fill(0, 0, words);
    orWordInto(store, term, wordBits, words);
    andInto(matching, wordBits, words);
  });
  const complete = finish(matching);
  if (complete > 0 || plan.length === 1) return { requireAll: true, total: complete };
  return anyWord(store, plan, union, matching, words, finish);
}

/** Nobody has every word: agents with any word (only then, as most queries never need it). */
function anyWord(
  store: IndexStore,
  plan: PlannedTerm[],
  union: Uint32Array,
  matching: Uint32Array,
  words: number,
  finish: (bits: Uint32Array) => number,
): { requireAll: boolean; total: number } {
  union.fill(0, 0, words);
  for (const term of plan) orWordInto(store, term, union, words);
  matching.set(union.subarray(0, words));
  return { requireAll: false, total: finish(matching) };
}

/** For measurements and tests: the one-pass AND of several words can be turned off. */
export const FUSED = { enabled: true };

/**
 * Two or three words, each with one or two expansions with agents, every one in a bitset at least `words` long
 * (words most agents use), no capability filter: `matching` = AND over the words of the OR of their expansions'
 * bitsets, AND the live slots, in one pass instead of one per expansion and word; its count. Undefined otherwise.
 * A word's two forms are read as their union, kept from query to query (word-unions.ts). (A word's one bitset
 * stands in as its second: V8 compiles these fixed shapes to tight loops, a loop over a list of bitsets it does not.)
 */
function fusedMatching(
  store: IndexStore,
  plan: PlannedTerm[],
  matching: Uint32Array,
  words: number,
  unions: WordUnions,
): number | undefined {
  if (plan.length > 3) return undefined;
  const sets: Uint32Array[] = [];
  for (const term of plan) {
    const from = sets.length;
    let firstId = -1;
    let forms = 0;
    for (const { termId } of term.expansions.terms) {
      if (store.documentFrequency[termId] === 0) continue;
      const bits = store.termBits[termId];
      if (bits === undefined || bits.length < words || forms++ === 2) return undefined;
      if (forms === 1) firstId = termId;
      else if (WORD_UNIONS.enabled) {
        sets[from] = unions.union(store, unionKey(firstId, termId), [sets[from]!, bits], words);
        continue;
      }
      sets.push(bits);
    }
    if (sets.length === from) return undefined;
    if (sets.length - from === 1) sets.push(sets[from]!);
  }
  const alive = store.aliveBits;
  if (alive.length < words) return undefined;
  const [a, b, c, d, e, f] = sets as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array?, Uint32Array?];
  // The count without a branch on empty words: with words this common most are not empty, and a missed branch
  // costs more than a popcount of 0 (a microbench at 3,125 words: 14.4 -> 10.5 µs; two words alone 8.9).
  let count = 0;
  // Each word one bitset (its union, or its only form, standing in twice): one load a word each.
  if (a === b && c === d && e === f) {
    // In WebAssembly SIMD where it runs (two words: c stands in for the missing third).
    const simd = andCount(alive, a, c, e ?? c, matching, words);
    if (simd !== undefined) return simd;
    if (e === undefined) {
      for (let w = 0; w < words; w++) {
        const bits = alive[w]! & a[w]! & c[w]!;
        matching[w] = bits;
        count += popcount32(bits);
      }
      return count;
    }
    for (let w = 0; w < words; w++) {
      const bits = alive[w]! & a[w]! & c[w]! & e[w]!;
      matching[w] = bits;
      count += popcount32(bits);
    }
    return count;
  }
  if (e === undefined || f === undefined) {
    for (let w = 0; w < words; w++) {
      const bits = alive[w]! & (a[w]! | b[w]!) & (c[w]! | d[w]!);
      matching[w] = bits;
      count += popcount32(bits);
    }
    return count;
  }
  for (let w = 0; w < words; w++) {
    const bits = alive[w]! & (a[w]! | b[w]!) & (c[w]! | d[w]!) & (e[w]! | f[w]!);
    matching[w] = bits;
    count += popcount32(bits);
  }
  return count;
}

/** The key of two terms' bitsets' union (WordUnions), in either order. */
const unionKey = (one: number, other: number): string => (one < other ? `${one} ${other}` : `${other} ${one}`);

/** ORs the slots of every expansion of `term` into `target`: its bitset, or its postings for a term too rare to have one. */
function orWordInto(store: IndexStore, term: PlannedTerm, target: Uint32Array, words: number): void {
  for (const { termId } of term.expansions.terms) {
    if (store.documentFrequency[termId] === 0) continue;
    const bits = store.termBits[termId];
    if (bits !== undefined) {
      orInto(target, bits, words);
      continue;
    }
    if (termId < store.baseTermCount) {
      const end = store.baseOffsets[termId + 1]!;
      for (let p = store.baseOffsets[termId]!; p < end; p++) setBit(target, store.baseSlots[p]!);
    }
    for (let entry = store.tails.head(termId); entry !== 0; entry = store.tails.previous(entry)) setBit(target, store.tails.slot(entry));
  }
}

/** The bitset of the word's only expansion with agents, if it has exactly one and that one has a bitset. */
function soleBitset(store: IndexStore, term: PlannedTerm): Uint32Array | undefined {
  let only: Uint32Array | undefined;
  for (const { termId } of term.expansions.terms) {
    if (store.documentFrequency[termId] === 0) continue;
    const bits = store.termBits[termId];
    if (bits === undefined || only !== undefined) return undefined;
    only = bits;
  }
  return only;
}

/** For measurements: the single-word pass can be turned off. */
export const SINGLE_WORD = { enabled: true };

/** `matching` = the word's terms' bitsets (one, or two as their union) AND the live slots, in one pass; their count. Undefined otherwise. */
function singleWordMatching(
  store: IndexStore,
  term: PlannedTerm,
  matching: Uint32Array,
  words: number,
  unions: WordUnions,
): number | undefined {
  let first: Uint32Array | undefined;
  let second: Uint32Array | undefined;
  let firstId = -1;
  let secondId = -1;
  for (const { termId } of term.expansions.terms) {
    if (store.documentFrequency[termId] === 0) continue;
    const bits = store.termBits[termId];
    if (bits === undefined || bits.length < words || second !== undefined) return undefined;
    if (first === undefined) {
      first = bits;
      firstId = termId;
    } else {
      second = bits;
      secondId = termId;
    }
  }
  if (first === undefined) return undefined;
  // Two forms: their union, kept from query to query (as fusedMatching).
  if (second !== undefined && WORD_UNIONS.enabled) {
    first = unions.union(store, unionKey(firstId, secondId), [first, second], words);
    second = undefined;
  }
  const alive = store.aliveBits;
  let count = 0;
  // No branch on empty words (as fusedMatching); one bitset in WebAssembly SIMD where it runs.
  const simd = second === undefined ? andCount(alive, first, first, first, matching, words) : undefined;
  if (simd !== undefined) return simd;
  if (second === undefined) {
    for (let w = 0; w < words; w++) {
      const bits = first[w]! & alive[w]!;
      matching[w] = bits;
      count += popcount32(bits);
    }
  } else {
    for (let w = 0; w < words; w++) {
      const bits = (first[w]! | second[w]!) & alive[w]!;
      matching[w] = bits;
      count += popcount32(bits);
    }
  }
  return count;
}

/** At most one agent in this many has the required capabilities: then they are tested one by one. */
const SPARSE_SHARE = 8;

/**
 * With a capability filter that few agents pass, and every expansion of every word in a bitset: the agents with
 * every word that pass the filters, found by testing each agent with the capabilities; their count. They are also
 * listed in `scratch.matched` (so the scorer visits them without scanning the bitset's words). The bitsets are
 * tested first: they are small enough to stay in cache, the per-slot columns (type, trust, marks) are not.
 * Undefined when the filter or the words do not allow it.
 */
function sparseMatching(
  store: IndexStore,
  plan: PlannedTerm[],
  filter: PreparedFilter,
  matching: Uint32Array,
  words: number,
  scratch: PruningScratch,
): number | undefined {
  const { candidates, capabilityStamp, exactCandidates, typeCode, minTrust } = filter;
  if (candidates === null || candidates.length * SPARSE_SHARE > store.slotCount) return undefined;
  const sets: Uint32Array[][] = [];
  for (const term of plan) {
    const wordSets: Uint32Array[] = [];
    for (const { termId } of term.expansions.terms) {
      if (store.documentFrequency[termId] === 0) continue;
      const bits = store.termBits[termId];
      if (bits === undefined) return undefined;
      wordSets.push(bits);
    }
    sets.push(wordSets);
  }
  const { marks, aliveBits, trust } = store;
  clearMatching(scratch, matching, words);
  // A type filter: the live agents of that type (one bit each, a few KB that stay in cache), else every live one.
  const live = typeCode >= 0 ? store.typeBits[typeCode] : aliveBits;
  if (live === undefined) return 0;
  // With a type filter, only the candidates of that type (split once per list): the rest would fail the type test.
  const scanned = typeCode >= 0 ? slotsOfType(store, candidates, typeCode) : candidates;
  const matched = scratch.matchedSlots(scanned.length);
  // Up to three words of one or two expansions (a word's one bitset standing in as its second, a first word's for
  // missing words): a fixed shape, which V8 compiles to a tight loop; a loop over a list of bitsets it does not.
  const fixed = FUSED.enabled && sets.length <= 3 && sets.every((wordSets) => wordSets.length >= 1 && wordSets.length <= 2);
  const first = sets[0]!;
  const second = sets[1] ?? first;
  const third = sets[2] ?? first;
  const a = first[0] ?? aliveBits;
  const b = first[first.length - 1] ?? aliveBits;
  const c = second[0] ?? aliveBits;
  const d = second[second.length - 1] ?? aliveBits;
  const e = third[0] ?? aliveBits;
  const f = third[third.length - 1] ?? aliveBits;
  // A floor no agent's trust is under passes every agent: no trust load per candidate.
  const checkTrust = minTrust > store.lowestTrust;
  let count = 0;
  for (let i = 0; i < scanned.length; i++) {
    const slot = scanned[i]!;
    const word = slot >>> 5;
    const bit = 1 << (slot & 31);
    // Live, and of the type now (the split is by the types at the time it was made).
    if ((live[word]! & bit) === 0 || (matching[word]! & bit) !== 0) continue;
    let all = true;
    if (fixed) all = ((a[word]! | b[word]!) & (c[word]! | d[word]!) & (e[word]! | f[word]!) & bit) !== 0;
    else
      for (let t = 0; t < sets.length && all; t++) {
        const wordSets = sets[t]!;
        let any = false;
        for (let x = 0; x < wordSets.length && !any; x++) any = (wordSets[x]![word]! & bit) !== 0;
        all = any;
      }
    if (!all) continue;
    if ((checkTrust && trust[slot]! < minTrust) || (!exactCandidates && marks[slot] !== capabilityStamp)) continue;
    matching[word] = matching[word]! | bit;
    matched[count++] = slot;
  }
  scratch.matchingListed = count;
  return count;
}

/** For measurements and tests: `matching` cleared in one N/32 fill before each sparse query when off. */
export const LISTED_CLEAR = { enabled: true };

/**
 * All of `matching` to zero: when the last query listed its few matches (the sparse path), only their words (a
 * filtered query at 1,000,000 agents lists ~900, where a fill writes 31,250 words); else one fill.
 */
function clearMatching(scratch: PruningScratch, matching: Uint32Array, words: number): void {
  const listed = scratch.matchingListed;
  if (LISTED_CLEAR.enabled && listed >= 0 && listed * 4 < words) {
    const { matched } = scratch;
    for (let i = 0; i < listed; i++) matching[matched[i]! >>> 5] = 0;
    matchingStats.cleared = listed;
  } else {
    matching.fill(0, 0, words);
    matchingStats.cleared = words;
  }
  scratch.matchingListed = 0;
}

/** No slots (a type no agent has). */
const NONE = new Uint32Array(0);

/** Clears the bits of agents of another type or below the trust floor; returns how many bits are left. */
function retainTypeAndTrust(store: IndexStore, bits: Uint32Array, words: number, typeCode: number, minTrust: number): number {
  // The type: an AND with its live agents' bits (none of that type: all cleared).
  if (typeCode >= 0) andInto(bits, store.typeBits[typeCode] ?? NONE, words);
  // A floor no agent's trust is under passes every agent (see sparseMatching).
  if (!(minTrust > store.lowestTrust)) return countBits(bits, words);
  const { trust } = store;
  let count = 0;
  for (let w = 0; w < words; w++) {
    let word = bits[w]!;
    if (word === 0) continue;
    let kept = word;
    while (word !== 0) {
      const lowest = word & -word;
      const slot = (w << 5) + 31 - Math.clz32(lowest);
      if (trust[slot]! < minTrust) kept &= ~lowest;
      word ^= lowest;
    }
    bits[w] = kept;
    if (kept !== 0) count += popcount32(kept);
  }
  return count;
}
