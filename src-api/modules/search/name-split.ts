import { grownInt32, orInto, popcount32 } from './bitsets';
import type { IndexStore } from './index-store';
import { scratchOf } from './pruning-scratch';
import { SetReads, type RunLists, type Visitor } from './set-reads';
import type { TopK } from './top-k';
import { WORD_UNIONS } from './word-unions';

/** `blocking`: the first name set still reaching the bar has read on by itself. */
export const READ_ON = -2;

/**
 * For measurements and tests: a name set counted in one pass and covered in another when off (`collect`); with `resume`
 * off, a pass that stopped early starts again from the first word (as before).
 */
export const COLLECT = { enabled: true, resume: true };

/**
 * Name sets `collect` listed whole (then covered), those it stopped early on (too large), the words of the bitsets it
 * read, and how far it got in each set's (summed over the sets; read once each, the two are equal): for tests.
 */
export const collectStats = { listed: 0, stopped: 0, words: 0, reached: 0 };

/**
 * Per name set (a mask of words), the agents `collect` listed so far: scratch kept between queries (a query runs
 * synchronously: one list per mask serves all).
 */
const collected: (Int32Array | undefined)[] = [];

/**
 * Whether the threshold algorithm rules agents out by which query words their names hold, and whether a name set
 * too large to cover reads on by itself (`readOn`); off for A/B measurements. Queries of fewer than `earlyWords`
 * words start the split only once the run has visited `lateAfter` agents: most two-word runs end within a few
 * hundred, for which the split's passes over the name bitsets cost more than they save (measured at 100,000 agents:
 * 1.1-1.9x from the start), while the few long ones ("data secure": thousands of agents with one of the words in
 * their names) are cut to a fraction.
 */
export const NAME_SPLIT = { enabled: true, minWords: 2, maxWords: 4, minAllowance: 256, readOn: true, earlyWords: 3, lateAfter: 2_048 };

/**
 * The threshold algorithm's bound, split by the name field (see `threshold.ts`). A word in many agents' names
 * (a role like "agent", a domain like "data") has a long run of high impacts: thousands of names, all with
 * about the same impact. Reading that run to its end, as the plain bound needs, costs a share of N.
 *
 * Each query word has two bounds for an unseen agent: the plain one (its lists' current impacts), and for agents
 * without the word in their name also the term's highest impact outside names (`IndexStore.restMaxes`). An
 * unseen agent whose name holds exactly the words of a set S is bounded by the plain bounds of S's words and the
 * lower bounds of the others. Sets are taken highest bound first: one whose bound reaches the bar (the k-th best
 * score) is "covered" (every matching agent whose name holds all its words is scored: an AND of name bitsets,
 * small for two words or more; this raises the bar) while that costs no more than the work done so far; else
 * the set reads on by itself (set-reads.ts), or the run does. Once every set not covered is below the bar (or at it, and ruled out by the tie order as in
 * `stopsInTies`), no unseen agent can enter the top k.
 */
export class NameSplit {
  /** Per word, its expansions' name bitsets (none: no agent has the word in its name). */
  private readonly wordNames: Uint32Array[][] = [];
  /** Scratch of `bound`: per list its bounding impact, per word its bound. */
  private readonly impacts: Int32Array;
  private readonly wordBounds: Float64Array;
  /** Per word, the share of its postings in names (over its expansions). */
  private readonly nameShares: number[] = [];
  /** Per name set, 1 once it or a set it holds was covered. */
  private readonly covered: Uint8Array;
  /** Per name set (a mask of words), its matching agents once counted (-1: not yet). */
  private readonly counts: Int32Array;
  /** Per name set not counted yet, a floor on its matching agents (a `collect` that stopped early); else 0. */
  private readonly atLeast: Int32Array;
  /** Per name set, how many matching agents `collect` has listed so far, and the word of the bitsets it stopped at. */
  private readonly listed: Int32Array;
  private readonly listedTo: Int32Array;
  private readonly masks: number[];
  /** Per name set, its bound this round. */
  private readonly keys: Float64Array;
  /** Name sets reading on by themselves, and the bounds their reads give (set-reads.ts). */
  private readonly setReads: SetReads;
  /** Per word, its expansions' term ids with name bitsets, joined by commas. */
  private readonly nameKeys: string[] = [];
  /** Per word, the slots with it in their names (`wordNameBits`), once a set reads on by itself. */
  private wordBits: (Uint32Array | undefined)[] | undefined;

