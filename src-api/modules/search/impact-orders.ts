import { hasBit, setBit } from './bitsets';
import type { IndexStore } from './index-store';

/**
 * Impact-ordered prefixes of the postings of frequent terms (those with a bitset): per term, its best
 * postings by impact, highest first, and their impacts. The threshold scorer (`threshold.ts`) walks them
 * to find the top hits of words most agents use after reading a few hundred postings per word instead of
 * bounding every block. Rebuilt by each compaction; slots added since are tails.
 *
 * Equal impacts are ordered as the ranking breaks ties: trust (highest first), then id. Words most agents
 * use have long runs of equal impacts (tf 1, similar lengths), so the k-th best score is often the bound
 * itself; in this order the threshold scorer can still stop inside such a run, once it has read past the
 * k-th best agent's place in it (see `threshold.ts`). A trust changed in place since (`noteTrustChange`)
 * keeps its old place: those agents are scored up front as exceptions.
 *
 * A prefix keeps an eighth of the term's postings, at least 4,096 (all of them for a term with fewer): at
 * 100,000 agents on the bench's data about 4 MB, at 1,000,000 about 30 MB. A quarter gave the same hits
 * as often at 100,000 agents (the work budget of `threshold.ts` ends a run first) for 60 MB at 1,000,000.
 *
 * Also per such term: a bitset of the slots with the term in their name (only if any), how many, the highest
 * impact outside names, and (if any name has it) its rest order: the postings outside names ordered and cut as the
 * impact order, which a name set without the word in its names reads (`set-reads.ts`) instead of running through
 * the thousands of names that hold it (at 100,000 agents a few hundred KB more).
 */
export const IMPACT_ORDER = {
  /** Share of a term's postings kept in impact order. */
  share: 1 / 8,
  /** Postings kept at least (all of them if the term has fewer). */
  minimum: 4_096,
};

/** Trust changes in place kept as exceptions at most; past it the tie order is stale until the next compaction. */
export const TIE_EXCEPTIONS_MAX = 1_024;

const histogram = new Int32Array(65_536);

/**
 * `tieOrder` false (compactions in the middle of a bulk catch-up, about every 20,000 agents): equal impacts stay
 * in slot order, which costs no sort, and the tie order is marked stale until `SearchIndex.maybeCompact` rebuilds
 * the orders at the end.
 */
export function buildImpactOrders(store: IndexStore, tieOrder = true): void {
  store.impactOrderSlots = [];
  store.impactOrderValues = [];
  store.restMaxes = [];
  store.nameBits = [];
  store.bitsetsStamp++;
  store.nameCounts = [];
  store.restOrderSlots = [];
  store.restOrderValues = [];
  store.restOrdersWithin.clear();
  store.restOrdersWithinCount = 0;
  store.trustAtCompaction.clear();
  store.tieOrderStale = store.tieOrderDeferred = !tieOrder;
  const ranks = tieOrder ? tieRanks(store) : slotRanks(store);
  const words = (store.baseSlotCount + 31) >>> 5;
  for (let termId = 0; termId < store.baseTermCount; termId++) {
    if (store.termBits[termId] === undefined) continue;
    const start = store.baseOffsets[termId]!;
    const end = store.baseOffsets[termId + 1]!;
    const { slots, values } = impactOrder(store, start, end, ranks, tieOrder);
    store.impactOrderSlots[termId] = slots;
    store.impactOrderValues[termId] = values;
    // Where the term is outside names: how many agents, and the highest impact among them.
    let named = 0;
    let restMax = 0;
    for (let p = start; p < end; p++) {
      if (hasBit(store.baseNameBits, p)) named++;
      else if (store.baseImpacts[p]! > restMax) restMax = store.baseImpacts[p]!;
    }
    store.nameCounts[termId] = named;
    store.restMaxes[termId] = restMax;
    if (named === 0) continue;
    const nameBits = new Uint32Array(words);
    for (let p = start; p < end; p++) if (hasBit(store.baseNameBits, p)) setBit(nameBits, store.baseSlots[p]!);
    store.nameBits[termId] = nameBits;
    const rest = impactOrder(store, start, end, ranks, tieOrder, true);
    store.restOrderSlots[termId] = rest.slots;
    store.restOrderValues[termId] = rest.values;
  }
}

let cutoffRanks = new Int32Array(0);

/**
 * The prefix of postings [start, end) by impact, highest first, then tie rank. A counting sort on the 16-bit impacts, highest first, of the tie ranks;
 * each run of equal impacts is then sorted by rank. The run the prefix ends in is sorted whole first, so the
 * prefix keeps its best ranks.
 */
