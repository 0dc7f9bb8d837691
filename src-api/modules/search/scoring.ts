import { DEPRECATED_FACTOR, IMPACT_SCALE, TAG_CAPABILITY, tagKey, typeCodeOf, type IndexStore } from './index-store';
import type { Expansions, QueryExpander } from './expansion';
import type { ParsedQuery } from './text';
import { popcount32 as bitCount } from './bitsets';
import { prunedSearch } from './pruned';
import { TopK } from './top-k';

export interface SearchFilters {
  /** Exact agent type. */
  type?: string;
  /** Only agents with trust_score ≥ this. */
  minTrust?: number;
  /** Every one of these capabilities, compared case-insensitively. */
  capabilities?: readonly string[];
}

export interface ScoredId {
  id: string;
  score: number;
  /** The agent's slot in the index when ranked (a handle for the profile cache: see ProfileCache.visitMany). */
  slot: number;
}

export interface SearchHits {
  hits: ScoredId[];
  /** Matches before the limit. */
  total: number;
}

export interface PreparedFilter {
  typeCode: number;
  minTrust: number;
  /** 0: no capability filter; else slots with mark[slot] === capabilityStamp pass. */
  capabilityStamp: number;
  /** With a capability filter: the shortest required list, a superset of the passing slots. */
  candidates: number[] | null;
  /**
   * One required capability: `candidates` are exactly the agents that have it, so a scan of them needs no mark, and
   * the marks are stamped only when something reads them (`markCapabilities`): the pruned scorer's sparse path does not.
   */
  exactCandidates: boolean;
  /** The marks are not stamped with `capabilityStamp` yet. */
  unstamped: boolean;
}

/** Stamps the capability marks of a filter that left them for later (one capability); call before reading `marks`. */
export function markCapabilities(store: IndexStore, filter: PreparedFilter): void {
  if (!filter.unstamped) return;
  const { marks } = store;
  const stamp = filter.capabilityStamp;
  for (const slot of filter.candidates!) marks[slot] = stamp;
  filter.unstamped = false;
}

/** Filters as typed-array tests; null when nothing can pass (a capability no agent has). */
export function prepareFilter(store: IndexStore, filters: SearchFilters): PreparedFilter | null {
  const typeCode = filters.type === undefined ? -1 : typeCodeOf(filters.type);
  const minTrust = filters.minTrust ?? -Infinity;
  const keys = [...new Set((filters.capabilities ?? []).map(tagKey).filter((key) => key.length > 0))];
  if (keys.length === 0) return { typeCode, minTrust, capabilityStamp: 0, candidates: null, exactCandidates: false, unstamped: false };
  const lists: number[][] = [];
  for (const key of keys) {
    const tag = store.tagIdsByKind[TAG_CAPABILITY]!.get(key);
    if (tag === undefined) return null;
    lists.push(store.tagSlots[tag]!);
  }
  // One list: its stamp is taken now (the newest, as for several), its marks written when asked.
  if (lists.length === 1) {
    return { typeCode, minTrust, capabilityStamp: store.nextMarkStamp(), candidates: lists[0]!, exactCandidates: true, unstamped: true };
  }
  lists.sort((a, b) => a.length - b.length);
  // Intersect by re-stamping: a slot carries the newest stamp only if it is in every list so far.
  let stamp = store.nextMarkStamp();
  for (const slot of lists[0]!) store.marks[slot] = stamp;
  for (let i = 1; i < lists.length; i++) {
    const next = store.nextMarkStamp();
    for (const slot of lists[i]!) if (store.marks[slot] === stamp) store.marks[slot] = next;
    stamp = next;
  }
  return { typeCode, minTrust, capabilityStamp: stamp, candidates: lists[0]!, exactCandidates: false, unstamped: false };
}

/** Every agent passing the filter, by trust score (score 0). */
export function browse(store: IndexStore, limit: number, filter: PreparedFilter): SearchHits {
  markCapabilities(store, filter);
  const { alive, trust, typeCodes, marks } = store;
  const { typeCode, minTrust, capabilityStamp, candidates } = filter;
  const top = new TopK(limit, store);
  let total = 0;
  const consider = (slot: number): void => {
    if (alive[slot] === 0) return;
    if (typeCode >= 0 && typeCodes[slot] !== typeCode) return;
    if (trust[slot]! < minTrust) return;
    if (capabilityStamp !== 0 && marks[slot] !== capabilityStamp) return;
    total++;
    top.offer(slot, 0);
  };
  if (candidates) for (const slot of candidates) consider(slot);
  else for (let slot = 0; slot < store.slotCount; slot++) consider(slot);
  return { hits: top.sorted().map(({ slot }) => ({ id: store.docIds[slot]!, score: 0, slot })), total };
}

