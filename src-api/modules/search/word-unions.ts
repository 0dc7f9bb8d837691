import type { IndexStore } from './index-store';

/** For measurements and tests: each word's forms ORed anew by each query, as before, when off. */
export const WORD_UNIONS = { enabled: true, capacity: 32 };

/**
 * Per query word with several frequent forms ("agent" and "agents"), the OR of their bitsets (the agents with the
 * word, or with it in their names), kept from query to query: the matching pass (matching-bits.ts) then reads one
 * bitset a word instead of two (three common words: four bitsets, not seven; the pass is bound by those loads), and
 * a name split (name-split.ts) does not OR a word's name bitsets into a new array each run. Valid while no bitset
 * changed: every change to a term's bitset or name bitset moves `store.bitsetsStamp` (a new tail posting, a
 * rebuild), and the next lookup starts afresh. Holds at most `WORD_UNIONS.capacity` unions (12.5 KB each at
 * 100,000 agents), dropping the oldest.
 */
export class WordUnions {
  private readonly unions = new Map<string, Uint32Array>();
  private stamp = -1;

  /**
   * The OR of `sets` over at least `words` words. `key` names them, the same key always the same bitsets of the
   * store (their term ids, and which kind of bitset). Read only: the same array serves every query until the stamp moves.
   */
  union(store: IndexStore, key: string, sets: readonly Uint32Array[], words: number): Uint32Array {
    if (this.stamp !== store.bitsetsStamp) {
      this.unions.clear();
      this.stamp = store.bitsetsStamp;
    }
    const known = this.unions.get(key);
    if (known !== undefined && known.length >= words) return known;
    const union = new Uint32Array(words);
    for (const set of sets) {
      const end = Math.min(words, set.length);
      for (let w = 0; w < end; w++) union[w] = union[w]! | set[w]!;
    }
    this.unions.delete(key);
    if (this.unions.size >= WORD_UNIONS.capacity) this.unions.delete(this.unions.keys().next().value!);
    this.unions.set(key, union);
    return union;
  }
}
