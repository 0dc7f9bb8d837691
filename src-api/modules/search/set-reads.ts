import { grownBits } from './bitsets';
import type { IndexStore } from './index-store';

/** The run's lists as threshold.ts reads them: per list its order's slots and impacts, whether it holds every posting, and how far the run has read it. */
export interface RunLists {
  slots: Int32Array[];
  values: Uint16Array[];
  complete: boolean[];
  read: Int32Array;
}

/**
 * How the threshold run scores the agents it meets (threshold.ts): one at a time, or many at once, which reads their
 * impacts term by term so that the cache misses of far-apart agents overlap (`BlockScorer.scoreSlots`).
 */
export interface Visitor {
  one(slot: number): void;
  /** `slots[from, to)`, in that order. */
  many(slots: Int32Array, from: number, to: number): void;
}

/** The agents one set read meets, scored together once it has read. */
let met = new Int32Array(256);

/** Postings a name set reads by itself at least, the first time (then twice as far each time). */
const SET_READ_MIN = 256;

/** All-zero bits for `read`'s missing words (never written). */
let zeros: Uint32Array = new Uint32Array(0);

/**
 * Name sets reading on by themselves (name-split.ts): a set too large to cover lowers its own bound by reading, for a
 * word outside it, the term's postings outside names (its rest order, `IndexStore.restOrderSlots`; the impact order
 * when no name has the term), visiting only the agents whose names hold exactly the set's query words. Its unseen
 * agents then have at most the impact it last read there, however few of the run's own agents were read.
 */
export class SetReads {
  /** Per list, the highest impact of its term outside names (`IndexStore.restMaxes`). */
  private readonly restMaxes: number[] = [];
  /** Per list, its term's rest order (undefined when the term is in no name: its impact order is). */
  private readonly restSlots: (Int32Array | undefined)[] = [];
  private readonly restValues: (Uint16Array | undefined)[] = [];
  /** Per list with a rest order, whether it holds every posting of its term outside names. */
  private readonly restComplete: boolean[] = [];
  /** Per name set (a mask of words), how far it has read each list on its own; undefined until it has. */
  private readonly reads: (Int32Array | undefined)[];

  constructor(
    store: IndexStore,
    termIds: Int32Array,
    private readonly lists: RunLists,
    sets: number,
  ) {
    this.reads = new Array<Int32Array | undefined>(sets);
    for (const termId of termIds) {
      this.restMaxes.push(store.restMaxes[termId]!);
      this.restSlots.push(store.restOrderSlots[termId]);
      this.restValues.push(store.restOrderValues[termId]);
      const outside = store.baseOffsets[termId + 1]! - store.baseOffsets[termId]! - (store.nameCounts[termId] ?? 0);
      this.restComplete.push(store.restOrderSlots[termId]?.length === outside);
    }
  }

  /**
   * The highest impact in list e of an unseen agent of name set `mask`, whose names lack the list's word, given the
   * list's plain bound `impact` (-1: none): below the term's highest outside names, and below what the set read.
   */
  outside(mask: number, e: number, impact: number): number {
    if (impact < 0) return impact;
    const own = this.reads[mask];
    if (own !== undefined && own[e]! > 0) {
      if (this.restSlots[e] !== undefined) {
        const rest = this.restValueAfter(e, own[e]!);
        if (rest < 0) return -1;
        impact = Math.min(impact, rest);
      } else if (own[e]! > this.lists.read[e]!) {
        impact = this.valueAfter(e, own[e]!);
        if (impact < 0) return -1;
      }
    }
    return Math.min(impact, this.restMaxes[e]!);
  }