/** One query word: its bit in the match masks and the vocabulary terms it stands for. */
export interface PlannedTerm {
  bit: number;
  expansions: Expansions;
  /** Postings of all its expansions. */
  postings: number;
}

/** Whether a text query is scored exhaustively, by the pruned scorer, or whichever suits it (`auto`). */
export type ScoringMode = 'auto' | 'exhaustive' | 'pruned';

/** Below this many postings for the whole query, scoring them all is cheaper than setting up pruning. */
const PRUNING_MIN_POSTINGS = 4_096;

/**
 * Agents matching a parsed text query, best first.
 *
 * Public score = matched query terms + 1 for an exact-name match + relevance,
 * where relevance in [0, 1) is the mean over query terms of the best
 * expansion's factor × idf/idfMax × impact. So an exact name ranks first,
 * then agents matching more query terms, then by BM25F relevance. When some
 * agent matches every query term only such agents are returned; otherwise
 * any agent matching at least one. Ties: trust score, then id.
 *
 * Queries on rare words score every posting (`exhaustiveSearch`); queries on
 * words many agents use go to the pruned scorer (`prunedSearch`), which
 * returns exactly the same hits and total.
 */
export function textSearch(
  store: IndexStore,
  expander: QueryExpander,
  parsed: ParsedQuery,
  limit: number,
  filter: PreparedFilter,
  mode: ScoringMode = 'auto',
): SearchHits {
  const termCount = parsed.terms.length;
  // Completions only for the last word, the one still being typed: cheaper, and less noise.
  const plan: PlannedTerm[] = parsed.terms.map((term, index) => {
    const expansions = expander.expand(term, index === termCount - 1);
    const postings = expansions.terms.reduce((sum, { termId }) => sum + store.documentFrequencyOf(termId), 0);
    return { bit: 1 << index, expansions, postings };
  });
  // Rarest first: then, when every word is required, each later word only looks at the few agents still in the running.
  plan.sort((a, b) => a.postings - b.postings);
  const postings = plan.reduce((sum, term) => sum + term.postings, 0);
  const prune =
    mode === 'pruned' || (mode === 'auto' && store.baseSlotCount > 0 && postings >= Math.max(PRUNING_MIN_POSTINGS, store.slotCount / 16));
  return prune ? prunedSearch(store, plan, parsed, limit, filter) : exhaustiveSearch(store, plan, parsed, limit, filter);
}

/** Every posting of every query word scored: the reference the pruned scorer must equal. */
function exhaustiveSearch(store: IndexStore, plan: PlannedTerm[], parsed: ParsedQuery, limit: number, filter: PreparedFilter): SearchHits {
  const termCount = parsed.terms.length;
  const fullMask = termCount === 32 ? 0xffffffff : (1 << termCount) - 1;
  let touchedCount = collect(store, plan, filter, true);
  const masks = store.matchedMasks;
  const touched = store.accumulatedTouched;
  let complete = 0;
  for (let i = 0; i < touchedCount; i++) if (masks[touched[i]!] === fullMask) complete++;
  const requireAll = complete > 0;
  if (!requireAll && termCount > 1) {
    // No agent has every word: start again, counting agents with any of them.
    resetAccumulated(store, touchedCount);
    touchedCount = collect(store, plan, filter, false);
  }

  const accumulated = store.accumulated;
  const top = new TopK(limit, store);
  for (let i = 0; i < touchedCount; i++) {
    const slot = touched[i]!;
    const mask = masks[slot]!;
    if (!requireAll || mask === fullMask) {
      const relevance = Math.min(0.9999, accumulated[slot]! / termCount);
      const exactName = store.nameKeys[slot] === parsed.nameKey ? 1 : 0;
      const score = bitCount(mask) + exactName + relevance;
      top.offer(slot, store.deprecated[slot] ? score * DEPRECATED_FACTOR : score);
    }
  }
  resetAccumulated(store, touchedCount);
  return { hits: publicHits(store, top), total: requireAll ? complete : touchedCount };
}

/** The heap's hits, best first, scores cut to 4 decimals. */
export function publicHits(store: IndexStore, top: TopK): ScoredId[] {
  return top.sorted().map(({ slot, score }) => ({ id: store.docIds[slot]!, score: Math.floor(score * 10_000) / 10_000, slot }));
}

