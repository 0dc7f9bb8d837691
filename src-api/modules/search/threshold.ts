import { BLOCK_BITS, forEachNamed } from './accelerators';
import { hasBit } from './bitsets';
import type { BlockScorer } from './block-scorer';
import { trustInTieOrder } from './impact-orders';
import type { IndexStore } from './index-store';
import { NAME_SPLIT, NameSplit, READ_ON } from './name-split';
import type { MarkedSlots } from './pruning-scratch';
import type { Visitor } from './set-reads';
import type { TopK } from './top-k';

/**
 * The threshold algorithm (Fagin, Lotem, Naor, "Optimal aggregation algorithms for middleware", 2003) over
 * the impact-ordered prefixes of the query's terms (`impact-orders.ts`), for queries on words many agents use
 * whose matches must have every word. A term too rare to have an impact order (a prefix's rare completions, or
 * a word's rare forms, beside a frequent expansion) is read whole first: then no unseen agent has it. Once
 * every list of some word has been read to its end, every agent with that word was seen, and the run ends.
 *
 * Each expansion's prefix is read from its start; an agent seen for the first time that matches (the matching
 * bitset: every word, live, filters) is scored in full (`scoreSlot`). An agent not seen yet has, for each
 * expansion, an impact no higher than the one last read from its prefix, so its score is at most what those
 * impacts give (per word the best expansion, as a float32, summed in plan order, as the score is computed).
 * Once the heap is full and that bound is below its worst score, no unseen agent can enter the top k: the hits
 * are exact. At equal, the tie order of the prefixes may settle it (`stopsInTies`). Agents whose name is
 * exactly the query (1 more) are scored first, so the bound leaves that bonus out.
 *
 * Until the heap is full every list reads one posting a round; then the lists of the word cheapest to rule out
 * (`readCheapestWord`). A prefix read to its end bounds its term by its last impact from then on. Returns false,
 * with work left undone, when every prefix has been read or the budget spent and the bound is still not below
 * the bar (or the query does not qualify): the caller then goes on with the heap, leaving out the slots in
 * `seen` (those in `marked`, which the caller clears), or may use the heap's worst score as a floor.
 */
/**
 * Agents read before giving up: at 100,000 agents 25,000. Measured at 100,000 agents (CPU time, busy machine),
 * three common words: 1/16 gave up on 51 of 300 queries (472 µs a query), 1/8 on 22 (413 µs), 1/4 on none
 * (381 µs): the sweep after a give-up costs more than reading on (the words that need most reads are in a
 * few names each, and those agents are in almost every block, so block bounds rule out few blocks).
 */
export const THRESHOLD_BUDGET = { minimum: 4_096, share: 1 / 4 };

/** Agents the last run read, whether it stopped inside a run of ties, whether it split by names, runs of visits scored together, rounds of bounds (for tests and measurements). */
export const thresholdStats = { visited: 0, inTies: false, byNames: false, setReads: 0, split: false, batches: 0, rounds: 0 };

/** Whether a run may stop inside a run of equal impacts (`stopsInTies`); off for A/B measurements. */
export const TIE_ORDER = { enabled: true };

/**
 * Whether a run reads on in the cheapest word's lists (`readCheapestWord`) rather than every list in step, and
 * how far at a time: in step, one posting a list, one more per `stepEvery` agents read so far; in the cheapest
 * word's lists, what the word needs, up to `chunk` or one per `chunkEvery` agents read so far, whichever is
 * more. Short runs (one common word: about 40 agents) stay short; long ones (three common words: thousands)
 * spend fewer rounds bounding and choosing (at 100,000 agents, 702 µs a query with fixed steps of 1 and 32).
 * `fill` (off for A/B): in step, a list reads as many postings as the heap lacks hits until it is full, then
 * `fullStep`, not one. Two common words took 98 rounds a query one posting at a time, 20 so; at 100,000 agents
 * (bench/search-classes.ts --ab-fill, CPU time, best of 6 alternating rounds) one common word 19 -> 17 µs, two
 * 67 -> 54, the other classes unchanged within the noise (the same hits: reading more never changes them, only
 * when the run stops).
 * `chunk` and `chunkEvery` also cap what a name set reading on by itself visits at a time (name-split.ts). A round
 * costs about 0.5-0.8 µs of bounds (every name set's, then the set's own read and a batch to score) whatever it
 * reads, so chunks of 256 (at least one per 8 agents read) beat 32 (one per 16) though the runs read a little
 * further. At 100,000 agents three common words take 6.0 rounds a query, not 15.1, and read 504 agents, not 453;
 * two words 14.4 rounds, not 20.8. In-process, index only, each class on its own for 1,000 queries, best of 10
 * alternating rounds: three words x0.88-0.90 the time, two x0.90-0.92; at 1,000,000 agents three x0.935, two
 * x0.927; through searchJson (`bench/search-service-ab.ts --base`) three words 83.7 -> 75.9 µs. With the classes
 * interleaved (`bench/search-classes.ts --ab-chunks`, colder caches) three runs read three words x0.86-0.99, two
 * x0.93-1.00. One word, prefix and filtered runs end in two rounds either way.
 */
