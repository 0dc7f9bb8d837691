import { seededRandomBytes } from '../lib/ids';

/**
 * Seeded choices for the demo directory. Built only from integer arithmetic
 * over seededRandomBytes (no Math.random, no transcendental functions), so
 * the demo data is bit-for-bit the same on every machine.
 */
export interface DemoRandom {
  /** Uniform in [0, 1). */
  float(): number;
  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** An item chosen with probability proportional to its weight. */
  weighted<T>(items: readonly T[], weights: readonly number[]): T;
  /** `count` distinct items (or all, if fewer), in random order. */
  sample<T>(items: readonly T[], count: number): T[];
  shuffle<T>(items: readonly T[]): T[];
  /** Approximately standard normal (Irwin–Hall sum of 12 uniforms). */
  gaussian(): number;
}

export function createDemoRandom(seed: number): DemoRandom {
  const bytes = seededRandomBytes(seed);
  const random: DemoRandom = {
    float() {
      return bytes(4).readUInt32LE(0) / 0x1_0000_0000;
    },
    int(min, max) {
      return min + Math.floor(random.float() * (max - min + 1));
    },
    chance(probability) {
      return random.float() < probability;
    },
    pick(items) {
      return items[Math.floor(random.float() * items.length)]!;
    },
    weighted(items, weights) {
      const total = weights.reduce((sum, w) => sum + w, 0);
      let target = random.float() * total;
      for (let i = 0; i < items.length; i++) {
        target -= weights[i]!;
        if (target < 0) return items[i]!;
      }
      return items[items.length - 1]!;
    },
    shuffle(items) {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(random.float() * (i + 1));
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    },
    sample(items, count) {
      return random.shuffle(items).slice(0, count);
    },
    gaussian() {
      let sum = 0;
      for (let i = 0; i < 12; i++) sum += random.float();
      return sum - 6;
    },
  };
  return random;
}
