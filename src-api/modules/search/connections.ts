import type { IndexStore } from './index-store';
import { grownBits, setBit } from './bitsets';
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
    // Very common tags: exact for the agents found so far, then a spread sample for new ones. Whether an agent
    // has such a tag is one bit of the tag's bitset: its own tag list would be a cache miss and a scan.
    const sampledBits = sampled.map((tag) => tagBitsOf(store, tag));
    const sampledWeights = sampled.map(weightOf);
    const sampledCount = sampled.length;
    const sampledWeightOf = (slot: number): number => {
      const word = slot >>> 5;
      const bit = 1 << (slot & 31);
      let weight = 0;
      for (let t = 0; t < sampledCount; t++) {
        const bits = sampledBits[t];
        if (bits === undefined ? store.slotHasTag(slot, sampled[t]!) : (bits[word]! & bit) !== 0) weight += sampledWeights[t]!;
      }
      return weight;
    };
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i]!;
      scores[slot] = scores[slot]! + sampledWeightOf(slot);
    }
    for (const tag of sampled) {
      const list = store.tagSlots[tag]!;
      const stride = Math.max(1, Math.ceil(list.length / options.connectionSamplePerList));
      for (let i = 0; i < list.length; i += stride) {
        const slot = list[i]!;
        if (scores[slot] !== 0 || alive[slot] === 0 || slot === source) continue;
        touched[touchedCount++] = slot;
        // Not touched yet, so it has none of the tags read in full: only the sampled ones count.
        scores[slot] = sampledWeightOf(slot);
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
  const top = new TopK(limit, store);
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

/**
 * The bitset of a tag's slots, brought up to date with its list first (slots are only appended to a list
 * between compactions, and compaction drops every bitset). Only for tags on at least 1 slot in 256, so a
 * bitset takes at most 4 times the memory of its list: at 1,000,000 agents on the bench's data, about 160
 * categories and capabilities of 125 KB each. Undefined for a rarer tag.
 */
function tagBitsOf(store: IndexStore, tag: number): Uint32Array | undefined {
  const list = store.tagSlots[tag]!;
  if (list.length * 256 < store.slotCount) return undefined;
  const bits = grownBits(store.tagBits[tag] ?? new Uint32Array(0), (store.capacity + 31) >>> 5);
  store.tagBits[tag] = bits;
  for (let i = store.tagBitsFilled[tag] ?? 0; i < list.length; i++) setBit(bits, list[i]!);
  store.tagBitsFilled[tag] = list.length;
  return bits;
}
