/**
 * mulberry32: a tiny deterministic generator, for data that must be the same on every machine (demo
 * ids, generated benchmark directories) and for test corpora a failure can name by seed. Not for secrets.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Numbers in [0, 1), integers below a bound, picks and samples, all from one seed. */
export function seededRandom(seed: number) {
  const nextUint32 = mulberry32(seed);
  const next = (): number => nextUint32() / 4294967296;
  return {
    next,
    int: (max: number) => Math.floor(next() * max),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    /** `count` different items (all of them when there are fewer). */
    sample: <T>(items: readonly T[], count: number): T[] => {
      const chosen = new Set<T>();
      while (chosen.size < Math.min(count, items.length)) chosen.add(items[Math.floor(next() * items.length)]!);
      return [...chosen];
    },
  };
}
