import { BLOCK_BITS, BLOCK_SIZE } from './accelerators';
import type { BlockScorer } from './block-scorer';
import type { IndexStore } from './index-store';
import type { TopK } from './top-k';

/** For measurements: the one-pass sweep can be turned off (then pruned.ts bounds every block first). */
export const SWEEP = { enabled: true };

/**
 * Scores the matching base blocks in slot order, skipping each block whose bound is below the bar: per word
 * the best of its expansions' block maximum × weight (a float32, as the scorer keeps it), summed in plan order
 * as the score is. Bounds are computed only for blocks holding a match, as they come, in one pass that reads
 * the bitsets, block maxima and impact columns front to back. `skip` (the slots the threshold algorithm
 * already scored into `top`) is left out. `bar`: a score no hit can be below. Returns the blocks scored.
 */
export function sweepBlocks(
  store: IndexStore,
  scorer: BlockScorer,
  matching: Uint32Array,
  top: TopK,
  skip: Uint32Array | undefined,
  bar: number,
): number {
  const { termIds, scaled, wordEnds } = scorer;
  const termCount = wordEnds.length;
  const lists = termIds.length;
  const blocks = (store.baseSlotCount + BLOCK_SIZE - 1) >>> BLOCK_BITS;
  const maxes: Uint16Array[] = [];
  // A list too rare for block maxima bounds every block by its highest impact.
  const flat = new Float64Array(lists);
  for (let e = 0; e < lists; e++) {
    const termId = termIds[e]!;
    const termMaxes = store.blockMaxes[termId];
    if (termMaxes !== undefined) {
      maxes.push(termMaxes);
      continue;
    }
    maxes.push(EMPTY);
    let highest = 0;
    for (let p = store.baseOffsets[termId]!; p < store.baseOffsets[termId + 1]!; p++) highest = Math.max(highest, store.baseImpacts[p]!);
    flat[e] = highest;
  }
  const bound = new Float32Array(1);
  let scored = 0;
  let threshold = top.full ? Math.max(bar, top.worstScore) : bar;
  for (let block = 0; block < blocks; block++) {
    let bits = matching[block]!;
    if (skip !== undefined) bits &= ~skip[block]!;
    if (bits === 0) continue;
    let sum = 0;
    for (let t = 0, e = 0; t < termCount; t++) {
      let best = 0;
      for (const end = wordEnds[t]!; e < end; e++) {
        const value = maxes[e] === EMPTY ? flat[e]! : maxes[e]![block]!;
        bound[0] = scaled[e]! * value;
        if (bound[0]! > best) best = bound[0]!;
      }
      sum += best;
    }
    // Every word required; exact names were scored before (in `skip`).
    const key = termCount + Math.min(0.9999, sum / termCount);
    if (key < threshold) continue;
    scorer.scoreBlock(block, top, bits);
    scored++;
    if (top.full && top.worstScore > threshold) threshold = top.worstScore;
  }
  return scored;
}

const EMPTY = new Uint16Array(0);
