import { grownBits } from './bitsets';
import { RESTRICTED_ORDERS, type IndexStore, type RestOrder } from './index-store';

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

/** An order a name set reads (`SetReads.orderFor`); `shared`: the run's own, read on from where either last read it. */
interface SetOrder extends RestOrder {
  complete: boolean;
  shared: boolean;
}

/**
 * An unseen agent's highest impact in `order` once `read` (at least 1) of it is read, as the run's bound
 * (threshold.ts) takes it; -1 when it is complete and read to its end (no unseen agent of the set has the term there).
 */
function orderValueAfter(order: SetOrder, read: number): number {
  const { values } = order;
  if (order.complete && read >= values.length) return -1;
  return values[Math.min(read, values.length) - 1]!;
}

/** Postings name sets have passed over in their reads (each set read adds its own): for tests. */
export const setReadStats = { postings: 0 };

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
 * agents then have at most the impact it last read there, however few of the run's own agents were read. A set of
 * one word or more reads that order cut to the names holding one of its words (`orderFor`): a set of "agent" at
 * 100,000 agents passes over its own ~350 postings a query, not the ~5,000 of every name it stepped over before.
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
  /** Per name set, per list, the order the set reads (`orderFor`); undefined until taken. */
  private readonly orders: (SetOrder | undefined)[][];

  constructor(
    private readonly store: IndexStore,
    private readonly termIds: Int32Array,
    private readonly lists: RunLists,
    sets: number,
    /** Per query word, what names its name bitset (its named expansions' term ids; '' when none) and how many names hold it. */
    private readonly nameKeys: string[],
    private readonly nameCounts: number[],
  ) {
    this.reads = new Array<Int32Array | undefined>(sets);
    this.orders = Array.from({ length: sets }, () => new Array<SetOrder | undefined>(termIds.length));
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
      // In the run's own order, only a set that read past the run lowers the bound the run's place gives.
      const order = this.orders[mask]![e]!;
      if (!order.shared || own[e]! > this.lists.read[e]!) {
        const after = orderValueAfter(order, own[e]!);
        if (after < 0) return -1;
        impact = Math.min(impact, after);
      }
    }
    return Math.min(impact, this.restMaxes[e]!);
  }

  /**
   * Reads on for name set `mask` alone, in the lists of the words outside it: the list giving the highest bound for
   * the set (`impacts`, as name-split's bound just computed them), from where the set (or, in an impact order, the
   * run) last read it, visiting only the agents whose names hold exactly the set's query words (the others are not
   * the set's: their own sets bound them). A word in thousands of other names costs nothing: its rest order leaves
   * them out, as the set's cut leaves out the names without its own words. False when no such list is left to read
   * (the run reads on instead). `wordBits`: per word, the slots with it in their names (undefined: none).
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
    const within = this.withinWord(mask, termCount);
    let best = -1;
    let bestValue = -1;
    for (let t = 0, e = 0; t < termCount; t++) {
      for (; e < wordEnds[t]!; e++) {
        if (((mask >>> t) & 1) === 1 || impacts[e]! < 0) continue;
        const order = this.orderFor(mask, e, within, wordBits);
        if ((order.shared ? Math.max(lists.read[e]!, own[e]!) : own[e]!) >= order.slots.length) continue;
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
    // The set's own cut of the term's order, its rest order, or (in no name, no cut) the run's impact order, read on
    // from where the set or the run last read it.
    const order = this.orders[mask]![best]!;
    const slots = order.slots;
    const from = order.shared ? Math.max(lists.read[best]!, own[best]!) : own[best]!;
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
    setReadStats.postings += i - from;
    own[best] = i;
    return true;
  }

  /**
   * The word of name set `mask` in fewest names (-1: none, the set of no word). Every agent of the set has it in its
   * name, so the set reads only its cut of a rest order: at 100,000 agents a word in a twelfth of the names lets a
   * read pass over a twelfth of the postings it did.
   */
  private withinWord(mask: number, termCount: number): number {
    let within = -1;
    for (let t = 0; t < termCount; t++) {
      if (((mask >>> t) & 1) === 0 || this.nameKeys[t] === '') continue;
      if (within < 0 || this.nameCounts[t]! < this.nameCounts[within]!) within = t;
    }
    return within;
  }

  /**
   * The order name set `mask` reads of list e: its rest order (its impact order when no name has the term) cut to
   * the names holding word `within` (`IndexStore.restOrderWithin`), else the rest order, else the run's impact order
   * (`shared`: the set reads on from where the run is). Fixed for the run once taken: the set's place in it (`reads`)
   * and its bound (`outside`) are in that order.
   */
  private orderFor(mask: number, e: number, within: number, wordBits: (Uint32Array | undefined)[]): SetOrder {
    const orders = this.orders[mask]!;
    const made = orders[e];
    if (made !== undefined) return made;
    const rest = this.restSlots[e] !== undefined;
    // A cut holds all of its order's agents of the set: it is complete where that order is.
    const complete = rest ? this.restComplete[e]! : this.lists.complete[e]!;
    const names = within < 0 || !RESTRICTED_ORDERS.enabled ? undefined : wordBits[within];
    const cut = names === undefined ? undefined : this.store.restOrderWithin(this.nameKeys[within]!, names, this.termIds[e]!);
    const order: SetOrder =
      cut !== undefined
        ? { slots: cut.slots, values: cut.values, complete, shared: false }
        : rest
          ? { slots: this.restSlots[e]!, values: this.restValues[e]!, complete, shared: false }
          : { slots: this.lists.slots[e]!, values: this.lists.values[e]!, complete, shared: true };
    orders[e] = order;
    return order;
  }
}
