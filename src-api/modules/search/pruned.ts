import { BLOCK_BITS, BLOCK_SIZE, forEachNamed } from './accelerators';
import { andInto, countBits, grownBits, hasBit, orInto, popcount32, retainBits, setBit } from './bitsets';
import { DEPRECATED_FACTOR, IMPACT_SCALE, type IndexStore } from './index-store';
import { publicHits, termWeight, type PlannedTerm, type PreparedFilter, type SearchHits } from './scoring';
import type { ParsedQuery } from './text';
import { TopK } from './top-k';

/**
 * Top-k over words most agents use without scoring most of their postings:
 * block-max pruning (as in Mallia, Suel, Tonellotto, "Faster Learned Sparse
 * Retrieval with Block-Max Pruning", SIGIR 2024) over the base postings,
 * with exact totals from bitsets.
 *
 * 1. The matching agents as a bitset: per query word the OR of its
 *    expansions' bitsets (postings scattered for terms too rare to have one),
 *    then AND over the words (OR when no agent has them all), live and
 *    passing the filters. `total` is its bit count.
 * 2. Agents added since the last compaction (tail postings, all in slots at
 *    or above `baseSlotCount`) are scored in full.
 * 3. The base slots fall into blocks of BLOCK_SIZE. A block's bound is the
 *    score its best agent could have: per word the best expansion weight ×
 *    the block's highest impact, summed as the real score sums them. Blocks
 *    are scored best bound first; once the k-th best score so far is above
 *    the next bound, no remaining block can change the result, and we stop.
 *    (Equal is not enough: an agent tying the k-th score may win on trust.)
 *
 * Every score is computed by the same float operations in the same order as
 * the exhaustive scorer, and each bound by the same operations on numbers
 * at least as large, so hits, order and total are exactly the exhaustive
 * scorer's (test/unit/search-pruning.test.ts checks it on random corpora).
 */
/** Blocks of the last pruned query and how many of them were scored (for tests and the bench). */
export const pruningStats = { blocks: 0, scored: 0 };

