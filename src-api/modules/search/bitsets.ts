/**
 * Plain bitsets over slots in Uint32Array words (bit `slot & 31` of word
 * `slot >>> 5`). They give exact match counts for words most agents use
 * without visiting each match: AND/OR a word at a time, then count bits.
 */

/** A copy of `bits` at least `words` long (doubling), zero beyond the old contents. */
export function grownBits(bits: Uint32Array, words: number): Uint32Array {
  if (words <= bits.length) return bits;
  const grown = new Uint32Array(Math.max(words, bits.length * 2, 32));
  grown.set(bits);
  return grown;
}

/** A copy at least `minimum` long (doubling), zero-filled beyond the old contents. */
export function grownInt32(array: Int32Array, minimum: number): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(Math.max(minimum, array.length * 2));
  grown.set(array);
  return grown;
}

export function setBit(bits: Uint32Array, slot: number): void {
  bits[slot >>> 5] = bits[slot >>> 5]! | (1 << (slot & 31));
}

export function clearBit(bits: Uint32Array, slot: number): void {
  bits[slot >>> 5] = bits[slot >>> 5]! & ~(1 << (slot & 31));
}

export function hasBit(bits: Uint32Array, slot: number): boolean {
  return ((bits[slot >>> 5] ?? 0) & (1 << (slot & 31))) !== 0;
}

/** target[0, words) |= source (a shorter source counts as zero past its end). */
export function orInto(target: Uint32Array, source: Uint32Array, words: number): void {
  const end = Math.min(words, source.length);
  for (let w = 0; w < end; w++) target[w] = target[w]! | source[w]!;
}

/** target[0, words) &= source (a shorter source counts as zero past its end). */
export function andInto(target: Uint32Array, source: Uint32Array, words: number): void {
  const end = Math.min(words, source.length);
  for (let w = 0; w < end; w++) target[w] = target[w]! & source[w]!;
  if (end < words) target.fill(0, end, words);
}

export function popcount32(word: number): number {
  let value = word - ((word >>> 1) & 0x55555555);
  value = (value & 0x33333333) + ((value >>> 2) & 0x33333333);
  return (((value + (value >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

export function countBits(bits: Uint32Array, words: number): number {
  let count = 0;
  for (let w = 0; w < words; w++) {
    const word = bits[w]!;
    if (word !== 0) count += popcount32(word);
  }
  return count;
}

/** True when any bit of slots [from, to) is set (from a multiple of 32). */
export function anyBitIn(bits: Uint32Array, from: number, to: number): boolean {
  const end = (to + 31) >>> 5;
  for (let w = from >>> 5; w < end; w++) if (bits[w] !== 0) return true;
  return false;
}
