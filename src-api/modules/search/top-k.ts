import type { IndexStore } from './index-store';

/** Off: ties on trust compare id strings for every slot (tests compare the two). */
export const ID_RANKS = { enabled: true };

/**
 * The k best slots by score, then trust score, then id: a bounded min-heap with the worst kept at the root.
 * Between two base slots the id order is their id ranks' (integers from compaction, see `buildIdRanks`);
 * a tail slot's id is compared as a string.
 */
export class TopK {
  private readonly slots: number[] = [];
  private readonly scores: number[] = [];
  private readonly trust: Float64Array;
  private readonly ids: string[];
  private readonly idRanks: Int32Array;
  /** Slots below this have an id rank. */
  private readonly ranked: number;

  constructor(
    private readonly k: number,
    store: Pick<IndexStore, 'trust' | 'docIds' | 'idRanks' | 'baseSlotCount'>,
  ) {
    this.trust = store.trust;
    this.ids = store.docIds;
    this.idRanks = store.idRanks;
    this.ranked = ID_RANKS.enabled ? Math.min(store.baseSlotCount, store.idRanks.length) : 0;
  }

  get size(): number {
    return this.slots.length;
  }

  /** Entries still missing before the heap is full. */
  get missing(): number {
    return Math.max(0, this.k - this.slots.length);
  }

  /** True when the heap holds k entries: then `worstScore` is the bar a newcomer must clear (or tie and win on trust, id). */
  get full(): boolean {
    return this.k > 0 && this.slots.length >= this.k;
  }

  get worstScore(): number {
    return this.slots.length === 0 ? -Infinity : this.scores[0]!;
  }

  /** The slot at the bar: the k-th best so far (-1 when empty). */
  get worstSlot(): number {
    return this.slots.length === 0 ? -1 : this.slots[0]!;
  }

  offer(slot: number, score: number): void {
    if (this.k <= 0) return;
    if (this.slots.length < this.k) {
      this.slots.push(slot);
      this.scores.push(score);
      this.siftUp(this.slots.length - 1);
    } else if (this.better(slot, score, this.slots[0]!, this.scores[0]!)) {
      this.slots[0] = slot;
      this.scores[0] = score;
      this.siftDown(0);
    }
  }

  sorted(): { slot: number; score: number }[] {
    return this.slots
      .map((slot, i) => ({ slot, score: this.scores[i]! }))
      .sort((a, b) => (this.better(a.slot, a.score, b.slot, b.score) ? -1 : 1));
  }

  private better(slotA: number, scoreA: number, slotB: number, scoreB: number): boolean {
    if (scoreA !== scoreB) return scoreA > scoreB;
    const trustA = this.trust[slotA]!;
    const trustB = this.trust[slotB]!;
    if (trustA !== trustB) return trustA > trustB;
    if (slotA < this.ranked && slotB < this.ranked) return this.idRanks[slotA]! < this.idRanks[slotB]!;
    return this.ids[slotA]! < this.ids[slotB]!;
  }

  private siftUp(index: number): void {
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.better(this.slots[parent]!, this.scores[parent]!, this.slots[index]!, this.scores[index]!)) break;
      this.swap(parent, index);
      index = parent;
    }
  }

  private siftDown(index: number): void {
    const length = this.slots.length;
    for (;;) {
      const left = index * 2 + 1;
      const right = left + 1;
      let worst = index;
      if (left < length && this.better(this.slots[worst]!, this.scores[worst]!, this.slots[left]!, this.scores[left]!)) worst = left;
      if (right < length && this.better(this.slots[worst]!, this.scores[worst]!, this.slots[right]!, this.scores[right]!)) worst = right;
      if (worst === index) return;
      this.swap(worst, index);
      index = worst;
    }
  }

  private swap(a: number, b: number): void {
    // Temporaries, not a destructuring swap: that allocates an array per swap on a hot path.
    const slot = this.slots[a]!;
    this.slots[a] = this.slots[b]!;
    this.slots[b] = slot;
    const score = this.scores[a]!;
    this.scores[a] = this.scores[b]!;
    this.scores[b] = score;
  }
}
