/**
 * The index alone (no service, no HTTP): µs per query for each bench query class, on the bench's generated
 * agents, fed in id order with the trust scores a fresh import gives them (as the HTTP bench's server sees them).
 * For A/B work on the retrieval side: `--ab` alternates rounds with the switches in `TOGGLES` on and off
 * (`--ab-id-ranks`: only the id ranks of top-k.ts, against id strings; `--ab-names`: only the name split of
 * name-split.ts; `--ab-fused`: only the one-pass matching bits of matching-bits.ts; `--ab-collect`: only name-split.ts's one-pass count
 * and cover of a name set; `--ab-fill`: only threshold.ts's bigger steps in step, ADAPTIVE.fill; `--ab-cuts`: only
 * set-reads.ts's orders cut to a name word's agents, RESTRICTED_ORDERS; `--ab-chunks`: ADAPTIVE's chunks as they are,
 * "new", against 32 agents, at least one per 16 read, "old").
 *
 *   npx tsx bench/search-classes.ts --agents 100000 [--rounds 5]
 *     [--ab | --ab-id-ranks | --ab-names | --ab-fused | --ab-collect | --ab-fill | --ab-cuts | --ab-chunks]
 *
 * Not a test: numbers depend on the machine; compare within one run.
 */
import { performance } from 'node:perf_hooks';
import { FUSED } from '../src-api/modules/search/matching-bits';
import { RESTRICTED_ORDERS } from '../src-api/modules/search/index-store';
import { pruningStats } from '../src-api/modules/search/pruned';
import { ID_RANKS } from '../src-api/modules/search/top-k';

import { COLLECT, NAME_SPLIT } from '../src-api/modules/search/name-split';
import { SWEEP } from '../src-api/modules/search/sweep';
import { ADAPTIVE, SLOT_SCORER, THRESHOLD_BUDGET, thresholdStats, TIE_ORDER } from '../src-api/modules/search/threshold';
import { classSearches, generateAgents, indexAsImported, SEARCH_CLASSES } from './lib/dataset';
import { loadAverage } from './lib/cli';

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const size = arg('--agents', 100_000);
const rounds = arg('--rounds', 5);
const abIdRanks = process.argv.includes('--ab-id-ranks');
const abNames = process.argv.includes('--ab-names');
const abFused = process.argv.includes('--ab-fused');
const abCollect = process.argv.includes('--ab-collect');
const abFill = process.argv.includes('--ab-fill');
const abCuts = process.argv.includes('--ab-cuts');
const abChunks = process.argv.includes('--ab-chunks');
const ab = abIdRanks || abNames || abFused || abCollect || abFill || abCuts || abChunks || process.argv.includes('--ab');
ADAPTIVE.chunk = arg('--chunk', ADAPTIVE.chunk);
// From how many words the split runs from the start of a run (shorter queries start it late: see NAME_SPLIT).
NAME_SPLIT.earlyWords = arg('--name-min-words', NAME_SPLIT.earlyWords);
if (process.argv.includes('--budget-share')) THRESHOLD_BUDGET.share = arg('--budget-share', THRESHOLD_BUDGET.share);
console.log(
  `node ${process.version}, ${size.toLocaleString('en')} agents, threshold budget ${THRESHOLD_BUDGET.share}, chunk ${ADAPTIVE.chunk}, load ${loadAverage()}`,
);
const started = performance.now();
const agents = generateAgents(size);
const index = indexAsImported(agents);
console.log(`built in ${((performance.now() - started) / 1000).toFixed(1)} s, RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`);

type Search = ReturnType<typeof classSearches>[number];
const sets = SEARCH_CLASSES.map((kind) => ({ kind, queries: classSearches(agents, kind, 300) }));
const run = (s: Search) => index.search(s.q, 20, { type: s.type, minTrust: s.min_trust, capabilities: s.capabilities });

function measure(queries: Search[]): { us: number; p99: number; done: number; gaveUp: number; scored: number; visited: number } {
  const times: number[] = [];
  let done = 0;
  let gaveUp = 0;
  let scored = 0;
  let visited = 0;
  const cpu = process.cpuUsage();
  for (const s of queries) {
    thresholdStats.visited = 0;
    const t0 = performance.now();
    run(s);
    times.push((performance.now() - t0) * 1000);
    if (pruningStats.threshold === 'done') done++;
    if (pruningStats.threshold === 'gave up') gaveUp++;
    scored += pruningStats.scored;
    visited += thresholdStats.visited;
  }
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  // CPU time, not wall: on a machine shared with other work, wall time mostly measures the others.
  const mean = (used.user + used.system) / times.length;
  return {
    us: mean,
    p99: times[Math.floor(times.length * 0.99)]!,
    done,
    gaveUp,
    scored: scored / queries.length,
    visited: visited / queries.length,
  };
}

/** ADAPTIVE's chunk settings: `on` as given, off the old ones. */
function chunksToggle(on: Partial<typeof ADAPTIVE>, off: Partial<typeof ADAPTIVE>): { enabled: boolean } {
  return {
    set enabled(value: boolean) {
      Object.assign(ADAPTIVE, value ? on : off);
    },
  };
}

/** The paths under test, switched off for the "old" rounds of `--ab`. */
const TOGGLES: { enabled: boolean }[] = abIdRanks
  ? [ID_RANKS]
  : abNames
    ? [NAME_SPLIT]
    : abFused
      ? [FUSED]
      : abCollect
        ? [COLLECT]
        : abFill
          ? [
              {
                set enabled(on: boolean) {
                  ADAPTIVE.fill = on;
                },
              },
            ]
          : abCuts
            ? [RESTRICTED_ORDERS]
            : abChunks
              ? [chunksToggle({ chunk: ADAPTIVE.chunk, chunkEvery: ADAPTIVE.chunkEvery }, { chunk: 32, chunkEvery: 16 })]
              : [TIE_ORDER, SWEEP, ADAPTIVE, SLOT_SCORER];
const variants = ab ? [false, true] : [true];
const best = new Map<string, ReturnType<typeof measure>>();
for (let round = 0; round < rounds; round++) {
  for (const { kind, queries } of sets) {
    for (const on of round % 2 === 0 ? variants : [...variants].reverse()) {
      for (const toggle of TOGGLES) toggle.enabled = on;
      const m = measure(queries);
      const key = `${kind}|${on}`;
      const previous = best.get(key);
      if (!previous || m.us < previous.us) best.set(key, m);
    }
  }
}
for (const { kind } of sets) {
  const line = variants.map((on) => {
    const m = best.get(`${kind}|${on}`)!;
    return `${on ? 'new' : 'old'} ${m.us.toFixed(0)} µs CPU (wall p99 ${m.p99.toFixed(0)}; TA done ${m.done} gave up ${m.gaveUp}; blocks ${m.scored.toFixed(0)}, visited ${m.visited.toFixed(0)})`;
  });
  const ratio = ab ? `  ×${(best.get(`${kind}|false`)!.us / best.get(`${kind}|true`)!.us).toFixed(2)}` : '';
  console.log(`${kind.padEnd(24)} ${line.join(' | ')}${ratio}`);
}
console.log(`load ${loadAverage()}`);