/** idf of a term with `frequency` postings among the store's slots, and the largest possible (a term in one agent). */
export function idfScale(store: IndexStore): { idf: (frequency: number) => number; maxIdf: number } {
  const documents = Math.max(1, store.slotCount);
  return {
    idf: (frequency) => Math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5)),
    maxIdf: Math.log(1 + (documents - 0.5) / 1.5),
  };
}

/** A term's weight: factor × idf / idfMax, a completion or typo never counted as rarer than the word actually typed. */
export function termWeight(store: IndexStore, expansions: Expansions, termId: number, factor: number): number {
  const { idf, maxIdf } = idfScale(store);
  const idfCap = expansions.exactFrequency > 0 ? idf(expansions.exactFrequency) : Infinity;
  return (factor * Math.min(idf(store.documentFrequency[termId]!), idfCap)) / maxIdf;
}

/**
 * Scores the query words' postings into `accumulated` and `matchedMasks`
 * (one bit per query word) for the agents passing the filter; returns how
 * many agents are in `accumulatedTouched`. When `conjunctive`, a word only
 * scores agents that matched every word before it (so the result holds all
 * the agents matching every word, and some that do not).
 */
function collect(store: IndexStore, plan: PlannedTerm[], filter: PreparedFilter, conjunctive: boolean): number {
  markCapabilities(store, filter);
  const best = store.termBest;
  const termTouched = store.termTouched;
  const accumulated = store.accumulated;
  const masks = store.matchedMasks;
  const touched = store.accumulatedTouched;
  const { alive, trust, typeCodes, marks, baseSlots, baseImpacts, baseOffsets, tails } = store;
  const { typeCode, minTrust, capabilityStamp } = filter;
  let touchedCount = 0;
  let seenMask = 0;

  for (const { bit, expansions } of plan) {
    // -1: any agent; otherwise only agents whose matched words are exactly those seen so far.
    const required = conjunctive ? seenMask : -1;
    let termTouchedCount = 0;
    for (const { termId, factor } of expansions.terms) {
      if (store.documentFrequency[termId] === 0) continue;
      const weight = termWeight(store, expansions, termId, factor);
      if (termId < store.baseTermCount) {
        const scaled = weight / IMPACT_SCALE;
        const end = baseOffsets[termId + 1]!;
        for (let p = baseOffsets[termId]!; p < end; p++) {
          const slot = baseSlots[p]!;
          if (required >= 0 && masks[slot] !== required) continue;
          if (alive[slot] === 0) continue;
          if (typeCode >= 0 && typeCodes[slot] !== typeCode) continue;
          if (trust[slot]! < minTrust) continue;
          if (capabilityStamp !== 0 && marks[slot] !== capabilityStamp) continue;
          const score = scaled * baseImpacts[p]!;
          if (score > best[slot]!) {
            if (best[slot] === 0) termTouched[termTouchedCount++] = slot;
            best[slot] = score;
          }
        }
      }
      for (let entry = tails.head(termId); entry !== 0; entry = tails.previous(entry)) {
        const slot = tails.slot(entry);
        if (required >= 0 && masks[slot] !== required) continue;
        if (alive[slot] === 0) continue;
        if (typeCode >= 0 && typeCodes[slot] !== typeCode) continue;
        if (trust[slot]! < minTrust) continue;
        if (capabilityStamp !== 0 && marks[slot] !== capabilityStamp) continue;
        const score = weight * store.impactOf(tails.frequencies(entry), slot);
        if (score > best[slot]!) {
          if (best[slot] === 0) termTouched[termTouchedCount++] = slot;
          best[slot] = score;
        }
      }
    }
    for (let i = 0; i < termTouchedCount; i++) {
      const slot = termTouched[i]!;
      if (masks[slot] === 0) touched[touchedCount++] = slot;
      accumulated[slot] = accumulated[slot]! + best[slot]!;
      masks[slot] = masks[slot]! | bit;
      best[slot] = 0;
    }
    seenMask |= bit;
    // Nobody matched every word so far: nobody will.
    if (conjunctive && termTouchedCount === 0) break;
  }
  return touchedCount;
}

function resetAccumulated(store: IndexStore, touchedCount: number): void {
  for (let i = 0; i < touchedCount; i++) {
    const slot = store.accumulatedTouched[i]!;
    store.accumulated[slot] = 0;
    store.matchedMasks[slot] = 0;
  }
}
