import wabtInit from 'wabt';
import { afterEach, describe, expect, it } from 'vitest';
import { popcount32 } from '../../src-api/modules/search/bitsets';
import { AND_COUNT_WASM, AND_COUNT_WAT, SIMD_AND, andCount } from '../../src-api/modules/search/simd-bits';
import { seededRandom } from '../../src-api/lib/seeded-random';

/** Random words, some empty and some full (as bitsets of common words are). */
function bitset(random: ReturnType<typeof seededRandom>, length: number): Uint32Array {
  return Uint32Array.from({ length }, () => {
    const kind = random.int(4);
    return kind === 0 ? 0 : kind === 1 ? 0xffffffff : random.int(0x10000) * 0x10000 + random.int(0x10000);
  });
}

describe('andCount: the AND of four bitsets and its count in WebAssembly SIMD', () => {
  afterEach(() => {
    SIMD_AND.enabled = true;
  });

  it('is its WebAssembly text as wat2wasm compiles it', async () => {
    const wabt = await wabtInit();
    const module = wabt.parseWat('and-count.wat', AND_COUNT_WAT, { simd: true });
    module.validate();
    expect(Buffer.from(module.toBinary({}).buffer).toString('base64')).toBe(AND_COUNT_WASM);
  });

  it('equals a bit-by-bit AND and count for any length, repeated inputs, after its memory grew and shrank back', () => {
    const random = seededRandom(7);
    // 1,000,000 agents are 31,250 words (the memory grows to several pages); lengths not a multiple of 4 words
    // leave a padded tail, which a longer call before has filled with its own words.
    for (const words of [1, 3, 4, 5, 31, 3_125, 31_250, 7, 40_001, 2]) {
      const [a, b, c, d] = [0, 1, 2, 3].map(() => bitset(random, words + random.int(3)));
      for (const inputs of [
        [a!, b!, c!, d!],
        [a!, a!, a!, a!],
        [a!, b!, b!, a!],
        [d!, c!, c!, c!],
      ] as const) {
        const out = new Uint32Array(words + 2).fill(0xdeadbeef);
        const count = andCount(...inputs, out, words);
        // Nothing past `words` is written.
        const expected = new Uint32Array(words + 2).fill(0xdeadbeef);
        let expectedCount = 0;
        for (let w = 0; w < words; w++) {
          expected[w] = inputs[0][w]! & inputs[1][w]! & inputs[2][w]! & inputs[3][w]!;
          expectedCount += popcount32(expected[w]!);
        }
        expect(count, `${words} words`).toBe(expectedCount);
        expect(Buffer.from(out.buffer).equals(Buffer.from(expected.buffer)), `${words} words`).toBe(true);
      }
    }
  });

  it('returns undefined when turned off, so that the caller runs its JavaScript loop', () => {
    const bits = Uint32Array.of(1, 2, 3, 4);
    expect(andCount(bits, bits, bits, bits, new Uint32Array(4), 4)).toBe(5); // 1, 1, 2 and 1 bits
    SIMD_AND.enabled = false;
    expect(andCount(bits, bits, bits, bits, new Uint32Array(4), 4)).toBeUndefined();
  });
});
