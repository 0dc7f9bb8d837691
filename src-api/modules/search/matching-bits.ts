import { andInto, countBits, orInto, popcount32, setBit } from './bitsets';
import type { IndexStore } from './index-store';
import type { PruningScratch } from './pruning-scratch';
import type { PlannedTerm, PreparedFilter } from './scoring';

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
  // Few agents with the required capabilities: test each of them rather than AND every word of the bitsets.
  const sparse = sparseMatching(store, plan, filter, matching, words);
  if (sparse !== undefined && (sparse > 0 || plan.length === 1)) return { requireAll: true, total: sparse };
  // One word of one or two frequent terms, no filter (the commonest heavy query): one pass, not five.
  if (SINGLE_WORD.enabled && plan.length === 1 && filter.capabilityStamp === 0 && typeCode < 0 && minTrust === -Infinity) {
    const single = singleWordMatching(store, plan[0]!, matching, words);
    if (single !== undefined) return { requireAll: true, total: single };
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
  // Nobody has them all: agents with any word (only now, as most queries never need it).
  union.fill(0, 0, words);
  for (const term of plan) orWordInto(store, term, union, words);
  matching.set(union.subarray(0, words));
  return { requireAll: false, total: finish(matching) };
}

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

/** `matching` = the word's terms' bitsets (one or two) AND the live slots, in one pass; their count. Undefined otherwise. */
function singleWordMatching(store: IndexStore, term: PlannedTerm, matching: Uint32Array, words: number): number | undefined {
  let first: Uint32Array | undefined;
  let second: Uint32Array | undefined;
  for (const { termId } of term.expansions.terms) {
    if (store.documentFrequency[termId] === 0) continue;
    const bits = store.termBits[termId];
    if (bits === undefined || bits.length < words || second !== undefined) return undefined;
    if (first === undefined) first = bits;
    else second = bits;
  }
  if (first === undefined) return undefined;
  const alive = store.aliveBits;
  let count = 0;
  if (second === undefined) {
    for (let w = 0; w < words; w++) {
      const bits = first[w]! & alive[w]!;
      matching[w] = bits;
      if (bits !== 0) count += popcount32(bits);
    }
  } else {
    for (let w = 0; w < words; w++) {
      const bits = (first[w]! | second[w]!) & alive[w]!;
      matching[w] = bits;
      if (bits !== 0) count += popcount32(bits);
    }
  }
  return count;
}

/** At most one agent in this many has the required capabilities: then they are tested one by one. */
const SPARSE_SHARE = 8;

/**
 * With a capability filter that few agents pass, and every expansion of every word in a bitset: the agents with
 * every word that pass the filters, found by testing each agent with the capabilities; their count.
 * Undefined when the filter or the words do not allow it.
 */
function sparseMatching(
  store: IndexStore,
  plan: PlannedTerm[],
  filter: PreparedFilter,
  matching: Uint32Array,
  words: number,
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
  const { marks, aliveBits, typeCodes, trust } = store;
  matching.fill(0, 0, words);
  let count = 0;
  for (let i = 0; i < candidates.length; i++) {
    const slot = candidates[i]!;
    if (typeCode >= 0 && typeCodes[slot] !== typeCode) continue;
    if (trust[slot]! < minTrust || (!exactCandidates && marks[slot] !== capabilityStamp)) continue;
    const word = slot >>> 5;
    const bit = 1 << (slot & 31);
    if ((aliveBits[word]! & bit) === 0 || (matching[word]! & bit) !== 0) continue;
    let all = true;
    for (let t = 0; t < sets.length && all; t++) {
      const wordSets = sets[t]!;
      let any = false;
      for (let e = 0; e < wordSets.length && !any; e++) any = (wordSets[e]![word]! & bit) !== 0;
      all = any;
    }
    if (!all) continue;
    matching[word] = matching[word]! | bit;
    count++;
  }
  return count;
}

/** Clears the bits of agents of another type or below the trust floor; returns how many bits are left. */
function retainTypeAndTrust(store: IndexStore, bits: Uint32Array, words: number, typeCode: number, minTrust: number): number {
  const { typeCodes, trust } = store;
  let count = 0;
  for (let w = 0; w < words; w++) {
    let word = bits[w]!;
    if (word === 0) continue;
    let kept = word;
    while (word !== 0) {
      const lowest = word & -word;
      const slot = (w << 5) + 31 - Math.clz32(lowest);
      if ((typeCode >= 0 && typeCodes[slot] !== typeCode) || trust[slot]! < minTrust) kept &= ~lowest;
      word ^= lowest;
    }
    bits[w] = kept;
    if (kept !== 0) count += popcount32(kept);
  }
  return count;
}