export const ADAPTIVE = { enabled: true, chunk: 256, chunkEvery: 8, stepEvery: 256, fill: true, fullStep: 16 };

/** For measurements: visits scored through `scoreBlock` when off. */
export const SLOT_SCORER = { enabled: true };

/** Scores `slot` into `top` if it matches and was not seen yet; marks it seen (the caller clears `marked` from `seen`). */
export function scoreOnce(
  slot: number,
  scorer: BlockScorer,
  matching: Uint32Array,
  top: TopK,
  seen: Uint32Array,
  marked: MarkedSlots,
): void {
  if (hasBit(seen, slot)) return;
  seen[slot >>> 5] = seen[slot >>> 5]! | (1 << (slot & 31));
  marked.push(slot);
  if (hasBit(matching, slot)) {
    if (SLOT_SCORER.enabled) scorer.scoreSlot(slot, top);
    else scorer.scoreBlock(slot >>> BLOCK_BITS, top, 1 << (slot & 31));
  }
}

/** Scratch of `visitMany`: the matching agents of a run of visits not seen before. */
let unseen = new Int32Array(256);

/** `scoreOnce` for each of `slots[from, to)`, the matching ones scored together (`BlockScorer.scoreSlots`): the same offers. */
function visitMany(
  slots: Int32Array,
  from: number,
  to: number,
  scorer: BlockScorer,
  matching: Uint32Array,
  top: TopK,
  seen: Uint32Array,
  marked: MarkedSlots,
): void {
  if (!SLOT_SCORER.enabled || to - from < BATCHED_VISITS.min) {
    for (let i = from; i < to; i++) scoreOnce(slots[i]!, scorer, matching, top, seen, marked);
    return;
  }
  thresholdStats.batches++;
  if (unseen.length < to - from) unseen = new Int32Array(to - from);
  let count = 0;
  for (let i = from; i < to; i++) {
    const slot = slots[i]!;
    const word = slot >>> 5;
    const bit = 1 << (slot & 31);
    if ((seen[word]! & bit) !== 0) continue;
    seen[word] = seen[word]! | bit;
    marked.push(slot);
    if ((matching[word]! & bit) !== 0) unseen[count++] = slot;
  }
  scorer.scoreSlots(unseen, count, top, undefined);
}

/** Runs of at least `min` visits are scored together (`visitMany`); off (Infinity) for A/B measurements. */
export const BATCHED_VISITS = { min: 4 };

