/**
 * The profile cache of a directory larger than the cache, as TextArena sees it: pages of 20 random agents out of
 * `--agents` (default 1,000,000), a hit visited by handle, a miss kept as the newest text with the oldest dropped
 * once `--entries` (default 150,000: a cap below the directory, the server's before it held 1,000,000) are held.
 * This checkout's TextArena against another checkout's (`--base DIR`), alternating rounds over the same pages in one
 * process; both must hold the same keys.
 *
 *   npx tsx bench/text-arena-churn-ab.ts --base /tmp/base [--agents 1000000] [--entries 150000] [--pages 20000] [--rounds 3]
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { TextArena } from '../src-api/lib/text-arena';
import { createRandom } from './lib/dataset';
import { argument, loadAverage } from './lib/cli';

const base = path.resolve(argument('base') ?? '.');
const { TextArena: BaseArena } = (await import(path.join(base, 'src-api/lib/text-arena.ts'))) as { TextArena: typeof TextArena };
const agents = Number(argument('agents') ?? 1_000_000);
const entries = Number(argument('entries') ?? 150_000);
const pageCount = Number(argument('pages') ?? 20_000);
const rounds = Number(argument('rounds') ?? 3);

// A profile-sized text per agent (~880 bytes, as the bench's profiles), made once: the loop measures the arena only.
const profileOf = (n: number) => `{"id":"bench-${n.toString(36)}","description":"${'x'.repeat(840)}"}`;
const random = createRandom(21);
const pages = Array.from({ length: pageCount }, () => Array.from({ length: 20 }, () => random.int(agents)));
const texts = new Map<number, string>();
for (const page of pages) for (const n of page) if (!texts.has(n)) texts.set(n, profileOf(n));
const keys = new Map([...texts.keys()].map((n) => [n, `bench-${n.toString(36)}`]));

/** One tag for every handle (a handle here always stands for one key); a base checkout from before tags takes none. */
function visitAt(arena: TextArena, handle: number, key: string, visit: (chunk: Buffer, start: number, end: number) => void): boolean {
  if (arena.visitBytesAt.length >= 4) return arena.visitBytesAt(handle, 1, key, visit);
  const untagged = arena.visitBytesAt as unknown as (
    handle: number,
    key: string,
    visit: (chunk: Buffer, start: number, end: number) => void,
  ) => boolean;
  return untagged.call(arena, handle, key, visit);
}

function run(arena: TextArena): { microsPerPage: number; worstMs: number } {
  const filler = profileOf(agents);
  for (let n = 0; n < entries; n++) arena.set(`fill-${n}`, filler);
  let bytes = 0;
  const visit = (_chunk: Buffer, start: number, end: number) => void (bytes += end - start);
  let worstMs = 0;
  const started = performance.now();
  for (const page of pages) {
    const pageStarted = performance.now();
    for (const n of page) {
      const key = keys.get(n)!;
      if (visitAt(arena, n, key, visit)) continue;
      if (arena.size >= entries) arena.delete(arena.oldestKey()!);
      arena.set(key, texts.get(n)!);
    }
    worstMs = Math.max(worstMs, performance.now() - pageStarted);
  }
  if (bytes === 0) throw new Error('no hit visited');
  return { microsPerPage: ((performance.now() - started) * 1000) / pages.length, worstMs };
}

console.log(
  `${agents.toLocaleString('en')} agents, ${entries.toLocaleString('en')} entries, ${pageCount} pages of 20, load ${loadAverage()}`,
);
const results: { base: number[]; this: number[] } = { base: [], this: [] };
for (let round = 0; round < rounds; round++) {
  const arenas = { base: new BaseArena() as TextArena, this: new TextArena() };
  for (const name of ['base', 'this'] as const) {
    const { microsPerPage, worstMs } = run(arenas[name]);
    results[name].push(microsPerPage);
    console.log(`round ${round + 1} ${name.padEnd(4)} ${microsPerPage.toFixed(1)} µs a page, slowest page ${worstMs.toFixed(1)} ms`);
  }
  // The same keys held, in the same order.
  const order = (arena: TextArena) => {
    const seen: string[] = [];
    for (let key = arena.oldestKey(); key !== undefined && seen.length < 5; key = arena.oldestKey()) {
      seen.push(key);
      arena.delete(key);
    }
    return `${arena.size}:${seen.join(',')}`;
  };
  if (order(arenas.base) !== order(arenas.this)) throw new Error('the two arenas hold different keys');
}
const best = (xs: number[]) => Math.min(...xs);
console.log(
  `best: base ${best(results.base).toFixed(1)} µs, this ${best(results.this).toFixed(1)} µs a page: ${(best(results.this) / best(results.base)).toFixed(3)} of base; load ${loadAverage()}`,
);
