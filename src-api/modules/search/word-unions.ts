import type { IndexStore } from './index-store';

/** For measurements and tests: each word's expansions ORed in the matching pass itself, as before, when off. */
export const WORD_UNIONS = { enabled: true, capacity: 32 };

/**
 * Per query word with two frequent forms ("agent" and "agents"), the OR of their bitsets, kept from query to query:
 * the matching pass (matching-bits.ts) then reads one bitset a word instead of two (three common words: four
 * bitsets, not seven; the pass is bound by those loads). Valid while no bitset changed: every change to a term's
 * bitset moves `store.termBitsStamp` (a new tail posting, a rebuild), and the next lookup starts afresh. Holds at
 * most `WORD_UNIONS.capacity` unions (12.5 KB each at 100,000 agents), dropping the oldest.
 */
export class WordUnions {
  private readonly unions = new Map<string, Uint32Array>();
  private stamp = -1;

  /** The OR of `first` and `second` (the bitsets of terms `firstId` and `secondId`), over at least `words` words. */
  union(store: IndexStore, firstId: number, first: Uint32Array, secondId: number, second: Uint32Array, words: number): Uint32Array {
    if (this.stamp !== store.termBitsStamp) {
      this.unions.clear();
      this.stamp = store.termBitsStamp;
    }
    const key = firstId < secondId ? `${firstId} ${secondId}` : `${secondId} ${firstId}`;
    const known = this.unions.get(key);
    if (known !== undefined && known.length >= words) return known;
    const union = new Uint32Array(words);
    for (let w = 0; w < words; w++) union[w] = first[w]! | second[w]!;
    this.unions.delete(key);
    if (this.unions.size >= WORD_UNIONS.capacity) this.unions.delete(this.unions.keys().next().value!);
    this.unions.set(key, union);
    return union;
  }
}
