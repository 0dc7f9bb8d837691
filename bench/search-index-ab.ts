/**
 * The index alone (no service, no HTTP), A/B against another checkout: each checkout's SearchIndex built from the
 * same generated agents (bench/lib/dataset.ts indexAsImported of its own checkout), the same queries of each class
 * run alternately, each query `rounds` times by each index in turn (which first alternates); the figure is the sum of each query's fastest
 * time (on a busy machine that leaves out most of the time other processes took). Hits (ids, scores) and totals
 * are compared first. For finding which side of searchJson (index or profiles) a service A/B's change is in.
 *
 *   npx tsx bench/search-index-ab.ts --base /work/wt/base-x [--this /work/wt/other] [--agents 100000] [--rounds 5] [--classes filtered,two]
 *
 * Not a test: compare the ratios within one run.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as ownDataset from './lib/dataset';
import { classSearches, generateAgents } from './lib/dataset';
import { argument, chosenClasses, loadAverage } from './lib/cli';

const size = Number(argument('agents') ?? 100_000);
const rounds = Number(argument('rounds') ?? 5);
const baseDir = argument('base');
if (!baseDir) throw new Error('--base DIR: another checkout');
/** `--this DIR`: another checkout in place of this one (to compare two older commits). */
const thisDir = argument('this');
const classes = chosenClasses();
type Index = ReturnType<typeof ownDataset.indexAsImported>;
const agents = generateAgents(size);
const baseDataset = (await import(path.join(path.resolve(baseDir), 'bench/lib/dataset.ts'))) as typeof ownDataset;
const thisDataset = thisDir ? ((await import(path.join(path.resolve(thisDir), 'bench/lib/dataset.ts'))) as typeof ownDataset) : ownDataset;
const variants: { name: string; index: Index }[] = [
  { name: 'base', index: baseDataset.indexAsImported(agents) },
  { name: 'this', index: thisDataset.indexAsImported(agents) },
];
console.log(`${size.toLocaleString('en')} agents, node ${process.version}, load ${loadAverage()}`);

for (const kind of classes) {
  const queries = classSearches(agents, kind, 600);
  const run = (index: Index, s: (typeof queries)[number]) =>
    index.search(s.q, 20, { type: s.type, minTrust: s.min_trust, capabilities: s.capabilities });
  for (const s of queries) {
    const [a, b] = variants.map(({ index }) => run(index, s));
    const same =
      a!.total === b!.total &&
      a!.hits.length === b!.hits.length &&
      a!.hits.every((h, i) => h.id === b!.hits[i]!.id && h.score === b!.hits[i]!.score);
    if (!same) throw new Error(`${kind}: different hits for ${JSON.stringify(s)}`);
  }
  const fastest = variants.map(() => queries.map(() => Infinity));
  for (let round = 0; round < rounds; round++) {
    for (const [q, s] of queries.entries()) {
      // Which goes first alternates: a query's second run finds some of what both read in cache.
      for (let k = 0; k < variants.length; k++) {
        const v = (k + q + round) % variants.length;
        const started = performance.now();
        run(variants[v]!.index, s);
        fastest[v]![q] = Math.min(fastest[v]![q]!, performance.now() - started);
      }
    }
  }
  const us = fastest.map((times) => (times.reduce((sum, time) => sum + time, 0) * 1000) / queries.length);
  console.log(`${kind.padEnd(24)} base ${us[0]!.toFixed(1)} µs, this ${us[1]!.toFixed(1)} µs, this/base ${(us[1]! / us[0]!).toFixed(2)}`);
}
console.log(`load ${loadAverage()}`);