  private constructor(
    private readonly store: IndexStore,
    termIds: Int32Array,
    private readonly scaled: Float64Array,
    private readonly wordEnds: Int32Array,
    private readonly matchingCount: number,
    lists: RunLists,
  ) {
    const termCount = wordEnds.length;
    this.impacts = new Int32Array(termIds.length);
    this.wordBounds = new Float64Array(termCount);
    this.counts = new Int32Array(1 << termCount).fill(-1);
    this.atLeast = new Int32Array(1 << termCount);
    this.listed = new Int32Array(1 << termCount);
    this.listedTo = new Int32Array(1 << termCount);
    this.covered = new Uint8Array(1 << termCount);
    this.masks = Array.from({ length: 1 << termCount }, (_, mask) => mask);
    this.keys = new Float64Array(1 << termCount);
    const nameKeys = this.nameKeys;
    const nameCounts: number[] = [];
    for (let t = 0, e = 0; t < termCount; t++) {
      const names: Uint32Array[] = [];
      let nameKey = '';
      let named = 0;
      let postings = 0;
      for (; e < wordEnds[t]!; e++) {
        const termId = termIds[e]!;
        const bits = store.nameBits[termId];
        if (bits !== undefined) {
          names.push(bits);
          nameKey += nameKey === '' ? `${termId}` : `,${termId}`;
        }
        named += store.nameCounts[termId] ?? 0;
        postings += store.baseOffsets[termId + 1]! - store.baseOffsets[termId]!;
      }
      this.wordNames.push(names);
      this.nameShares.push(named / Math.max(1, postings));
      nameKeys.push(nameKey);
      nameCounts.push(named);
    }
    this.setReads = new SetReads(store, termIds, lists, 1 << termCount, nameKeys, nameCounts);
  }

  /** For a run over these lists, if the query qualifies (few words, every term with its orders). */
  static of(
    store: IndexStore,
    termIds: Int32Array,
    scaled: Float64Array,
    wordEnds: Int32Array,
    matchingCount: number,
    lists: RunLists,
  ): NameSplit | undefined {
    // One word: its plain bound stops within a few dozen agents (the best names come first in its order). Two
    // words: measured at 100,000 agents, the passes over the name bitsets cost more than the reads they save.
    const words = wordEnds.length;
    if (!NAME_SPLIT.enabled || words < NAME_SPLIT.minWords || words > NAME_SPLIT.maxWords) return undefined;
    let named = false;
    for (const termId of termIds) {
      if (store.restMaxes[termId] === undefined) return undefined;
      if (store.nameBits[termId] !== undefined) named = true;
    }
    // No query word in any name: every agent is in the set of none, bounded as the run bounds it (a pass a round for nothing).
    if (!named) return undefined;
    return new NameSplit(store, termIds, scaled, wordEnds, matchingCount, lists);
  }

  /**
   * -1 when no unseen agent can reach `top`'s bar (the heap is full); READ_ON (-2) when the first name set whose
   * bound still reaches it has read on by itself (`SetReads.read`: bound again before the run reads); otherwise that name
   * set (a mask of words). Covers name sets on the way while they hold at most `allowance`
   * matching agents (the work done so far: covering then at most doubles it). `listValue`: per list, the impact
   * its plain bound is made of (-1 when read to its end). `pastBar(e)`: whether list e has read past the bar's
   * agent in tie order (undefined: ties are not in order, equal is not enough).
   */
  blocking(
    listValue: Int32Array,
    pastBar: ((e: number) => boolean) | undefined,
    top: TopK,
    matching: Uint32Array,
    visitor: Visitor,
    allowance: number,
    /** Agents a name set reading on by itself visits at most (`SetReads.read`). */
    chunk: number,
  ): number {
    // Highest bound first: covering the best name sets raises the bar fastest (the top hits often have two query
    // words in their names), which may put the bounds of the big sets (one word in the name) below it.
    const { masks, keys } = this;
    for (let i = 0; i < masks.length; i++) keys[masks[i]!] = this.covered[masks[i]!] === 1 ? -Infinity : this.bound(masks[i]!, listValue);
    // Stable insertion sort of the few sets, highest key first: Array.prototype.sort's order, no comparator calls.
    for (let i = 1; i < masks.length; i++) {
      const mask = masks[i]!;
      const key = keys[mask]!;
      let j = i - 1;
      for (; j >= 0 && keys[masks[j]!]! < key; j--) masks[j + 1] = masks[j]!;
      masks[j + 1] = mask;
    }
    let spent = 0;
    for (const mask of masks) {
      const key = keys[mask]!;
      if (key === -Infinity || this.covered[mask] === 1) continue;
      if (top.full && key < top.worstScore) break;
      if (top.full && key === top.worstScore && pastBar !== undefined) {
        this.bound(mask, listValue);
        if (this.tiesBelow(mask, listValue, pastBar, top.worstScore)) continue;
      }
      if (mask === 0) return this.readOn(mask, listValue, visitor, chunk);
      // Counting costs a pass over the bitsets: only once the sizes of the name sets make it look worthwhile.
      // A set too large to cover reads on by itself, if it can (READ_ON); else the run reads on for it.
      if (this.counts[mask] === -1 && this.estimate(mask) > allowance - spent) return this.readOn(mask, listValue, visitor, chunk);
      if (this.counts[mask] === -1 && COLLECT.enabled) {
        // Counted and listed in one pass, which stops once the set is too large to cover (then it is known to hold
        // more than that many, and is not counted again until the allowance reaches it).
        if (this.atLeast[mask]! > allowance - spent) return this.readOn(mask, listValue, visitor, chunk);
        const count = this.collect(mask, matching, allowance - spent);
        if (count === -1) {
          collectStats.stopped++;
          this.atLeast[mask] = allowance - spent + 1;
          return this.readOn(mask, listValue, visitor, chunk);
        }
        this.counts[mask] = count;
        collectStats.listed++;
        spent += count;
        const found = collected[mask]!;
        visitor.many(found, 0, count);
      } else {
        if (this.counts[mask] === -1) this.counts[mask] = this.intersect(mask, matching);
        if (this.counts[mask]! > allowance - spent) return this.readOn(mask, listValue, visitor, chunk);
        spent += this.counts[mask]!;
        this.intersect(mask, matching, visitor);
      }
      for (let set = 0; set < this.covered.length; set++) if ((set & mask) === mask) this.covered[set] = 1;
    }
    return top.full ? -1 : 0;
  }

