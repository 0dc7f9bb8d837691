import type { IndexStore } from './index-store';
import { TopK } from './top-k';

export const CONNECTION_WEIGHTS = { author: 4, category: 3, capability: 1 } as const;

export interface ConnectionOptions {
  /** Tag-list entries read in full per connections request; lists beyond it are sampled. */
  connectionScanBudget: number;
  /** Entries sampled from each list that did not fit the budget. */
  connectionSamplePerList: number;
}

/** By tag kind: author, category, capability (the store's TAG_* order). */
const TAG_WEIGHT = [CONNECTION_WEIGHTS.author, CONNECTION_WEIGHTS.category, CONNECTION_WEIGHTS.capability] as const;
const TAG_KIND_NAMES = ['author', 'category', 'capability'] as const;

/** A related agent: its score and the tags (by kind, as keys) it shares with the requested one. */
export interface ConnectionHit {
  id: string;
  score: number;
  shared: { kind: (typeof TAG_KIND_NAMES)[number]; key: string }[];
}

/**
 * Agents related to `source` by shared categories, author and capabilities, best first.
 */
export function findConnections(store: IndexStore, source: number, limit: number, options: ConnectionOptions): ConnectionHit[] {
  const sourceTags = Array.from(store.tagPool.subarray(store.tagStarts[source]!, store.tagStarts[source]! + store.tagCounts[source]!));
  sourceTags.sort((a, b) => store.tagSlots[a]!.length - store.tagSlots[b]!.length);
  const weightOf = (tag: number): number => TAG_WEIGHT[store.tagKinds[tag]!]!;

  // Small integer scores in their own array: a typical request adds up some 16,000 list entries, and
  // 2 bytes a slot keep those random reads in cache. `counts[score]` follows how many agents have each
  // score, so the ranking below can skip all but the best. Dead slots and the source are left at 0.
  if (store.connectionScores.length < store.slotCount) store.connectionScores = new Uint16Array(store.accumulated.length);
  const scores = store.connectionScores;
  const touched = store.accumulatedTouched;
  const alive = store.alive;
  let maxScore = 0;
  for (const tag of sourceTags) maxScore += weightOf(tag);
  const counts = new Int32Array(maxScore + 1);
  let touchedCount = 0;
  let budget = options.connectionScanBudget;
  const sampled: number[] = [];
  // Rarest lists first, in full while the budget lasts.
  for (const tag of sourceTags) {
    const list = store.tagSlots[tag]!;
    if (list.length > budget) {
      sampled.push(tag);
      continue;
    }
    budget -= list.length;
    const weight = weightOf(tag);
    for (let i = 0; i < list.length; i++) {
      const slot = list[i]!;
      const score = scores[slot]!;
      if (score === 0) {
        if (alive[slot] === 0 || slot === source) continue;
        touched[touchedCount++] = slot;
      } else counts[score]!--;
      scores[slot] = score + weight;
      counts[score + weight]!++;
    }
  }
  if (sampled.length > 0) {
    // Very common tags: exact for the agents found so far, then a spread sample for new ones.
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i]!;
      for (const tag of sampled) if (store.slotHasTag(slot, tag)) scores[slot] = scores[slot]! + weightOf(tag);
    }
    for (const tag of sampled) {
      const list = store.tagSlots[tag]!;
      const stride = Math.max(1, Math.ceil(list.length / options.connectionSamplePerList));
      for (let i = 0; i < list.length; i += stride) {
        const slot = list[i]!;
        if (scores[slot] !== 0 || alive[slot] === 0 || slot === source) continue;
        touched[touchedCount++] = slot;
        for (const sourceTag of sourceTags) {
          if (store.slotHasTag(slot, sourceTag)) scores[slot] = scores[slot]! + weightOf(sourceTag);
        }
      }
    }
    counts.fill(0);
    for (let i = 0; i < touchedCount; i++) counts[scores[touched[i]!]!]!++;
  }

  // Rank (by score, trust, id) only the agents at or above the score where the top `limit` end:
  // thousands of agents sharing one category stay out of the heap.
  let threshold = 1;
  for (let score = maxScore, above = 0; score >= 1; score--) {
    above += counts[score]!;
    if (above >= limit) {
      threshold = score;
      break;
    }
  }
  const top = new TopK(limit, store.trust, store.docIds);
  for (let i = 0; i < touchedCount; i++) {
    const slot = touched[i]!;
    if (scores[slot]! >= threshold) top.offer(slot, scores[slot]!);
    scores[slot] = 0;
  }
  return top.sorted().map(({ slot, score }) => ({
    id: store.docIds[slot]!,
    score,
    shared: sourceTags
      .filter((tag) => store.slotHasTag(slot, tag))
      .map((tag) => ({ kind: TAG_KIND_NAMES[store.tagKinds[tag]!]!, key: store.tagKeys[tag]! })),
  }));
}