function impactOrder(
  store: IndexStore,
  start: number,
  end: number,
  { rankOf, slotAt }: { rankOf: Int32Array; slotAt: Int32Array },
  tieOrder: boolean,
  /** Only the postings outside the agents' names (the term's rest order, see `IndexStore.restOrderSlots`). */
  restOnly = false,
): { slots: Int32Array; values: Uint16Array } {
  const { baseSlots, baseImpacts, baseNameBits } = store;
  histogram.fill(0);
  let frequency = 0;
  for (let p = start; p < end; p++) {
    if (restOnly && hasBit(baseNameBits, p)) continue;
    histogram[baseImpacts[p]!]!++;
    frequency++;
  }
  const keep = Math.min(frequency, Math.max(IMPACT_ORDER.minimum, Math.ceil(frequency * IMPACT_ORDER.share)));
  if (keep === 0) return { slots: new Int32Array(0), values: new Uint16Array(0) };
  let position = 0;
  let cutoff = -1;
  for (let value = 65_535; value >= 0; value--) {
    const count = histogram[value]!;
    histogram[value] = position;
    if (cutoff < 0 && position + count >= keep) cutoff = value;
    position += count;
  }
  const slots = new Int32Array(keep);
  const values = new Uint16Array(keep);
  const cutoffStart = histogram[cutoff]!;
  if (cutoffRanks.length < frequency) cutoffRanks = new Int32Array(frequency);
  let cutoffCount = 0;
  for (let p = start; p < end; p++) {
    const value = baseImpacts[p]!;
    if (value < cutoff || (restOnly && hasBit(baseNameBits, p))) continue;
    const rank = rankOf[baseSlots[p]!]!;
    if (value === cutoff) {
      cutoffRanks[cutoffCount++] = rank;
      continue;
    }
    const at = histogram[value]!++;
    slots[at] = rank;
    values[at] = value;
  }
  // Runs above the cutoff: each now ends where the next higher value's run starts (in slot order without tie order).
  for (let at = 0; tieOrder && at < cutoffStart;) {
    const value = values[at]!;
    const runEnd = histogram[value]!;
    slots.subarray(at, runEnd).sort();
    at = runEnd;
  }
  const cut = cutoffRanks.subarray(0, cutoffCount).sort();
  slots.set(cut.subarray(0, keep - cutoffStart), cutoffStart);
  values.fill(cutoff, cutoffStart, keep);
  for (let i = 0; i < keep; i++) slots[i] = slotAt[slots[i]!]!;
  return { slots, values };
}

/**
 * Each base slot's id rank (`IndexStore.idRanks`): its place among the base slots' ids, ascending as JavaScript
 * compares strings. A catch-up reads agents by id, so the slots are usually in id order already: one pass checks
 * it, and only otherwise are the slots sorted by id (Array sort, whose runs make mostly sorted input cheap).
 */
export function buildIdRanks(store: IndexStore): void {
  const slots = store.baseSlotCount;
  const { docIds } = store;
  const ranks = new Int32Array(slots);
  let sorted = true;
  for (let slot = 1; slot < slots && sorted; slot++) sorted = docIds[slot - 1]! < docIds[slot]!;
  if (sorted) {
    for (let slot = 0; slot < slots; slot++) ranks[slot] = slot;
  } else {
    const order = Array.from({ length: slots }, (_, slot) => slot);
    order.sort((a, b) => {
      const idA = docIds[a]!;
      const idB = docIds[b]!;
      return idA < idB ? -1 : idA > idB ? 1 : 0;
    });
    for (let rank = 0; rank < slots; rank++) ranks[order[rank]!] = rank;
  }
  store.idRanks = ranks;
}

/** Each base slot's place in the ranking's tie-break order (trust, highest first, then id), and the slot at each place. */
function tieRanks(store: IndexStore): { rankOf: Int32Array; slotAt: Int32Array } {
  const slots = store.baseSlotCount;
  const { trust, idRanks } = store;
  const slotAt = new Int32Array(slots);
  for (let slot = 0; slot < slots; slot++) slotAt[slot] = slot;
  slotAt.sort((a, b) => trust[b]! - trust[a]! || idRanks[a]! - idRanks[b]!);
  const rankOf = new Int32Array(slots);
  for (let rank = 0; rank < slots; rank++) rankOf[slotAt[rank]!] = rank;
  return { rankOf, slotAt };
}

/** Slot order as the tie order: each slot its own rank. */
function slotRanks(store: IndexStore): { rankOf: Int32Array; slotAt: Int32Array } {
  const identity = new Int32Array(store.baseSlotCount);
  for (let slot = 0; slot < identity.length; slot++) identity[slot] = slot;
  return { rankOf: identity, slotAt: identity };
}

/** A trust score changed in place: a base slot keeps its place in the tie order, so it is remembered as an exception. */
export function noteTrustChange(store: IndexStore, slot: number, trust: number): void {
  const old = store.trust[slot]!;
  if (old === trust) return;
  if (slot < store.baseSlotCount && !store.tieOrderStale && !store.trustAtCompaction.has(slot)) {
    if (store.trustAtCompaction.size >= TIE_EXCEPTIONS_MAX) {
      store.tieOrderStale = true;
      store.trustAtCompaction.clear();
    } else store.trustAtCompaction.set(slot, old);
  }
  store.trust[slot] = trust;
  if (trust < store.lowestTrust) store.lowestTrust = trust;
}

/** The trust a base slot had at compaction: its place in the tie order. */
export function trustInTieOrder(store: IndexStore, slot: number): number {
  return store.trustAtCompaction.get(slot) ?? store.trust[slot]!;
}
