import { BLOCK_BITS, BLOCK_SIZE, forEachNamed } from './accelerators';
import { hasBit } from './bitsets';
import { BlockScorer } from './block-scorer';
import { IMPACT_SCALE, type IndexStore } from './index-store';
import { matchingBits } from './matching-bits';
import { scratchOf, type MarkedSlots, type PruningScratch } from './pruning-scratch';
import { sweepBlocks, SWEEP } from './sweep';
import { scoreOnce, thresholdTopK } from './threshold';
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
 *    When every word is required: exact names, then the threshold algorithm (threshold.ts), then, if it
 *    gave up, one sweep in slot order over the blocks not ruled out by their bound (sweep.ts).
 *
 * Every score is computed by the same float operations in the same order as
 * the exhaustive scorer, and each bound by the same operations on numbers
 * at least as large, so hits, order and total are exactly the exhaustive
 * scorer's (test/unit/search-pruning.test.ts checks it on random corpora).
 */
/** Blocks of the last pruned query, how many of them were scored, and what the threshold algorithm did (for tests and the bench). */
export const pruningStats: { blocks: number; scored: number; threshold: 'skipped' | 'done' | 'gave up'; listed: boolean } = {
  blocks: 0,
  scored: 0,
  threshold: 'skipped',
  listed: false,
};

/**
 * When the threshold algorithm is tried: for pages up to `maxLimit` hits, when at least one agent in
 * `minDensity` matches (rarer matches are few blocks, scored directly). `enabled` is for tests.
 */
export const THRESHOLD = { enabled: true, maxLimit: 100, minDensity: 64 };

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
  let top = new TopK(limit, store);
  pruningStats.blocks = 0;
  pruningStats.scored = 0;
  pruningStats.threshold = 'skipped';
  pruningStats.listed = false;
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

  // Words most agents use, every one required: the threshold algorithm over impact-ordered postings, when it
  // finishes within them. Otherwise its k-th best score is a floor the block bounds must reach (`bar`).
  let bar = -Infinity;
  const tryThreshold =
    THRESHOLD.enabled && requireAll && limit <= THRESHOLD.maxLimit && total * THRESHOLD.minDensity >= store.baseSlotCount;
  if (SWEEP.enabled && requireAll && !(termCount === 1 && scorer.termIds.length === 1)) {
    // Exact names first (their bonus is in no block bound), then the threshold algorithm, then one sweep over the rest.
    const seen = scratch.seenBits(words);
    const marked = scratch.markedSlots();
    forEachNamed(store, parsed.nameKey, (slot) => {
      if (slot < store.baseSlotCount) scoreOnce(slot, scorer, matching, top, seen, marked);
    });
    let scored = 0;
    if (tryThreshold && thresholdTopK(store, scorer, matching, parsed.nameKey, top, seen, marked, total)) pruningStats.threshold = 'done';
    else {
      if (tryThreshold) pruningStats.threshold = 'gave up';
      if (LISTED.enabled && scratch.matchedCount >= 0 && scratch.matchedCount * DIRECT_SHARE <= blocks) {
        scored = scoreListed(store, scorer, scratch, top, seen);
        clearSeen(seen, marked, words);
        return { hits: publicHits(store, top), total: finish(scored) };
      }
      let nonEmpty = 0;
      for (let block = 0; block < blocks; block++) if (matching[block] !== 0) nonEmpty++;
      // Few blocks hold a match (filters, or words that rarely meet): scoring them is cheaper than bounding them.
      if (nonEmpty * DIRECT_SHARE <= blocks) {
        for (let block = 0; block < blocks; block++) if (matching[block] !== 0) scorer.scoreBlock(block, top, ~seen[block]!);
        scored = nonEmpty;
      } else scored = sweepBlocks(store, scorer, matching, top, seen, -Infinity);
    }
    clearSeen(seen, marked, words);
    return { hits: publicHits(store, top), total: finish(scored) };
  }
  if (tryThreshold) {
    const seen = scratch.seenBits(words);
    const marked = scratch.markedSlots();
    const done = thresholdTopK(store, scorer, matching, parsed.nameKey, top, seen, marked, total);
    clearSeen(seen, marked, words);
    if (done) {
      pruningStats.threshold = 'done';
      return { hits: publicHits(store, top), total };
    }
    pruningStats.threshold = 'gave up';
    if (top.full) bar = top.worstScore;
    top = new TopK(limit, store);
    scorer.scoreTails(top);
  }
  if (LISTED.enabled && scratch.matchedCount >= 0 && scratch.matchedCount * DIRECT_SHARE <= blocks) {
    pruningStats.scored = scoreListed(store, scorer, scratch, top, undefined);
    return { hits: publicHits(store, top), total };
  }
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
    if (key < bar) {
      keys[block] = -1;
      continue;
    }
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
      if (key < bar || (top.full && key < top.worstScore)) break;
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

/**
 * Clears what the threshold algorithm marked seen (all zero between queries): the whole bitset in one fill when the
 * run saw many agents (a pass over N/32 words costs less than thousands of scattered stores), else slot by slot.
 */
function clearSeen(seen: Uint32Array, marked: MarkedSlots, words: number): void {
  if (marked.length * 8 > words) seen.fill(0, 0, words);
  else for (let i = 0; i < marked.length; i++) seen[marked.slots[i]! >>> 5] = 0;
}

/** For measurements and tests: listed matches (few, from matching-bits' sparse path) scored as blocks when off. */
export const LISTED = { enabled: true, batched: true };

/**
 * Few matches that step 1 listed one by one (a capability filter few agents pass): each base slot scored on its own
 * (`scoreSlot`, the same float operations as `scoreBlock`), leaving out those in `seen`; tail slots were scored
 * with the tails. No pass over the bitset's words to find them, and no block scratch per match. Returns how many
 * were listed (for `pruningStats.scored`, which then counts slots, not blocks).
 */
function scoreListed(store: IndexStore, scorer: BlockScorer, scratch: PruningScratch, top: TopK, seen: Uint32Array | undefined): number {
  const { matched, matchedCount } = scratch;
  const base = store.baseSlotCount;
  pruningStats.listed = true;
  if (LISTED.batched) {
    scorer.scoreSlots(matched, matchedCount, top, seen);
    return matchedCount;
  }
  for (let i = 0; i < matchedCount; i++) {
    const slot = matched[i]!;
    if (slot < base && (seen === undefined || !hasBit(seen, slot))) scorer.scoreSlot(slot, top);
  }
  return matchedCount;
}

/** Blocks scored in bound order before the rest are swept in slot order. */
export const BOUND_ORDER_BLOCKS = 64;

/** Score the blocks holding a match directly (no bounds, no heap) when at most one block in this many holds one. */
const DIRECT_SHARE = 16;

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
