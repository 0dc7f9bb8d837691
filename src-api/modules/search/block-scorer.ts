import { BLOCK_BITS, BLOCK_SIZE, forEachNamed } from './accelerators';
import { hasBit, popcount32 } from './bitsets';
import { DEPRECATED_FACTOR, IMPACT_SCALE, type IndexStore } from './index-store';
import type { PlannedTerm } from './scoring';
import type { TopK } from './top-k';

/** For measurements and tests: every scored agent's name key read (as before) when `skip` is off. */
export const NAME_CHECK = { skip: true };

/** For measurements and tests: `scoreSlot` reads every term's impacts, with no bitset test first, when off. */
export const SLOT_GATES = { enabled: true };

/** One block's per-slot word best (float32, as `termBest`), sum and matched words: all zero between blocks. */
export interface BlockScratch {
  readonly blockBest: Float32Array;
  readonly blockSums: Float64Array;
  readonly blockMasks: Uint32Array;
  /** The same per listed slot (`scoreSlots`), at least `count` long, all zero; and two lists of `count` slots or indices. */
  listScratch(count: number): { best: Float32Array; sums: Float64Array; masks: Uint32Array; slots: Int32Array; picked: Int32Array };
}

/** Scores agents as the exhaustive scorer does, restricted to the matching bitset, a block (or the tails) at a time. */
export class BlockScorer {
  private touchedCount = 0;
  private readonly termCount: number;

  /** The base postings to read, flattened: per query word (in plan order) its expansions' term ids and scaled weights. */
  readonly wordEnds: Int32Array;
  readonly termIds: Int32Array;
  readonly scaled: Float64Array;
  /** Per flattened term, its impact column and block starts, if it has them (looked up once, not per slot). */
  private readonly columns: (Uint16Array | undefined)[];
  private readonly starts: (Int32Array | undefined)[];
  /**
   * Per flattened term, its bitset when `scoreSlot` should test it before reading the term's impacts: a word's
   * expansions when it has several (an agent has the word through one or some of them), every term when matches
   * need not have every word. A clear bit means no base posting (the bitset holds every one), so impact 0: the
   * impact column (2 bytes a slot: a cache miss per agent at 1,000,000) or the postings are not read.
   */
  private readonly gates: (Uint32Array | undefined)[];
  private readonly fullMask: number;
  private readonly local: BlockScratch;
  /**
   * False when no live agent's name is the query (the common case): then no match gets the exact-name 1 and the
   * scorer reads no name key (a cache miss per scored agent). True when the query has no name key (-1).
   */
  private readonly checkNames: boolean;