  /**
   * Reads on for name set `mask` alone, in the lists of the words outside it: the list giving the highest bound for
   * the set (`impacts`, as name-split's bound just computed them), from where the set (or, in an impact order, the
   * run) last read it, visiting only the agents whose names hold exactly the set's query words (the others are not
   * the set's: their own sets bound them). A word in thousands of other names costs nothing: its rest order leaves
   * them out. False when no such list is left to read (the run reads on instead). `wordBits`: per word, the slots
   * with it in their names (undefined: none).
   */
  read(
    mask: number,
    wordEnds: Int32Array,
    impacts: Int32Array,
    scaled: Float64Array,
    wordBits: (Uint32Array | undefined)[],
    words: number,
    visitor: Visitor,
    visits: number,
  ): boolean {
    const { lists } = this;
    const termCount = wordEnds.length;
    const own = (this.reads[mask] ??= new Int32Array(this.restMaxes.length));
    let best = -1;
    let bestValue = -1;
    for (let t = 0, e = 0; t < termCount; t++) {
      for (; e < wordEnds[t]!; e++) {
        if (((mask >>> t) & 1) === 1 || impacts[e]! < 0) continue;
        const rest = this.restSlots[e];
        if (rest !== undefined ? own[e]! >= rest.length : Math.max(lists.read[e]!, own[e]!) >= lists.slots[e]!.length) continue;
        const value = Math.fround(scaled[e]! * impacts[e]!);
        if (value > bestValue) {
          bestValue = value;
          best = e;
        }
      }
    }
    if (best < 0) return false;
    // Per word with name bits: its bits and what the set wants of them (all ones inside the set, zero outside).
    const sets: Uint32Array[] = [];
    const wants: number[] = [];
    for (let t = 0; t < termCount; t++) {
      const bits = wordBits[t];
      const inside = ((mask >>> t) & 1) === 1;
      if (bits === undefined) {
        if (inside) return false;
        continue;
      }
      sets.push(bits);
      wants.push(inside ? -1 : 0);
    }
    // No name holds any query word: the set is every agent, and the run's own reading serves it better.
    if (sets.length === 0) return false;
    // A term in some names: its postings outside names (the set's agents lack it there), else its impact order.
    const rest = this.restSlots[best];
    const slots = rest ?? lists.slots[best]!;
    const from = rest !== undefined ? own[best]! : Math.max(lists.read[best]!, own[best]!);
    // Up to twice as far each time (at least SET_READ_MIN postings), and up to `visits` of the set's agents: as the
    // run's own chunks (threshold.ts), the bar rises as it reads, so the bound is taken again.
    const end = Math.min(slots.length, from + Math.max(SET_READ_MIN, from));
    // One fixed expression per count of bitsets (zeros for missing words): V8 makes each a tight loop. Most postings
    // are not the set's, so fewer words load (and keep in cache) fewer bitsets: three words 0.90x the index time.
    zeros = grownBits(zeros, words);
    const [a = zeros, b = zeros, c = zeros, d = zeros] = sets;
    const [wa = 0, wb = 0, wc = 0, wd = 0] = wants;
    if (met.length < Math.min(visits, end - from)) met = new Int32Array(Math.min(visits, end - from));
    let left = visits;
    let i = from;
    if (sets.length <= 2) {
      while (i < end && left > 0) {
        const slot = slots[i++]!;
        const word = slot >>> 5;
        if ((((a[word]! ^ wa) | (b[word]! ^ wb)) & (1 << (slot & 31))) === 0) {
          met[visits - left--] = slot;
        }
      }
    } else if (sets.length === 3) {
      while (i < end && left > 0) {
        const slot = slots[i++]!;
        const word = slot >>> 5;
        if ((((a[word]! ^ wa) | (b[word]! ^ wb) | (c[word]! ^ wc)) & (1 << (slot & 31))) === 0) {
          met[visits - left--] = slot;
        }
      }
    } else {
      // At most four words (maxWords).
      while (i < end && left > 0) {
        const slot = slots[i++]!;
        const word = slot >>> 5;
        if ((((a[word]! ^ wa) | (b[word]! ^ wb) | (c[word]! ^ wc) | (d[word]! ^ wd)) & (1 << (slot & 31))) === 0) {
          met[visits - left--] = slot;
        }
      }
    }
    visitor.many(met, 0, visits - left);
    own[best] = i;
    return true;
  }

  /**
   * An unseen agent's highest impact in list e once `read` of its postings are read (-1: the list is complete and
   * read to its end, so no unseen agent has the term), as the run's bound (threshold.ts) takes it.
   */
  private valueAfter(e: number, read: number): number {
    const values = this.lists.values[e]!;
    if (this.lists.complete[e] && read >= values.length) return -1;
    return values[Math.min(Math.max(0, read - 1), values.length - 1)]!;
  }

  /** As `valueAfter`, in list e's rest order, `read` (at least 1) of it read. */
  private restValueAfter(e: number, read: number): number {
    const values = this.restValues[e]!;
    if (this.restComplete[e] && read >= values.length) return -1;
    return values[Math.min(read, values.length) - 1]!;
  }
}
