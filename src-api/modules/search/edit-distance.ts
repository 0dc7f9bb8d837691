import { boundedEditDistance } from './text';

/**
 * The same distance as `boundedEditDistance` (optimal string alignment:
 * Levenshtein plus adjacent transpositions), for one word against many:
 * bit-parallel (Hyyrö 2003, "A bit-vector algorithm for computing Levenshtein
 * and Damerau edit distances"), one step per letter of the other word
 * instead of a row of cells. A typo lookup checks hundreds of look-alikes
 * for each new query word; with the banded table that was most of its cost.
 *
 * Words longer than 31 letters (JavaScript bit operations are 32-bit) fall
 * back to `boundedEditDistance`.
 */
export class EditDistancePattern {
  /** Per character code: the bit of each position of the word where it occurs. ASCII in an array, the rest in a map. */
  private readonly ascii = new Int32Array(128);
  private readonly other = new Map<number, number>();
  private readonly lastBit: number;

  constructor(private readonly word: string) {
    this.lastBit = word.length > 0 ? 1 << (word.length - 1) : 0;
    if (word.length > MAX_PATTERN_LENGTH) return;
    for (let i = 0; i < word.length; i++) {
      const code = word.charCodeAt(i);
      if (code < 128) this.ascii[code]! |= 1 << i;
      else this.other.set(code, (this.other.get(code) ?? 0) | (1 << i));
    }
  }

  /**
   * The distance from the word to the word whose code units are `chars[from, from + n)`, or `max + 1` when it is
   * more than `max`. A typo lookup keeps each letter's terms in one array (typo-index.ts), so checking hundreds of
   * them reads neighbouring memory, not a string each.
   */
  distance(chars: Uint16Array, from: number, n: number, max: number): number {
    const m = this.word.length;
    if (Math.abs(m - n) > max) return max + 1;
    if (m === 0 || m > MAX_PATTERN_LENGTH) {
      return boundedEditDistance(this.word, String.fromCharCode(...chars.subarray(from, from + n)), max);
    }
    let vp = -1;
    let vn = 0;
    let d0 = 0;
    let previousMatch = 0;
    let distance = m;
    for (let j = from; j < from + n; j++) {
      const code = chars[j]!;
      const match = code < 128 ? this.ascii[code]! : (this.other.get(code) ?? 0);
      const transposition = ((~d0 & match) << 1) & previousMatch;
      d0 = ((((match & vp) + vp) | 0) ^ vp) | match | vn | transposition;
      let hp = vn | ~(d0 | vp);
      const hn = d0 & vp;
      if (hp & this.lastBit) distance++;
      else if (hn & this.lastBit) distance--;
      hp = (hp << 1) | 1;
      vp = (hn << 1) | ~(d0 | hp);
      vn = hp & d0;
      previousMatch = match;
    }
    return distance <= max ? distance : max + 1;
  }
}

const MAX_PATTERN_LENGTH = 31;
