import { buildAccelerators } from './accelerators';
import { hasBit, setBit } from './bitsets';
import { FIELD_COUNT, NAME_FIELD, quantiseImpact, TF_MAX, TF_SHIFT, type IndexStore } from './index-store';

// Compaction policy: tails up to 10 % of the base (at least 32k postings), tombstones up to 20 % of slots
// (at least 1,024); during a bulk catch-up, tails up to 1M postings (about 12 MB) before compacting early: measured
// at 100,000 agents, larger tails built no faster (3.5–4 s either way, 5 s at 8M) and left more freed memory behind.
const TAIL_SHARE_LIMIT = 0.1;
export const MIN_TAIL_POSTINGS_LIMIT = 1 << 15;
const DEAD_SHARE_LIMIT = 0.2;
const MIN_DEAD_SLOTS_LIMIT = 1024;
const BULK_TAIL_POSTINGS_LIMIT = 1 << 20;

/**
 * Whether the store is due for compaction: tombstones or tail postings grown
 * past their share (tails are slower to score). In the middle of a large
 * catch-up (`midBatch`) only a memory guard applies, so that loading 100,000
 * agents compacts once, at the end.
 *
 * At the end of a bulk load that compacted in its middle (its orders wait for
 * their tie order: `tieOrderDeferred`), the rest of its tail is folded in too
 * unless it is small: every query scores tail postings in full, and a share
 * of the base grows with the directory (at 1,000,000 agents the load's last
 * 12,000 agents, 0.5M postings against a limit of 4M, were three quarters of
 * a one-word search's CPU). The compaction builds the tie order as well.
 */
export function compactionDue(store: IndexStore, midBatch: boolean): boolean {
  if (midBatch) return store.tails.length > BULK_TAIL_POSTINGS_LIMIT;
  const tailLimit = store.tieOrderDeferred
    ? MIN_TAIL_POSTINGS_LIMIT
    : Math.max(MIN_TAIL_POSTINGS_LIMIT, store.baseSlots.length * TAIL_SHARE_LIMIT);
  return store.tails.length > tailLimit || store.deadCount > Math.max(MIN_DEAD_SLOTS_LIMIT, store.slotCount * DEAD_SHARE_LIMIT);
}

/**
 * Rewrites the postings without tombstones, turns tails into base postings and renumbers slots densely.
 * `tieOrder`: see buildImpactOrders.
 */
export function compact(store: IndexStore, tieOrder = true): void {
  const vocabularySize = store.vocabulary.size;
  const oldSlotCount = store.slotCount;
  const newSlotOf = new Int32Array(oldSlotCount);
  let live = 0;
  for (let slot = 0; slot < oldSlotCount; slot++) newSlotOf[slot] = store.alive[slot] === 1 ? live++ : -1;
  const { tails } = store;

  // Postings: count, then fill, term by term (base entries first: their slots are the older, smaller ones).
  const offsets = new Int32Array(vocabularySize + 1);
  let total = 0;
  for (let termId = 0; termId < vocabularySize; termId++) {
    offsets[termId] = total;
    if (termId < store.baseTermCount) {
      for (let p = store.baseOffsets[termId]!; p < store.baseOffsets[termId + 1]!; p++) if (newSlotOf[store.baseSlots[p]!]! >= 0) total++;
    }
    for (let entry = tails.head(termId); entry !== 0; entry = tails.previous(entry)) {
      if (newSlotOf[tails.slot(entry)]! >= 0) total++;
    }
  }
  offsets[vocabularySize] = total;
  const slots = new Int32Array(total);
  const impacts = new Uint16Array(total);
  const inName = new Uint32Array((total + 31) >>> 5);
  const documentFrequency = new Int32Array(Math.max(1024, vocabularySize * 2));
  let cursor = 0;
  for (let termId = 0; termId < vocabularySize; termId++) {
    if (termId < store.baseTermCount) {
      for (let p = store.baseOffsets[termId]!; p < store.baseOffsets[termId + 1]!; p++) {
        const newSlot = newSlotOf[store.baseSlots[p]!]!;
        if (newSlot < 0) continue;
        if (hasBit(store.baseNameBits, p)) setBit(inName, cursor);
        slots[cursor] = newSlot;
        impacts[cursor++] = store.baseImpacts[p]!;
      }
    }
    // Tail entries come newest first: fill their part from the end, so slots stay in ascending order.
    let at = cursor;
    for (let entry = tails.head(termId); entry !== 0; entry = tails.previous(entry)) {
      if (newSlotOf[tails.slot(entry)]! >= 0) at++;
    }
    cursor = at;
    for (let entry = tails.head(termId); entry !== 0; entry = tails.previous(entry)) {
      const slot = tails.slot(entry);
      const newSlot = newSlotOf[slot]!;
      if (newSlot < 0) continue;
      slots[--at] = newSlot;
      const frequencies = tails.frequencies(entry);
      impacts[at] = quantiseImpact(store.impactOf(frequencies, slot));
      if (((frequencies >> TF_SHIFT[NAME_FIELD]) & TF_MAX[NAME_FIELD]) !== 0) setBit(inName, at);
    }
    documentFrequency[termId] = cursor - offsets[termId]!;
  }
  store.baseOffsets = offsets;
  store.baseSlots = slots;
  store.baseImpacts = impacts;
  store.baseNameBits = inName;
  store.baseTermCount = vocabularySize;
  store.documentFrequency = documentFrequency;
  tails.clear();

  // Per-slot data moves down in place (a new slot is never above its old one); tags are re-pooled.
  const tagPool = new Int32Array(Math.max(1024, store.tagPoolLength));
  let poolLength = 0;
  for (let slot = 0; slot < oldSlotCount; slot++) {
    const target = newSlotOf[slot]!;
    if (target < 0) continue;
    store.docIds[target] = store.docIds[slot]!;
    store.alive[target] = 1;
    store.trust[target] = store.trust[slot]!;
    store.typeCodes[target] = store.typeCodes[slot]!;
    store.nameKeys[target] = store.nameKeys[slot]!;
    store.contentHashes[target] = store.contentHashes[slot]!;
    store.fieldLengths.copyWithin(target * FIELD_COUNT, slot * FIELD_COUNT, (slot + 1) * FIELD_COUNT);
    const start = store.tagStarts[slot]!;
    const count = store.tagCounts[slot]!;
    tagPool.set(store.tagPool.subarray(start, start + count), poolLength);
    store.tagStarts[target] = poolLength;
    store.tagCounts[target] = count;
    poolLength += count;
    store.slotById.set(store.docIds[target]!, target);
  }
  store.alive.fill(0, live, oldSlotCount);
  store.docIds.length = live;
  store.renumberSlots();
  store.tagPool = tagPool;
  store.tagPoolLength = poolLength;
  for (let tag = 0; tag < store.tagSlots.length; tag++) {
    const list = store.tagSlots[tag]!;
    let kept = 0;
    for (const slot of list) {
      const newSlot = newSlotOf[slot]!;
      if (newSlot >= 0) list[kept++] = newSlot;
    }
    list.length = kept;
  }
  // Slots were renumbered: the connections' tag bitsets are rebuilt on next use.
  store.tagBits = [];
  store.tagBitsFilled = [];
  store.slotCount = live;
  store.deadCount = 0;
  store.vocabulary.mergePending();
  buildAccelerators(store, tieOrder);
}
