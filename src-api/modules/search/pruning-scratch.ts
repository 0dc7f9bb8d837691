import { BLOCK_SIZE } from './accelerators';
import { grownBits, grownInt32 } from './bitsets';
import type { BlockScratch } from './block-scorer';
import type { IndexStore } from './index-store';
import { WordUnions } from './word-unions';

/** Blocks by bound, highest first: a binary max-heap on typed arrays, built in one pass. */
export class BlockHeap {
  size = 0;
  constructor(
    private readonly blocks: Int32Array,
    private readonly keys: Float64Array,
  ) {}

  push(block: number, key: number): void {
    this.blocks[this.size] = block;
    this.keys[this.size++] = key;
  }

  heapify(): void {
    for (let i = (this.size >>> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  get topKey(): number {
    return this.keys[0]!;
  }

  pop(): number {
    const block = this.blocks[0]!;
    this.size--;
    this.blocks[0] = this.blocks[this.size]!;
    this.keys[0] = this.keys[this.size]!;
    this.siftDown(0);
    return block;
  }

  private siftDown(index: number): void {
    const { blocks, keys, size } = this;
    for (;;) {
      const left = index * 2 + 1;
      const right = left + 1;
      let best = index;
      if (left < size && keys[left]! > keys[best]!) best = left;
      if (right < size && keys[right]! > keys[best]!) best = right;
      if (best === index) return;
      const block = blocks[best]!;
      blocks[best] = blocks[index]!;
      blocks[index] = block;
      const key = keys[best]!;
      keys[best] = keys[index]!;
      keys[index] = key;
      index = best;
    }
  }
}

/** Scratch arrays of the pruned scorer, kept per store and grown as needed (a query is synchronous: one set is enough). */
export class PruningScratch implements BlockScratch {
  matching: Uint32Array = new Uint32Array(0);
  private unionBits: Uint32Array = new Uint32Array(0);
  private wordBits: Uint32Array = new Uint32Array(0);
  private capabilityBits: Uint32Array = new Uint32Array(0);
  private seen: Uint32Array = new Uint32Array(0);
  private termBounds: Float32Array[] = [];
  private bonus = new Uint8Array(0);
  private heapBlocks = new Int32Array(0);
  private heapKeys = new Float64Array(0);
  private keys = new Float64Array(0);
  private sums = new Float64Array(0);
  private present = new Uint8Array(0);
  /** One block's per-slot word best (float32, as `termBest`), sum and matched words: all zero between blocks. */
  readonly blockBest = new Float32Array(BLOCK_SIZE);
  readonly blockSums = new Float64Array(BLOCK_SIZE);
  readonly blockMasks = new Uint32Array(BLOCK_SIZE);
  private list = {
    best: new Float32Array(0),
    sums: new Float64Array(0),
    masks: new Uint32Array(0),
    slots: new Int32Array(0),
    picked: new Int32Array(0),
  };

  listScratch(count: number) {
    if (this.list.best.length < count) {
      const size = Math.max(count, this.list.best.length * 2);
      this.list = {
        best: new Float32Array(size),
        sums: new Float64Array(size),
        masks: new Uint32Array(size),
        slots: new Int32Array(size),
        picked: new Int32Array(size),
      };
    }
    return this.list;
  }

  bitsets(words: number) {
    this.matching = grownBits(this.matching, words);
    this.unionBits = grownBits(this.unionBits, words);
    this.wordBits = grownBits(this.wordBits, words);
    this.capabilityBits = grownBits(this.capabilityBits, words);
    return { matching: this.matching, union: this.unionBits, word: this.wordBits, capability: this.capabilityBits };
  }

  /**
   * The matching slots as a list, when step 1 found them one by one (matching-bits' sparse path): the first
   * `matchedCount` of `matched`; -1 when the query's matches are only in the bitset.
   */
  matched = new Int32Array(0);
  matchedCount = -1;
  /**
   * When ≥ 0, the bits set in `matching` are exactly those of the first `matchingListed` slots of `matched` (the
   * last query took the sparse path), so the next sparse query clears them alone, not all N/32 words; -1: unknown.
   */
  matchingListed = -1;

  matchedSlots(count: number): Int32Array {
    if (this.matched.length < count) this.matched = new Int32Array(Math.max(count, this.matched.length * 2));
    return this.matched;
  }

  private marked = new MarkedSlots();

  /** Per query word with two frequent forms, their bitsets' OR, kept from query to query (matching-bits.ts). */
  readonly wordUnions = new WordUnions();

  /** The list of slots marked seen, emptied (reused from query to query). */
  markedSlots(): MarkedSlots {
    this.marked.length = 0;
    return this.marked;
  }

  /** Slots the threshold algorithm has seen: all zero between queries. */
  seenBits(words: number): Uint32Array {
    this.seen = grownBits(this.seen, words);
    return this.seen;
  }

  bounds(terms: number, blocks: number): Float32Array[] {
    for (let t = 0; t < terms; t++) {
      if ((this.termBounds[t]?.length ?? 0) < blocks) this.termBounds[t] = new Float32Array(blocks * 2);
    }
    return this.termBounds;
  }

  /** Per block, the sum of the words' bounds and how many words have a bound there: all zero between queries. */
  boundSums(blocks: number): Float64Array {
    if (this.sums.length < blocks) this.sums = new Float64Array(blocks * 2);
    return this.sums;
  }

  boundWords(blocks: number): Uint8Array {
    if (this.present.length < blocks) this.present = new Uint8Array(blocks * 2);
    return this.present;
  }

  /** Each block's bound (-1: nothing to score there). */
  blockKeys(blocks: number): Float64Array {
    if (this.keys.length < blocks) this.keys = new Float64Array(blocks * 2);
    return this.keys;
  }

  nameBonus(blocks: number): Uint8Array {
    if (this.bonus.length < blocks) this.bonus = new Uint8Array(blocks * 2);
    this.bonus.fill(0, 0, blocks);
    return this.bonus;
  }

  blockHeap(blocks: number): BlockHeap {
    if (this.heapBlocks.length < blocks) {
      this.heapBlocks = new Int32Array(blocks * 2);
      this.heapKeys = new Float64Array(blocks * 2);
    }
    return new BlockHeap(this.heapBlocks, this.heapKeys);
  }
}

/**
 * The slots a query marked in its `seen` bitset, in the order marked, so that it can clear them after. A typed list
 * reused from query to query: three common words mark thousands, which as a new array each query grew (copied) a
 * dozen times and left as garbage.
 */
export class MarkedSlots {
  slots = new Int32Array(1_024);
  length = 0;

  push(slot: number): void {
    if (this.length === this.slots.length) this.slots = grownInt32(this.slots, this.length + 1);
    this.slots[this.length++] = slot;
  }
}

const scratches = new WeakMap<IndexStore, PruningScratch>();

export function scratchOf(store: IndexStore): PruningScratch {
  let scratch = scratches.get(store);
  if (!scratch) scratches.set(store, (scratch = new PruningScratch()));
  return scratch;
}