export function prunedSearch(
  store: IndexStore,
  plan: PlannedTerm[],
  parsed: ParsedQuery,
  limit: number,
  filter: PreparedFilter,
): SearchHits {
  const termCount = plan.length;
  const scratch = scratchOf(store);
  const words = (store.slotCount + 31) >>> 5;
  const { requireAll, total } = matchingBits(store, plan, filter, scratch, words);
  const matching = scratch.matching;
  const top = new TopK(limit, store.trust, store.docIds);
  pruningStats.blocks = 0;
  pruningStats.scored = 0;
  if (total === 0 || limit <= 0) return { hits: [], total };

  const weights = plan.map(({ expansions }) =>
    expansions.terms.map(({ termId, factor }) =>
      store.documentFrequency[termId] === 0 ? 0 : termWeight(store, expansions, termId, factor),
    ),
  );
  const scorer = new BlockScorer(store, plan, weights, matching, parsed.nameKey, requireAll, scratch);

  // 2. Tail slots, in full.
  scorer.scoreTails(top);

  // 3. Base blocks. A block is one word of the bitsets (BLOCK_SIZE = 32), so "any match in the block" is one load.
  const blocks = (store.baseSlotCount + BLOCK_SIZE - 1) >>> BLOCK_BITS;
  if (blocks === 0) return { hits: publicHits(store, top), total };
  pruningStats.blocks = blocks;
  let nonEmpty = 0;
  for (let block = 0; block < blocks; block++) if (matching[block] !== 0) nonEmpty++;
  if (nonEmpty * DIRECT_SHARE <= blocks) {
    // Few blocks hold a match (filters, or words that rarely meet): scoring them is cheaper than bounding every block.
    for (let block = 0; block < blocks; block++) if (matching[block] !== 0) scorer.scoreBlock(block, top);
    pruningStats.scored = nonEmpty;
    return { hits: publicHits(store, top), total };
  }

  // One word standing for one term: its blocks by block maximum are stored, so no bound is computed and no heap built.
  const order = termCount === 1 && scorer.termIds.length === 1 ? store.blockOrders[scorer.termIds[0]!] : undefined;
  if (order !== undefined) {
    inStoredOrder(order, scorer.termIds[0]!, scorer.scaled[0]!);
    return { hits: publicHits(store, top), total };
  }

  // Best bound first.
  const bounds = scratch.bounds(termCount, blocks);
  for (let t = 0; t < termCount; t++) termBlockBounds(store, plan[t]!, weights[t]!, bounds[t]!, blocks);
  const nameBonus = scratch.nameBonus(blocks);
  forEachNamed(store, parsed.nameKey, (slot) => {
    if (slot < store.baseSlotCount && hasBit(matching, slot)) nameBonus[slot >>> BLOCK_BITS] = 1;
  });
  const heap = scratch.blockHeap(blocks);
  const keys = scratch.blockKeys(blocks);
  // Word by word, in plan order (as the score sums them): each block's sum of bounds and how many words it may have.
  const sums = scratch.boundSums(blocks);
  const present = scratch.boundWords(blocks);
  for (let t = 0; t < termCount; t++) {
    const termBounds = bounds[t]!;
    for (let block = 0; block < blocks; block++) {
      const bound = termBounds[block]!;
      if (bound > 0) {
        sums[block] = sums[block]! + bound;
        present[block] = present[block]! + 1;
      }
    }
  }
  for (let block = 0; block < blocks; block++) {
    const sum = sums[block]!;
    const words = present[block]!;
    sums[block] = 0;
    present[block] = 0;
    if (matching[block] === 0) {
      keys[block] = -1;
      continue;
    }
    // As the score: (matched words + exact name) + min(0.9999, sum / words).
    const key = (requireAll ? termCount : words) + nameBonus[block]! + Math.min(0.9999, sum / termCount);
    keys[block] = key;
    heap.push(block, key);
  }
  heap.heapify();
  // Best bound first, for a while: that raises the bar (the k-th best score) fastest.
  let popped = 0;
  while (heap.size > 0 && popped < BOUND_ORDER_BLOCKS) {
    if (top.full && heap.topKey < top.worstScore) return { hits: publicHits(store, top), total: finish(popped) };
    const block = heap.pop();
    scorer.scoreBlock(block, top);
    keys[block] = -1;
    popped++;
  }
  // Then the blocks still above the bar in slot order: the postings and impact columns are read front to back,
  // which costs far less than jumping between blocks when many blocks are left (words that each are in many agents).
  let swept = 0;
  if (heap.size > 0) {
    for (let block = 0; block < blocks; block++) {
      const key = keys[block]!;
      if (key < 0 || (top.full && key < top.worstScore)) continue;
      scorer.scoreBlock(block, top);
      swept++;
    }
  }
  return { hits: publicHits(store, top), total: finish(popped + swept) };

  /** Blocks by the term's block maximum, best first: each key is what the bound-order path computes (float32 bound). */
  function inStoredOrder(blockOrder: Int32Array, termId: number, weight: number): void {
    const maxes = store.blockMaxes[termId]!;
    const bound = scratch.bounds(1, 1)[0]!;
    let scored = 0;
    // An exact name adds 1 to its block's key: those few blocks first.
    const named: number[] = [];
    forEachNamed(store, parsed.nameKey, (slot) => {
      const block = slot >>> BLOCK_BITS;
      if (slot < store.baseSlotCount && hasBit(matching, slot) && !named.includes(block)) named.push(block);
    });
    for (const block of named) {
      scorer.scoreBlock(block, top);
      scored++;
    }
    for (let i = 0; i < blockOrder.length; i++) {
      const block = blockOrder[i]!;
      if (matching[block] === 0 || (named.length > 0 && named.includes(block))) continue;
      bound[0] = weight * maxes[block]!;
      const key = 1 + Math.min(0.9999, bound[0]! / 1);
      if (top.full && key < top.worstScore) break;
      scorer.scoreBlock(block, top);
      scored++;
    }
    finish(scored);
  }

  function finish(scored: number): number {
    pruningStats.scored = scored;
    return total;
  }
}

/** Blocks scored in bound order before the rest are swept in slot order. */
export const BOUND_ORDER_BLOCKS = 64;

/** Score the blocks holding a match directly (no bounds, no heap) when at most one block in this many holds one. */
const DIRECT_SHARE = 16;

