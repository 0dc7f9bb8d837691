import { BLOCK_BITS, forEachNamed } from './accelerators';
import { hasBit } from './bitsets';
import type { BlockScorer } from './block-scorer';
import type { IndexStore } from './index-store';
import type { TopK } from './top-k';

/**
 * The threshold algorithm (Fagin, Lotem, Naor, "Optimal aggregation algorithms for middleware", 2003) over
 * the impact-ordered prefixes of the query's terms (`impact-orders.ts`), for queries whose every word is
 * frequent and whose matches must have every word.
 *
 * Round d reads the d-th posting of each expansion's prefix; an agent seen for the first time that matches
 * (the matching bitset: every word, live, filters) is scored in full by the block scorer, restricted to its
 * slot. An agent not seen yet has, for each expansion, an impact no higher than the one just read from its
 * prefix, so its score is at most what those impacts give (per word the best expansion, as a float32, summed
 * in plan order, as the score is computed). Once the heap is full and that bound is below its worst score,
 * no unseen agent can enter the top k: the hits are exact. Agents whose name is exactly the query (1 more)
 * are scored first, so the bound leaves that bonus out.
 *
 * A prefix read to its end bounds its term by its last impact from then on. Returns false, with work left
 * undone, when every prefix has been read or the budget of agents spent and the bound is still not below
 * the bar (or the query does not qualify): the caller then runs the block-max scorer, and may use the heap's worst score as a floor for its bounds.
 */
/**
 * Agents read before giving up, times the lists (each agent read is looked up in every list): at 100,000
 * agents 4,096 (about 2,000 agents for two lists), at 1,000,000 about 15,600. Runs that finish do so well
 * within it on the bench's words; three common words mostly do not (long runs of equal impacts), and a larger
 * budget only added to what the block scorer costs after it (at 100,000 agents: 530 µs a query with slots/8,
 * 395 with slots/64, 401 without the threshold algorithm; two words 114 to 118 µs with any of them, 215 without).
 */
export const THRESHOLD_BUDGET = { minimum: 4_096, share: 1 / 64 };

/** Agents the last run read (for tests and measurements). */
export const thresholdStats = { visited: 0 };

export function thresholdTopK(
  store: IndexStore,
  scorer: BlockScorer,
  matching: Uint32Array,
  nameKey: number,
  top: TopK,
  seen: Uint32Array,
): boolean {
  const { termIds, scaled, wordEnds } = scorer;
  const termCount = wordEnds.length;
  const lists = termIds.length;
  if (lists === 0) return false;
  const orderSlots: Int32Array[] = [];
  const orderValues: Uint16Array[] = [];
  const complete: boolean[] = [];
  for (let e = 0; e < lists; e++) {
    const termId = termIds[e]!;
    const slots = store.impactOrderSlots[termId];
    if (slots === undefined) return false;
    orderSlots.push(slots);
    orderValues.push(store.impactOrderValues[termId]!);
    complete.push(slots.length === store.baseOffsets[termId + 1]! - store.baseOffsets[termId]!);
  }
  for (let t = 0, from = 0; t < termCount; from = wordEnds[t++]!) if (wordEnds[t] === from) return false;

  const marked: number[] = [];
  const budget = Math.max(THRESHOLD_BUDGET.minimum, store.baseSlotCount * THRESHOLD_BUDGET.share);
  const visit = (slot: number): void => {
    if (hasBit(seen, slot)) return;
    seen[slot >>> 5] = seen[slot >>> 5]! | (1 << (slot & 31));
    marked.push(slot);
    if (hasBit(matching, slot)) scorer.scoreBlock(slot >>> BLOCK_BITS, top, 1 << (slot & 31));
  };
  forEachNamed(store, nameKey, (slot) => {
    if (slot < store.baseSlotCount) visit(slot);
  });

  const bound = new Float32Array(1);
  let result: boolean | undefined;
  for (let depth = 0; result === undefined; depth++) {
    let ended = 0;
    let truncated = 0;
    for (let e = 0; e < lists; e++) {
      const slots = orderSlots[e]!;
      if (depth < slots.length) visit(slots[depth]!);
      else if (complete[e]) ended++;
      else truncated++;
    }
    if (ended === lists) {
      result = true; // Every posting seen.
      break;
    }
    if (ended + truncated === lists) {
      result = false; // Every prefix read, and the bound is not below the bar yet.
      break;
    }
    // The best score an unseen agent could have: per word the best expansion (a float32, as the scorer keeps it).
    let sum = 0;
    for (let t = 0, e = 0; t < termCount; t++) {
      let best = 0;
      for (const end = wordEnds[t]!; e < end; e++) {
        const values = orderValues[e]!;
        // A complete list read to its end: no unseen agent has that term. A prefix read to its end: none has it
        // with a higher impact than its last.
        if (depth >= values.length && complete[e]) continue;
        bound[0] = scaled[e]! * values[Math.min(depth, values.length - 1)]!;
        if (bound[0]! > best) best = bound[0]!;
      }
      sum += best;
    }
    if (top.full && termCount + Math.min(0.9999, sum / termCount) < top.worstScore) result = true;
    // Long runs of equal impacts (a word in thousands of names) keep the bound up: past the budget, the block
    // scorer costs less.
    else if (marked.length * lists > budget) result = false;
  }
  for (const slot of marked) seen[slot >>> 5] = 0;
  thresholdStats.visited = marked.length;
  return result;
}
