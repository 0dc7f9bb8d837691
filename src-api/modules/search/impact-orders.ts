import type { IndexStore } from './index-store';

/**
 * Impact-ordered prefixes of the postings of frequent terms (those with a bitset): per term, its best
 * postings by impact, highest first (equal impacts by slot), and their impacts. The threshold scorer
 * (`threshold.ts`) walks them to find the top hits of words most agents use after reading a few hundred
 * postings per word instead of bounding every block. Rebuilt by each compaction; slots added since are tails.
 *
 * A prefix keeps an eighth of the term's postings, at least 4,096 (all of them for a term with fewer): at
 * 100,000 agents on the bench's data about 4 MB, at 1,000,000 about 30 MB. A quarter gave the same hits
 * as often at 100,000 agents (the work budget of `threshold.ts` ends a run first) for 60 MB at 1,000,000.
 */
export const IMPACT_ORDER = {
  /** Share of a term's postings kept in impact order. */
  share: 1 / 8,
  /** Postings kept at least (all of them if the term has fewer). */
  minimum: 4_096,
};

const histogram = new Int32Array(65_536);

export function buildImpactOrders(store: IndexStore): void {
  store.impactOrderSlots = [];
  store.impactOrderValues = [];
  const { baseOffsets, baseSlots, baseImpacts } = store;
  for (let termId = 0; termId < store.baseTermCount; termId++) {
    if (store.termBits[termId] === undefined) continue;
    const start = baseOffsets[termId]!;
    const end = baseOffsets[termId + 1]!;
    const frequency = end - start;
    const keep = Math.min(frequency, Math.max(IMPACT_ORDER.minimum, Math.ceil(frequency * IMPACT_ORDER.share)));
    // A counting sort on the 16-bit impacts, highest first; postings are in slot order, so equal impacts stay in slot order.
    histogram.fill(0);
    for (let p = start; p < end; p++) histogram[baseImpacts[p]!]!++;
    let position = 0;
    for (let value = 65_535; value >= 0; value--) {
      const count = histogram[value]!;
      histogram[value] = position;
      position += count;
    }
    const slots = new Int32Array(keep);
    const values = new Uint16Array(keep);
    for (let p = start; p < end; p++) {
      const value = baseImpacts[p]!;
      const at = histogram[value]!++;
      if (at < keep) {
        slots[at] = baseSlots[p]!;
        values[at] = value;
      }
    }
    store.impactOrderSlots[termId] = slots;
    store.impactOrderValues[termId] = values;
  }
}