/** Step 1: the matching slots into `scratch.matching`; whether they must have every word, and how many there are. */
function matchingBits(
  store: IndexStore,
  plan: PlannedTerm[],
  filter: PreparedFilter,
  scratch: PruningScratch,
  words: number,
): { requireAll: boolean; total: number } {
  const { matching, union, word: wordBits, capability } = scratch.bitsets(words);
  if (filter.capabilityStamp !== 0) {
    capability.fill(0, 0, words);
    for (const slot of filter.candidates!) if (store.marks[slot] === filter.capabilityStamp) setBit(capability, slot);
  }
  const { typeCode, minTrust } = filter;
  const finish = (bits: Uint32Array): number => {
    andInto(bits, store.aliveBits, words);
    if (filter.capabilityStamp !== 0) andInto(bits, capability, words);
    if (typeCode >= 0 || minTrust > -Infinity) {
      const { typeCodes, trust } = store;
      retainBits(bits, words, (slot) => (typeCode < 0 || typeCodes[slot] === typeCode) && trust[slot]! >= minTrust);
    }
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

/**
 * Per block, the best score this query word can give any agent there (0: none of its expansions has postings there).
 * Float32, as the scorer keeps each word's best score (`termBest`): rounding is monotone, so the bound still holds after it.
 */
function termBlockBounds(store: IndexStore, term: PlannedTerm, weights: number[], bounds: Float32Array, blocks: number): void {
  bounds.fill(0, 0, blocks);
  term.expansions.terms.forEach(({ termId }, e) => {
    const weight = weights[e]!;
    if (weight === 0 || termId >= store.baseTermCount) return;
    const scaled = weight / IMPACT_SCALE;
    const maxes = store.blockMaxes[termId];
    if (maxes !== undefined) {
      for (let block = 0; block < blocks; block++) {
        const bound = scaled * maxes[block]!;
        if (bound > bounds[block]!) bounds[block] = bound;
      }
      return;
    }
    // Too rare for block maxima: its few postings give them.
    const { baseSlots, baseImpacts } = store;
    for (let p = store.baseOffsets[termId]!; p < store.baseOffsets[termId + 1]!; p++) {
      const block = baseSlots[p]! >>> BLOCK_BITS;
      const bound = scaled * baseImpacts[p]!;
      if (bound > bounds[block]!) bounds[block] = bound;
    }
  });
}

/** Scores agents as the exhaustive scorer does, restricted to the matching bitset, a block (or the tails) at a time. */
class BlockScorer {
  private touchedCount = 0;
  private readonly termCount: number;

  /** The base postings to read, flattened: per query word (in plan order) its expansions' term ids and scaled weights. */
  private readonly wordEnds: Int32Array;
  readonly termIds: Int32Array;
  readonly scaled: Float64Array;
  private readonly fullMask: number;
  private readonly local: PruningScratch;

  constructor(
    private readonly store: IndexStore,
    private readonly plan: PlannedTerm[],
    private readonly weights: number[][],
    private readonly matching: Uint32Array,
    private readonly nameKey: number,
    private readonly requireAll: boolean,
    scratch: PruningScratch,
  ) {
    this.termCount = plan.length;
    this.fullMask = this.termCount === 32 ? 0xffffffff : (1 << this.termCount) - 1;
    this.local = scratch;
    const termIds: number[] = [];
    const scaled: number[] = [];
    this.wordEnds = new Int32Array(this.termCount);
    plan.forEach((term, t) => {
      term.expansions.terms.forEach(({ termId }, e) => {
        const weight = weights[t]![e]!;
        if (weight === 0 || termId >= store.baseTermCount) return;
        termIds.push(termId);
        scaled.push(weight / IMPACT_SCALE);
      });
      this.wordEnds[t] = termIds.length;
    });
    this.termIds = Int32Array.from(termIds);
    this.scaled = Float64Array.from(scaled);
  }

  scoreTails(top: TopK): void {
    const { store, matching } = this;
    const { tails, termBest: best, termTouched } = store;
    this.plan.forEach((term, t) => {
      let termTouchedCount = 0;
      term.expansions.terms.forEach(({ termId }, e) => {
        const weight = this.weights[t]![e]!;
        if (weight === 0) return;
        for (let entry = tails.head(termId); entry !== 0; entry = tails.previous(entry)) {
          const slot = tails.slot(entry);
          if (!hasBit(matching, slot)) continue;
          const score = weight * store.impactOf(tails.frequencies(entry), slot);
          if (score > best[slot]!) {
            if (best[slot] === 0) termTouched[termTouchedCount++] = slot;
            best[slot] = score;
          }
        }
      });
      this.addTerm(term.bit, termTouchedCount);
    });
    this.offerTouched(top);
  }

  /**
   * Scores the matching agents of one base block, as the exhaustive scorer does: per word the best of its
   * expansions (kept as a float32, as `termBest`), summed in plan order, then the public score.
   */
  scoreBlock(block: number, top: TopK): void {
    const { store } = this;
    const from = block << BLOCK_BITS;
    // The last base block may reach into tail slots: those were scored with the tails.
    const beyond = store.baseSlotCount - from;
    const bits = beyond >= BLOCK_SIZE ? this.matching[block]! : this.matching[block]! & ((1 << beyond) - 1);
    if (bits === 0) return;
    const to = from + BLOCK_SIZE;
    const { baseSlots, baseImpacts, baseOffsets, blockStarts, impactColumns } = store;
    const { termIds, scaled, wordEnds } = this;
    const { blockBest: best, blockSums: sums, blockMasks: masks } = this.local;
    let e = 0;
    for (let t = 0; t < this.termCount; t++) {
      const wordEnd = wordEnds[t]!;
      for (; e < wordEnd; e++) {
        const termId = termIds[e]!;
        const weight = scaled[e]!;
        const column = impactColumns[termId];
        if (column !== undefined) {
          // One load per matching agent: the same impact, so the same float operations as the walk below.
          for (let rest = bits; rest !== 0; rest &= rest - 1) {
            const offset = 31 - Math.clz32(rest & -rest);
            const impact = column[from + offset]!;
            if (impact === 0) continue;
            const score = weight * impact;
            if (score > best[offset]!) best[offset] = score;
          }
          continue;
        }
        const starts = blockStarts[termId];
        let p: number;
        let end: number;
        if (starts !== undefined) {
          p = starts[block]!;
          end = starts[block + 1]!;
        } else {
          end = baseOffsets[termId + 1]!;
          p = lowerBound(baseSlots, baseOffsets[termId]!, end, from);
        }
        for (; p < end; p++) {
          const slot = baseSlots[p]!;
          if (slot >= to) break;
          const offset = slot - from;
          if ((bits & (1 << offset)) === 0) continue;
          const score = weight * baseImpacts[p]!;
          if (score > best[offset]!) best[offset] = score;
        }
      }
      const bit = 1 << t;
      for (let rest = bits; rest !== 0; rest &= rest - 1) {
        const offset = 31 - Math.clz32(rest & -rest);
        const termBest = best[offset]!;
        if (termBest > 0) {
          sums[offset] = sums[offset]! + termBest;
          masks[offset] = masks[offset]! | bit;
          best[offset] = 0;
        }
      }
    }
    const { nameKeys, deprecated } = store;
    for (let rest = bits; rest !== 0; rest &= rest - 1) {
      const offset = 31 - Math.clz32(rest & -rest);
      const mask = masks[offset]!;
      if (mask !== 0 && (!this.requireAll || mask === this.fullMask)) {
        const slot = from + offset;
        const relevance = Math.min(0.9999, sums[offset]! / this.termCount);
        const exactName = nameKeys[slot] === this.nameKey ? 1 : 0;
        const score = popcount32(mask) + exactName + relevance;
        // Demoting deprecated agents only lowers a score: block bounds still hold.
        top.offer(slot, deprecated[slot] ? score * DEPRECATED_FACTOR : score);
      }
      sums[offset] = 0;
      masks[offset] = 0;
    }
  }

  /** Adds one word's best scores to the slots' sums, in the plan's order (as the exhaustive scorer). */
  private addTerm(bit: number, termTouchedCount: number): void {
    const { termBest: best, termTouched, accumulated, matchedMasks: masks, accumulatedTouched: touched } = this.store;
    for (let i = 0; i < termTouchedCount; i++) {
      const slot = termTouched[i]!;
      if (masks[slot] === 0) touched[this.touchedCount++] = slot;
      accumulated[slot] = accumulated[slot]! + best[slot]!;
      masks[slot] = masks[slot]! | bit;
      best[slot] = 0;
    }
  }

  private offerTouched(top: TopK): void {
    const { accumulated, matchedMasks: masks, accumulatedTouched: touched, nameKeys, deprecated } = this.store;
    const fullMask = this.termCount === 32 ? 0xffffffff : (1 << this.termCount) - 1;
    for (let i = 0; i < this.touchedCount; i++) {
      const slot = touched[i]!;
      const mask = masks[slot]!;
      if (!this.requireAll || mask === fullMask) {
        const relevance = Math.min(0.9999, accumulated[slot]! / this.termCount);
        const exactName = nameKeys[slot] === this.nameKey ? 1 : 0;
        const score = popcount32(mask) + exactName + relevance;
        // Demoting deprecated agents only lowers a score: block bounds still hold.
        top.offer(slot, deprecated[slot] ? score * DEPRECATED_FACTOR : score);
      }
      accumulated[slot] = 0;
      masks[slot] = 0;
    }
    this.touchedCount = 0;
  }
}

function lowerBound(values: Int32Array, from: number, to: number, target: number): number {
  let low = from;
  let high = to;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (values[mid]! < target) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Blocks by bound, highest first: a binary max-heap on typed arrays, built in one pass. */
class BlockHeap {
  size = 0;
  constructor(
    private readonly blocks: Int32Array,
    private readonly keys: Float64Array,
  ) {}

  push(block: number, key: number): void {
    this.blocks[this.size] = block;
    this.keys[this.size++] = key;
  }

  heapify(): void {
    for (let i = (this.size >>> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  get topKey(): number {
    return this.keys[0]!;
  }

  pop(): number {
    const block = this.blocks[0]!;
    this.size--;
    this.blocks[0] = this.blocks[this.size]!;
    this.keys[0] = this.keys[this.size]!;
    this.siftDown(0);
    return block;
  }

  private siftDown(index: number): void {
    const { blocks, keys, size } = this;
    for (;;) {
      const left = index * 2 + 1;
      const right = left + 1;
      let best = index;
      if (left < size && keys[left]! > keys[best]!) best = left;
      if (right < size && keys[right]! > keys[best]!) best = right;
      if (best === index) return;
      const block = blocks[best]!;
      blocks[best] = blocks[index]!;
      blocks[index] = block;
      const key = keys[best]!;
      keys[best] = keys[index]!;
      keys[index] = key;
      index = best;
    }
  }
}

/** Scratch arrays of the pruned scorer, kept per store and grown as needed (a query is synchronous: one set is enough). */
class PruningScratch {
  matching: Uint32Array = new Uint32Array(0);
  private unionBits: Uint32Array = new Uint32Array(0);
  private wordBits: Uint32Array = new Uint32Array(0);
  private capabilityBits: Uint32Array = new Uint32Array(0);
  private termBounds: Float32Array[] = [];
  private bonus = new Uint8Array(0);
  private heapBlocks = new Int32Array(0);
  private heapKeys = new Float64Array(0);
  private keys = new Float64Array(0);
  private sums = new Float64Array(0);
  private present = new Uint8Array(0);
  /** One block's per-slot word best (float32, as `termBest`), sum and matched words: all zero between blocks. */
  readonly blockBest = new Float32Array(BLOCK_SIZE);
  readonly blockSums = new Float64Array(BLOCK_SIZE);
  readonly blockMasks = new Uint32Array(BLOCK_SIZE);

  bitsets(words: number) {
    this.matching = grownBits(this.matching, words);
    this.unionBits = grownBits(this.unionBits, words);
    this.wordBits = grownBits(this.wordBits, words);
    this.capabilityBits = grownBits(this.capabilityBits, words);
    return { matching: this.matching, union: this.unionBits, word: this.wordBits, capability: this.capabilityBits };
  }

  bounds(terms: number, blocks: number): Float32Array[] {
    for (let t = 0; t < terms; t++) {
      if ((this.termBounds[t]?.length ?? 0) < blocks) this.termBounds[t] = new Float32Array(blocks * 2);
    }
    return this.termBounds;
  }

  /** Per block, the sum of the words' bounds and how many words have a bound there: all zero between queries. */
  boundSums(blocks: number): Float64Array {
    if (this.sums.length < blocks) this.sums = new Float64Array(blocks * 2);
    return this.sums;
  }

  boundWords(blocks: number): Uint8Array {
    if (this.present.length < blocks) this.present = new Uint8Array(blocks * 2);
    return this.present;
  }

  /** Each block's bound (-1: nothing to score there). */
  blockKeys(blocks: number): Float64Array {
    if (this.keys.length < blocks) this.keys = new Float64Array(blocks * 2);
    return this.keys;
  }

  nameBonus(blocks: number): Uint8Array {
    if (this.bonus.length < blocks) this.bonus = new Uint8Array(blocks * 2);
    this.bonus.fill(0, 0, blocks);
    return this.bonus;
  }

  blockHeap(blocks: number): BlockHeap {
    if (this.heapBlocks.length < blocks) {
      this.heapBlocks = new Int32Array(blocks * 2);
      this.heapKeys = new Float64Array(blocks * 2);
    }
    return new BlockHeap(this.heapBlocks, this.heapKeys);
  }
}

const scratches = new WeakMap<IndexStore, PruningScratch>();

function scratchOf(store: IndexStore): PruningScratch {
  let scratch = scratches.get(store);
  if (!scratch) scratches.set(store, (scratch = new PruningScratch()));
  return scratch;
}