  /**
   * The best score of an unseen agent whose name holds the words of `mask` and no other query word. Per list the
   * impact bounding it (outside names, also the term's highest there), in `impacts`; per word the best float32
   * score, in `wordBounds`, summed in plan order as the score is.
   */
  private bound(mask: number, listValue: Int32Array): number {
    const { wordEnds, impacts, wordBounds } = this;
    const termCount = wordEnds.length;
    let sum = 0;
    for (let t = 0, e = 0; t < termCount; t++) {
      let best = 0;
      for (; e < wordEnds[t]!; e++) {
        const impact = ((mask >>> t) & 1) === 0 ? this.setReads.outside(mask, e, listValue[e]!) : listValue[e]!;
        impacts[e] = impact;
        const value = Math.fround(this.scaled[e]! * impact);
        if (value > best) best = value;
      }
      wordBounds[t] = best;
      sum += best;
    }
    return termCount + Math.min(0.9999, sum / termCount);
  }

  /**
   * The bound of `mask` (just computed by `bound`) equals the bar: as `stopsInTies` in threshold.ts. If one impact
   * unit less on any word puts it below the bar, an unseen agent at the bar has exactly the bounding impact on every
   * word; if for a word in the name set every list giving its bound has read past the bar's agent in tie order,
   * such an agent comes after it. (Words outside the set have no order to be past: their bound is a maximum.)
   */
  private tiesBelow(mask: number, listValue: Int32Array, pastBar: (e: number) => boolean, bar: number): boolean {
    const { wordEnds, impacts, wordBounds, scaled } = this;
    const termCount = wordEnds.length;
    for (let t = 0, from = 0; t < termCount; from = wordEnds[t++]!) {
      let lower = 0;
      for (let e = from; e < wordEnds[t]!; e++) {
        if (listValue[e]! < 0) continue;
        let value = Math.fround(scaled[e]! * impacts[e]!);
        if (value === wordBounds[t]) value = Math.fround(scaled[e]! * (impacts[e]! - 1));
        if (value > lower) lower = value;
      }
      let sum = 0;
      for (let u = 0; u < termCount; u++) sum += u === t ? lower : wordBounds[u]!;
      if (termCount + Math.min(0.9999, sum / termCount) >= bar) return false;
    }
    for (let t = 0, from = 0; t < termCount; from = wordEnds[t++]!) {
      if (((mask >>> t) & 1) === 0 || wordBounds[t] === 0) continue;
      let past = true;
      for (let e = from; e < wordEnds[t]! && past; e++) {
        if (listValue[e]! >= 0 && Math.fround(scaled[e]! * impacts[e]!) === wordBounds[t]) past = pastBar(e);
      }
      if (past) return true;
    }
    return false;
  }