export function thresholdTopK(
  store: IndexStore,
  scorer: BlockScorer,
  matching: Uint32Array,
  nameKey: number,
  top: TopK,
  seen: Uint32Array,
  marked: MarkedSlots,
  /** How many agents match (the bits of `matching`). */
  total: number,
): boolean {
  const { termIds, scaled, wordEnds } = scorer;
  const termCount = wordEnds.length;
  const lists = termIds.length;
  if (lists === 0) return false;
  const orderSlots: Int32Array[] = [];
  const orderValues: Uint16Array[] = [];
  const complete: boolean[] = [];
  // Terms too rare for an impact order (a prefix's rare completions beside a typo match in half the agents, as
  // "caln" for "can"): read whole up front, so that from then on no unseen agent has them (complete and ended).
  const rare: number[] = [];
  let rarePostings = 0;
  for (let e = 0; e < lists; e++) {
    const termId = termIds[e]!;
    const slots = store.impactOrderSlots[termId];
    const start = store.baseOffsets[termId]!;
    const end = store.baseOffsets[termId + 1]!;
    if (slots === undefined) {
      rare.push(e);
      rarePostings += end - start;
      orderSlots.push(store.baseSlots.subarray(start, end));
      orderValues.push(store.baseImpacts.subarray(start, end));
      complete.push(true);
      continue;
    }
    orderSlots.push(slots);
    orderValues.push(store.impactOrderValues[termId]!);
    complete.push(slots.length === end - start);
  }
  for (let t = 0, from = 0; t < termCount; from = wordEnds[t++]!) if (wordEnds[t] === from) return false;

  const budget = marked.length + Math.max(THRESHOLD_BUDGET.minimum, store.baseSlotCount * THRESHOLD_BUDGET.share);
  if (rarePostings > budget - marked.length) return false;
  const visit = (slot: number): void => scoreOnce(slot, scorer, matching, top, seen, marked);
  const visitor: Visitor = {
    one: visit,
    many: (slots, from, to) => visitMany(slots, from, to, scorer, matching, top, seen, marked),
  };
  forEachNamed(store, nameKey, (slot) => {
    if (slot < store.baseSlotCount) visit(slot);
  });
  // Agents whose trust changed since the orders were built are out of tie order: scored up front.
  const ties = TIE_ORDER.enabled && !store.tieOrderStale;
  thresholdStats.inTies = thresholdStats.byNames = false;
  thresholdStats.setReads = 0;
  thresholdStats.batches = 0;
  thresholdStats.rounds = 0;
  if (ties) {
    for (const slot of store.trustAtCompaction.keys()) if (slot < store.baseSlotCount) visit(slot);
  }

  const bound = new Float32Array(1);
  const wordBest = new Float64Array(termCount);
  const listValue = new Int32Array(lists);
  // Postings read from each list; a list's bound is the impact last read (its first before any).
  const read = new Int32Array(lists);
  const runLists = { slots: orderSlots, values: orderValues, complete, read };
  // Short queries start the split late (see NAME_SPLIT): most of their runs end before.
  const splitAfter = termCount >= NAME_SPLIT.earlyWords ? 0 : NAME_SPLIT.lateAfter;
  let split = splitAfter === 0 ? NameSplit.of(store, termIds, scaled, wordEnds, total, runLists) : undefined;
  let splitTried = splitAfter === 0;
  const at = (e: number): number => Math.min(Math.max(0, read[e]! - 1), orderValues[e]!.length - 1);
  const ended = (e: number): boolean => complete[e]! && read[e]! >= orderValues[e]!.length;
  const readUpTo = (e: number, count: number): void => {
    const slots = orderSlots[e]!;
    const end = Math.min(slots.length, read[e]! + count);
    visitor.many(slots, read[e]!, end);
    read[e] = end;
  };
  for (const e of rare) readUpTo(e, orderSlots[e]!.length);
  let result: boolean | undefined;
  let blocked = 0;
  while (result === undefined) {
    thresholdStats.rounds++;
    if (!splitTried && marked.length >= splitAfter) {
      splitTried = true;
      split = NameSplit.of(store, termIds, scaled, wordEnds, total, runLists);
    }
    // The best score an unseen agent could have: per word the best expansion (a float32, as the scorer keeps it).
    // A complete list read to its end: no unseen agent has that term. A prefix read to its end: none has it
    // with a higher impact than its last.
    let sum = 0;
    let open = 0;
    let done = 0;
    // A word whose every list was read to its end: every agent with it was seen, and a match needs every word.
    let wordSeen = false;
    for (let t = 0, e = 0; t < termCount; t++) {
      let best = 0;
      const doneBefore = done;
      for (const end = wordEnds[t]!; e < end; e++) {
        if (ended(e)) {
          done++;
          listValue[e] = -1;
          continue;
        }
        if (read[e]! < orderValues[e]!.length) open++;
        listValue[e] = orderValues[e]![at(e)]!;
        const value = Math.fround(scaled[e]! * listValue[e]!);
        if (value > best) best = value;
      }
      if (done - doneBefore === wordEnds[t]! - (t === 0 ? 0 : wordEnds[t - 1]!)) wordSeen = true;
      wordBest[t] = best;
      sum += best;
    }
    const key = termCount + Math.min(0.9999, sum / termCount);
    if (wordSeen)
      result = true; // Every posting of a word (every posting, when it is the only one) seen.
    else if (top.full && key < top.worstScore) result = true;
    else if (top.full && ties && key === top.worstScore && stopsInTies()) result = thresholdStats.inTies = true;
    else if (
      split !== undefined &&
      (blocked = split.blocking(
        listValue,
        ties ? readPastBar : undefined,
        top,
        matching,
        visitor,
        Math.max(NAME_SPLIT.minAllowance, marked.length),
        Math.max(ADAPTIVE.chunk, Math.floor(marked.length / ADAPTIVE.chunkEvery)),
      )) === -1
    )
      result = thresholdStats.byNames = true;
    // A name set read on by itself: bound again (unless past the budget).
    else if (split !== undefined && blocked === READ_ON) {
      thresholdStats.setReads++;
      if (marked.length > budget) result = false;
    }
    // Every prefix read, and the bound is not below the bar yet.
    else if (open === 0) result = false;
    // Long runs of equal impacts (a word in thousands of names) keep the bound up: past the budget, the block
    // scorer costs less.
    else if (marked.length > budget) result = false;
    else if (!top.full || !ADAPTIVE.enabled || !readCheapestWord((key - top.worstScore) * termCount)) {
      // In step: until the heap is full, as many postings a list as it lacks hits (at most 100: runs are tried for
      // pages of up to THRESHOLD.maxLimit hits); once full (no word's bound can drop below the bar within its
      // impact-ordered prefix), `fullStep`. A round computes every bound again, which costs more than the few
      // extra agents read (see ADAPTIVE).
      const least = ADAPTIVE.enabled && ADAPTIVE.fill ? Math.max(1, top.full ? ADAPTIVE.fullStep : top.missing) : 1;
      const step = Math.max(least, Math.floor(marked.length / ADAPTIVE.stepEvery));
      for (let e = 0; e < lists; e++) readUpTo(e, step);
    }
  }
  thresholdStats.visited = marked.length;
  thresholdStats.split = split !== undefined;
  return result;

  /**
   * Reads on in the lists of the word whose bound can drop by `gap` (the bound's excess over the bar, as a sum)
   * in the fewest postings: an agent must be high in every word to reach the top, so the cheapest word to rule
   * out settles it (a word in a few names: its run of name-field impacts; read in step, every list would go that
   * deep). False when no word can (then every list reads one more).
   */
  function readCheapestWord(gap: number): boolean {
    if (!(gap > 0)) return false;
    let bestWord = -1;
    let bestCost = Infinity;
    for (let t = 0, from = 0; t < termCount; from = wordEnds[t++]!) {
      const target = wordBest[t]! - gap;
      let cost = 0;
      for (let e = from; e < wordEnds[t]! && cost < bestCost; e++) cost += postingsAbove(e, target) - read[e]!;
      if (cost < bestCost) {
        bestCost = cost;
        bestWord = t;
      }
    }
    if (bestWord < 0 || bestCost === 0) return false;
    // At most a chunk at a time: the heap's bar rises as it reads, so the gap is measured again.
    for (let e = bestWord === 0 ? 0 : wordEnds[bestWord - 1]!; e < wordEnds[bestWord]!; e++) {
      const needed = postingsAbove(e, wordBest[bestWord]! - gap) - read[e]!;
      if (needed > 0) readUpTo(e, Math.min(needed, Math.max(ADAPTIVE.chunk, Math.floor(marked.length / ADAPTIVE.chunkEvery))));
    }
    return true;
  }

  /** Where list e's impacts drop so that its score is below `target` (Infinity: not within a truncated prefix). */
  function postingsAbove(e: number, target: number): number {
    const values = orderValues[e]!;
    let low = read[e]!;
    let high = values.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (Math.fround(scaled[e]! * values[mid]!) >= target) low = mid + 1;
      else high = mid;
    }
    return low === values.length && !complete[e] ? Infinity : low;
  }

  /** Whether list e has read the bar's agent or one ranked after it (nothing read: an unseen agent may be its first). */
  function readPastBar(e: number): boolean {
    if (read[e] === 0) return false;
    const worst = top.worstSlot;
    const last = orderSlots[e]![at(e)]!;
    const trust = trustInTieOrder(store, last);
    const worstTrust = store.trust[worst]!;
    return trust < worstTrust || (trust === worstTrust && store.docIds[last]! >= store.docIds[worst]!);
  }

  /**
   * The bound equals the bar (the k-th best score): may an unseen agent still tie it and win on trust or id?
   * 1. Per word, the best an unseen agent can score for it with an impact below the one just read in every
   *    list giving the word's bound (that impact - 1 there). If that lowers the bound below the bar for each
   *    word, an unseen agent at the bar has, for every word, the impact just read in one such list, and comes
   *    after that list's last read agent, since equal impacts are in tie order.
   * 2. If for some word every such list has read the bar's agent or one ranked after it, an unseen agent at
   *    the bar ranks after the bar's agent and cannot enter.
   */
  function stopsInTies(): boolean {
    const bar = top.worstScore;
    for (let t = 0, from = 0; t < termCount; from = wordEnds[t++]!) {
      let lower = 0;
      for (let e = from; e < wordEnds[t]!; e++) {
        if (ended(e)) continue;
        const value = orderValues[e]![at(e)]!;
        bound[0] = scaled[e]! * value;
        if (bound[0]! === wordBest[t]) bound[0] = scaled[e]! * (value - 1);
        if (bound[0]! > lower) lower = bound[0]!;
      }
      let sum = 0;
      for (let u = 0; u < termCount; u++) sum += u === t ? lower : wordBest[u]!;
      if (termCount + Math.min(0.9999, sum / termCount) >= bar) return false;
    }
    for (let t = 0, from = 0; t < termCount; from = wordEnds[t++]!) {
      if (wordBest[t] === 0) continue;
      let past = true;
      for (let e = from; e < wordEnds[t]! && past; e++) {
        if (ended(e)) continue;
        bound[0] = scaled[e]! * orderValues[e]![at(e)]!;
        if (bound[0]! === wordBest[t]) past = readPastBar(e);
      }
      if (past) return true;
    }
    return false;
  }
}