  constructor(
    private readonly store: IndexStore,
    private readonly plan: PlannedTerm[],
    private readonly weights: number[][],
    private readonly matching: Uint32Array,
    private readonly nameKey: number,
    private readonly requireAll: boolean,
    scratch: BlockScratch,
  ) {
    this.termCount = plan.length;
    this.fullMask = this.termCount === 32 ? 0xffffffff : (1 << this.termCount) - 1;
    this.local = scratch;
    let named = nameKey === -1 || !NAME_CHECK.skip;
    if (!named) forEachNamed(store, nameKey, () => (named = true));
    this.checkNames = named;
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
    this.columns = termIds.map((termId) => store.impactColumn(termId));
    this.starts = termIds.map((termId) => store.blockStarts[termId]);
    this.gates = termIds.map((termId, e) => {
      const t = this.wordEnds.findIndex((end) => end > e);
      const alone = this.wordEnds[t]! - (t === 0 ? 0 : this.wordEnds[t - 1]!) === 1;
      return SLOT_GATES.enabled && !(alone && requireAll) ? store.termBits[termId] : undefined;
    });
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
   * `only`: a mask of the block's slots to score (default all).
   */
  scoreBlock(block: number, top: TopK, only = -1): void {
    const { store } = this;
    const from = block << BLOCK_BITS;
    // The last base block may reach into tail slots: those were scored with the tails.
    const beyond = store.baseSlotCount - from;
    const bits = (beyond >= BLOCK_SIZE ? this.matching[block]! : this.matching[block]! & ((1 << beyond) - 1)) & only;
    if (bits === 0) return;
    const to = from + BLOCK_SIZE;
    const { baseSlots, baseImpacts, baseOffsets, blockStarts } = store;
    const { termIds, scaled, wordEnds } = this;
    const { blockBest: best, blockSums: sums, blockMasks: masks } = this.local;
    let e = 0;
    for (let t = 0; t < this.termCount; t++) {
      const wordEnd = wordEnds[t]!;
      for (; e < wordEnd; e++) {
        const termId = termIds[e]!;
        const weight = scaled[e]!;
        const column = this.columns[e];
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
    for (let rest = bits; rest !== 0; rest &= rest - 1) {
      const offset = 31 - Math.clz32(rest & -rest);
      const mask = masks[offset]!;
      if (mask !== 0 && (!this.requireAll || mask === this.fullMask)) {
        this.offerMatch(from + offset, mask, sums[offset]!, top);
      }
      sums[offset] = 0;
      masks[offset] = 0;
    }
  }

  /**
   * Scores one matching base slot (the threshold algorithm's visits) as `scoreBlock` restricted to it would,
   * without a block's scratch: per word the best expansion as a float32 (`Math.fround`, as the Float32Array
   * keeps it), summed in plan order.
   */
  scoreSlot(slot: number, top: TopK): void {
    const { store, termIds, scaled, wordEnds, columns, starts: allStarts, gates } = this;
    const { baseSlots, baseImpacts, baseOffsets } = store;
    const block = slot >>> BLOCK_BITS;
    const bit = 1 << (slot & 31);
    let sum = 0;
    let mask = 0;
    let e = 0;
    for (let t = 0; t < this.termCount; t++) {
      let best = 0;
      for (const wordEnd = wordEnds[t]!; e < wordEnd; e++) {
        const gate = gates[e];
        if (gate !== undefined && ((gate[block] ?? 0) & bit) === 0) continue;
        const column = columns[e];
        let impact = 0;
        if (column !== undefined) impact = column[slot]!;
        else {
          const termId = termIds[e]!;
          const starts = allStarts[e];
          const from = starts !== undefined ? starts[block]! : baseOffsets[termId]!;
          const end = starts !== undefined ? starts[block + 1]! : baseOffsets[termId + 1]!;
          const p = lowerBound(baseSlots, from, end, slot);
          if (p < end && baseSlots[p] === slot) impact = baseImpacts[p]!;
        }
        if (impact === 0) continue;
        const score = Math.fround(scaled[e]! * impact);
        if (score > best) best = score;
      }
      if (best > 0) {
        sum += best;
        mask |= 1 << t;
      }
    }
    if (mask === 0 || (this.requireAll && mask !== this.fullMask)) return;
    this.offerMatch(slot, mask, sum, top);
  }

  /**
   * `scoreSlot` for each of the first `count` slots of `listed` that is a base slot and not in `seen`, in that
   * order, with the same float operations; but a term at a time: each impact column is read by one tight loop
   * over the slots, so the cache misses of many slots (listed slots are far apart: a miss each) overlap instead
   * of coming one after the other between the scoring steps of each slot.
   */
  scoreSlots(listed: Int32Array, count: number, top: TopK, seen: Uint32Array | undefined): void {
    const { store, termIds, scaled, wordEnds, columns, starts: allStarts, gates } = this;
    const { best, sums, masks, slots, picked } = this.local.listScratch(count);
    const base = store.baseSlotCount;
    let n = 0;
    for (let i = 0; i < count; i++) {
      const slot = listed[i]!;
      if (slot < base && (seen === undefined || (seen[slot >>> 5]! & (1 << (slot & 31))) === 0)) slots[n++] = slot;
    }
    const { baseSlots, baseImpacts, baseOffsets } = store;
    let e = 0;
    for (let t = 0; t < this.termCount; t++) {
      for (const wordEnd = wordEnds[t]!; e < wordEnd; e++) {
        const weight = scaled[e]!;
        const gate = gates[e];
        // The slots that have the term (its bit), when it is worth testing (see `gates`): indices into `slots`.
        let m = n;
        if (gate !== undefined) {
          m = 0;
          for (let i = 0; i < n; i++) {
            const slot = slots[i]!;
            if (((gate[slot >>> 5] ?? 0) & (1 << (slot & 31))) !== 0) picked[m++] = i;
          }
        }
        const column = columns[e];
        if (column !== undefined) {
          if (gate === undefined) {
            for (let i = 0; i < n; i++) {
              const impact = column[slots[i]!]!;
              if (impact === 0) continue;
              const score = Math.fround(weight * impact);
              if (score > best[i]!) best[i] = score;
            }
          } else {
            for (let j = 0; j < m; j++) {
              const i = picked[j]!;
              const impact = column[slots[i]!]!;
              if (impact === 0) continue;
              const score = Math.fround(weight * impact);
              if (score > best[i]!) best[i] = score;
            }
          }
          continue;
        }
        const termId = termIds[e]!;
        const starts = allStarts[e];
        for (let j = 0; j < m; j++) {
          const i = gate === undefined ? j : picked[j]!;
          const slot = slots[i]!;
          const block = slot >>> BLOCK_BITS;
          const from = starts !== undefined ? starts[block]! : baseOffsets[termId]!;
          const end = starts !== undefined ? starts[block + 1]! : baseOffsets[termId + 1]!;
          const p = lowerBound(baseSlots, from, end, slot);
          if (p >= end || baseSlots[p] !== slot) continue;
          const impact = baseImpacts[p]!;
          if (impact === 0) continue;
          const score = Math.fround(weight * impact);
          if (score > best[i]!) best[i] = score;
        }
      }
      const bit = 1 << t;
      for (let i = 0; i < n; i++) {
        const wordBest = best[i]!;
        if (wordBest > 0) {
          sums[i] = sums[i]! + wordBest;
          masks[i] = masks[i]! | bit;
          best[i] = 0;
        }
      }
    }
    for (let i = 0; i < n; i++) {
      const mask = masks[i]!;
      const sum = sums[i]!;
      masks[i] = 0;
      sums[i] = 0;
      if (mask === 0 || (this.requireAll && mask !== this.fullMask)) continue;
      this.offerMatch(slots[i]!, mask, sum, top);
    }
  }

  /**
   * Offers a matching slot with its words (`mask`) and summed word scores: the exhaustive scorer's score (matched
   * words, + 1 for an exact name, + relevance below 1), in one place for every way of scoring here.
   */
  private offerMatch(slot: number, mask: number, sum: number, top: TopK): void {
    const relevance = Math.min(0.9999, sum / this.termCount);
    const exactName = this.checkNames && this.store.nameKeys[slot] === this.nameKey ? 1 : 0;
    const score = popcount32(mask) + exactName + relevance;
    // Demoting deprecated agents only lowers a score: block bounds still hold.
    top.offer(slot, this.store.deprecated[slot] ? score * DEPRECATED_FACTOR : score);
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
    const { accumulated, matchedMasks: masks, accumulatedTouched: touched } = this.store;
    for (let i = 0; i < this.touchedCount; i++) {
      const slot = touched[i]!;
      const mask = masks[slot]!;
      if (!this.requireAll || mask === this.fullMask) this.offerMatch(slot, mask, accumulated[slot]!, top);
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