  /** READ_ON if name set `mask` could read on by itself (`SetReads.read`), else the mask (the run reads on for it). */
  private readOn(mask: number, listValue: Int32Array, visitor: Visitor, visits: number): number {
    if (!NAME_SPLIT.readOn) return mask;
    this.bound(mask, listValue);
    const words = (this.store.baseSlotCount + 31) >>> 5;
    // Not a closure over wordNameBits: tsx names each closure as it is made (esbuild's keepNames), 10 % of three words.
    if (this.wordBits === undefined) {
      this.wordBits = [];
      for (let t = 0; t < this.wordEnds.length; t++) this.wordBits.push(this.wordNameBits(t, words));
    }
    return this.setReads.read(mask, this.wordEnds, this.impacts, this.scaled, this.wordBits, words, visitor, visits) ? READ_ON : mask;
  }

  /** The matching agents times, per word of the mask, the share of its agents that have it in their name. */
  private estimate(mask: number): number {
    let estimate = this.matchingCount;
    for (let t = 0; t < this.wordEnds.length; t++) if ((mask >>> t) & 1) estimate *= this.nameShares[t]!;
    return estimate;
  }

  /** The name bitsets of the words of `mask`, or undefined when one of them has none (no agent has them all). */
  private nameSets(mask: number, words: number): Uint32Array[] | undefined {
    const sets: Uint32Array[] = [];
    for (let t = 0; t < this.wordEnds.length; t++) {
      if (((mask >>> t) & 1) === 0) continue;
      const names = this.wordNameBits(t, words);
      if (names === undefined) return undefined;
      sets.push(names);
    }
    return sets;
  }

  /** How many matching base agents have each word of `mask` in their name; with a visitor, visits them one by one. */
  private intersect(mask: number, matching: Uint32Array, visitor?: Visitor): number {
    const words = (this.store.baseSlotCount + 31) >>> 5;
    const sets = this.nameSets(mask, words);
    if (sets === undefined) return 0;
    // One loop per set count (at most four words): no inner loop over the sets for each word of the bitsets.
    const [a, b = a, c = a, d = a] = sets as [Uint32Array, Uint32Array?, Uint32Array?, Uint32Array?];
    let count = 0;
    for (let w = 0; w < words; w++) {
      const bits = matching[w]! & a[w]! & b[w]! & c[w]! & d[w]!;
      if (bits === 0) continue;
      if (visitor === undefined) count += popcount32(bits);
      else for (let rest = bits; rest !== 0; rest &= rest - 1) visitor.one((w << 5) | (31 - Math.clz32(rest & -rest)));
    }
    return count;
  }

  /**
   * As `intersect`, in one pass that also lists them in `collected[mask]` (slot order, the order `intersect` visits
   * them): their count, or -1 once there are more than `room`. A pass that stopped early is resumed where it stopped
   * by the next call for the mask (its list so far kept): the set's words are not read again from the start each
   * time the allowance grows (at 1,000,000 agents, "agent data secure" read 13.5 times the N/32 words, 422,460).
   */
  private collect(mask: number, matching: Uint32Array, room: number): number {
    if (room < 0) return -1;
    const words = (this.store.baseSlotCount + 31) >>> 5;
    const sets = this.nameSets(mask, words);
    if (sets === undefined) return 0;
    if (!COLLECT.resume) this.listed[mask] = this.listedTo[mask] = 0;
    let count = this.listed[mask]!;
    if (count > room) return -1;
    const [a, b = a, c = a, d = a] = sets as [Uint32Array, Uint32Array?, Uint32Array?, Uint32Array?];
    let found = (collected[mask] ??= new Int32Array(1024));
    let w = this.listedTo[mask]!;
    const from = w;
    for (; w < words && count <= room; w++) {
      const bits = matching[w]! & a[w]! & b[w]! & c[w]! & d[w]!;
      if (bits === 0) continue;
      if (count + 32 > found.length) {
        found = collected[mask] = grownInt32(found, found.length * 2);
      }
      for (let rest = bits; rest !== 0; rest &= rest - 1) found[count++] = (w << 5) | (31 - Math.clz32(rest & -rest));
    }
    collectStats.words += w - from;
    collectStats.reached += w - this.listedTo[mask]!;
    this.listed[mask] = count;
    this.listedTo[mask] = w;
    return count > room ? -1 : count;
  }

  /** The slots with word t in their name: its one expansion's bitset, or the OR of several (kept from run to run: word-unions.ts). */
  private wordNameBits(t: number, words: number): Uint32Array | undefined {
    const names = this.wordNames[t]!;
    if (names.length <= 1) return names[0];
    let union: Uint32Array;
    if (WORD_UNIONS.enabled) union = scratchOf(this.store).wordUnions.union(this.store, `names ${this.nameKeys[t]!}`, names, words);
    else {
      union = new Uint32Array(words);
      for (const name of names) orInto(union, name, words);
    }
    // Read only from here on (the union may be shared with later runs).
    this.wordNames[t] = [union];
    return union;
  }
}
