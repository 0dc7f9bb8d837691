import { grownBits, setBit } from './bitsets';
import { buildIdRanks, buildImpactOrders } from './impact-orders';
import type { IndexStore } from './index-store';

/**
 * What lets a query on words most agents use skip most of their postings
 * (see `pruned.ts`), rebuilt by each compaction and kept up to date by ingestion:
 *
 * - a bitset of the live slots, and one per frequent term (exact totals by
 *   AND/OR and counting bits instead of visiting each match);
 * - per frequent term, for each block of BLOCK_SIZE slots, the highest impact
 *   of its postings there and where they start (block-max bounds);
 * - per term with block maxima, its blocks ordered by maximum (a one-word query
 *   walks them best first without computing a bound per block);
 * - per very frequent term, its impact for every base slot (0: no posting),
 *   so that scoring a block costs one load per matching agent instead of a
 *   walk over the block's postings (words in a quarter of all agents or more:
 *   2 bytes a slot each; made on a term's first query, as the bench's data
 *   has 97 such words at 100,000 agents, 18.5 MB, and its queries use 6);
 * - exact-name lookup: a chained hash table from name key to slots.
 */

/** 5: a block of 32 slots is exactly one word of the bitsets (the pruned scorer relies on it). */
export const BLOCK_BITS = 5;
export const BLOCK_SIZE = 1 << BLOCK_BITS;
/** A term gets a bitset when at least this share of the slots has it: then ORing its words costs no more than visiting its postings. */
const BITSET_SHARE = 1 / 32;
const BITSET_MIN_FREQUENCY = 512;
/** A term gets an impact column when at least this share of the slots has it. */
const COLUMN_SHARE = 1 / 4;
const COLUMN_MIN_FREQUENCY = 256;

/** Bitsets and block maxima of the base postings, for the terms frequent enough to need them. */
export function buildAccelerators(store: IndexStore, tieOrder = true): void {
  const slots = store.slotCount;
  const words = (slots + 31) >>> 5;
  store.aliveBits = new Uint32Array(Math.max(words, (store.capacity + 31) >>> 5));
  store.typeBits = [];
  store.typeEpoch++;
  for (let slot = 0; slot < slots; slot++) {
    if (store.alive[slot] !== 1) continue;
    setBit(store.aliveBits, slot);
    store.addLiveType(slot, store.typeCodes[slot]!);
  }
  store.baseSlotCount = slots;
  buildIdRanks(store);

  const blocks = (slots + BLOCK_SIZE - 1) >>> BLOCK_BITS;
  const bitsetMinimum = Math.max(BITSET_MIN_FREQUENCY, slots * BITSET_SHARE);
  const columnMinimum = Math.max(COLUMN_MIN_FREQUENCY, slots * COLUMN_SHARE);
  // Block arrays cost 6 bytes a block: only for terms with at least as many postings as there are blocks.
  const blockMinimum = Math.max(BLOCK_SIZE, blocks);
  const { baseOffsets, baseSlots, baseImpacts } = store;
  store.termBits = [];
  store.bitsetsStamp++;
  store.blockMaxes = [];
  store.blockStarts = [];
  // Made on first use (IndexStore.impactColumn): a column is 2 bytes a slot, and most frequent words are never searched.
  store.impactColumns = [];
  store.columnMinimum = columnMinimum;
  store.blockOrders = [];
  for (let termId = 0; termId < store.baseTermCount; termId++) {
    const start = baseOffsets[termId]!;
    const end = baseOffsets[termId + 1]!;
    const frequency = end - start;
    if (frequency >= bitsetMinimum) {
      const bits = new Uint32Array(words);
      for (let p = start; p < end; p++) setBit(bits, baseSlots[p]!);
      store.termBits[termId] = bits;
    }
    if (frequency >= blockMinimum) {
      const maxes = new Uint16Array(blocks);
      const starts = new Int32Array(blocks + 1);
      starts[0] = start;
      let block = 0;
      for (let p = start; p < end; p++) {
        const slotBlock = baseSlots[p]! >>> BLOCK_BITS;
        while (block < slotBlock) starts[++block] = p;
        if (baseImpacts[p]! > maxes[slotBlock]!) maxes[slotBlock] = baseImpacts[p]!;
      }
      while (block < blocks) starts[++block] = end;
      store.blockMaxes[termId] = maxes;
      store.blockStarts[termId] = starts;
      store.blockOrders[termId] = orderByMaximum(maxes);
    }
  }
  buildImpactOrders(store, tieOrder);
  rebuildNameTable(store);
}

/** Block numbers by block maximum, highest first: a counting sort over the 16-bit maxima. */
const orderCounts = new Int32Array(65537);

function orderByMaximum(maxes: Uint16Array): Int32Array {
  const counts = orderCounts;
  counts.fill(0);
  for (let block = 0; block < maxes.length; block++) counts[65535 - maxes[block]! + 1]!++;
  for (let value = 1; value <= 65536; value++) counts[value]! += counts[value - 1]!;
  const order = new Int32Array(maxes.length);
  for (let block = 0; block < maxes.length; block++) order[counts[65535 - maxes[block]!]!++] = block;
  return order;
}

/** A new tail posting: the term's bitset (if it has one) learns the slot. */
export function noteTailPosting(store: IndexStore, termId: number, slot: number): void {
  const bits = store.termBits[termId];
  if (bits === undefined) return;
  store.bitsetsStamp++;
  const grown = grownBits(bits, (slot >>> 5) + 1);
  setBit(grown, slot);
  if (grown !== bits) store.termBits[termId] = grown;
}

function nameBucket(store: IndexStore, nameKey: number): number {
  // The key is a 53-bit hash: its low 32 bits are as good as any.
  return (nameKey >>> 0) & (store.nameHeads.length - 1);
}

/** Adds `slot` under its name key (set before calling). */
export function addNameEntry(store: IndexStore, slot: number): void {
  if (store.slotCount * 2 > store.nameHeads.length) {
    rebuildNameTable(store);
    return;
  }
  const key = store.nameKeys[slot]!;
  if (key === -1) return;
  const bucket = nameBucket(store, key);
  store.nameNext[slot] = store.nameHeads[bucket]!;
  store.nameHeads[bucket] = slot + 1;
}

function rebuildNameTable(store: IndexStore): void {
  let size = 1024;
  while (size < store.slotCount * 4) size *= 2;
  store.nameHeads = new Int32Array(size);
  if (store.nameNext.length < store.capacity) store.nameNext = new Int32Array(store.capacity);
  for (let slot = 0; slot < store.slotCount; slot++) {
    const key = store.nameKeys[slot]!;
    if (store.alive[slot] !== 1 || key === -1) continue;
    const bucket = nameBucket(store, key);
    store.nameNext[slot] = store.nameHeads[bucket]!;
    store.nameHeads[bucket] = slot + 1;
  }
}

/** Calls `visit` for each live slot whose name key is `nameKey`. */
export function forEachNamed(store: IndexStore, nameKey: number, visit: (slot: number) => void): void {
  if (nameKey === -1) return;
  for (let entry = store.nameHeads[nameBucket(store, nameKey)]!; entry !== 0; entry = store.nameNext[entry - 1]!) {
    const slot = entry - 1;
    if (store.alive[slot] === 1 && store.nameKeys[slot] === nameKey) visit(slot);
  }
}
