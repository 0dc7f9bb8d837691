/**
 * The index alone, query by query: for each distinct query of a class (as bench/search-classes.ts builds the
 * index), its fastest time of `--rounds`, how many of the class's queries it is, what the pruned scorer did
 * (threshold algorithm done / gave up / skipped, agents visited, blocks scored) and its share of the class's
 * time. Finds the few queries that make a class's CPU and p99 (e.g. "caln" among the prefixes).
 *
 *   npx tsx bench/search-queries.ts --agents 100000 [--classes prefix,two] [--rounds 5] [--top 15] [--count 1000]
 *     [--q "caln"] [--profile FILE] [--name-min-words 2] [--no-read-on] [--ab-split]
 *
 * `--ab-split`: each query also timed (alternating, same process) with the name split from 3 words and no read-on
 * (main's setting), and the ratio of the two printed.
 *
 * `--q`: only the class's queries with this text. `--profile FILE`: a CPU profile of the timed rounds (rounds × 20).
 *
 * Not a test: numbers depend on the machine.
 */
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { pruningStats } from '../src-api/modules/search/pruned';
import { thresholdStats } from '../src-api/modules/search/threshold';
import { NAME_SPLIT } from '../src-api/modules/search/name-split';
import { classSearches, generateAgents, indexAsImported } from './lib/dataset';
import { argument, chosenClasses, loadAverage } from './lib/cli';

const size = Number(argument('agents') ?? 100_000);
const rounds = Number(argument('rounds') ?? 5);
const top = Number(argument('top') ?? 15);
const count = Number(argument('count') ?? 1000);
const onlyQ = argument('q');
const abSplit = process.argv.includes('--ab-split');
NAME_SPLIT.minWords = Number(argument('name-min-words') ?? NAME_SPLIT.minWords);
NAME_SPLIT.readOn = !process.argv.includes('--no-read-on');
const profileFile = argument('profile');
const classes = chosenClasses();
console.log(
  `node ${process.version}, ${size.toLocaleString('en')} agents, name split from ${NAME_SPLIT.minWords} words, read on ${NAME_SPLIT.readOn}, load ${loadAverage()}`,
);
const agents = generateAgents(size);
const index = indexAsImported(agents);

for (const kind of classes) {
  const queries = classSearches(agents, kind, count).filter(({ q }) => onlyQ === undefined || q === onlyQ);
  const distinct = new Map<string, { query: (typeof queries)[number]; times: number; best: number; outcome: string; old: number }>();
  for (const query of queries) {
    const key = JSON.stringify(query);
    const entry = distinct.get(key);
    if (entry) entry.times++;
    else distinct.set(key, { query, times: 1, best: Infinity, outcome: '', old: Infinity });
  }
  const run = ({ q, type, min_trust, capabilities }: (typeof queries)[number]) =>
    index.search(q, 20, { type, minTrust: min_trust, capabilities });
  for (const entry of distinct.values()) run(entry.query);
  const session = new Session();
  if (profileFile) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  for (let round = 0; round < (profileFile ? rounds * 20 : rounds); round++)
    for (const entry of distinct.values()) {
      if (abSplit) {
        const [minWords, readOn] = [NAME_SPLIT.minWords, NAME_SPLIT.readOn];
        Object.assign(NAME_SPLIT, { minWords: 3, readOn: false });
        const started = performance.now();
        run(entry.query);
        entry.old = Math.min(entry.old, (performance.now() - started) * 1000);
        Object.assign(NAME_SPLIT, { minWords, readOn });
      }
      // The exhaustive scorer leaves the pruned scorer's figures alone: -1 tells it ran.
      pruningStats.blocks = -1;
      const started = performance.now();
      const { total } = run(entry.query);
      entry.best = Math.min(entry.best, (performance.now() - started) * 1000);
      entry.outcome =
        pruningStats.blocks === -1
          ? `total ${total}, exhaustive`
          : `total ${total}, ${pruningStats.threshold}` +
            (pruningStats.threshold === 'skipped' ? '' : ` (visited ${thresholdStats.visited})`) +
            `, blocks scored ${pruningStats.scored}/${pruningStats.blocks}`;
    }
  if (profileFile) {
    const { profile } = await session.post('Profiler.stop');
    fs.writeFileSync(`${profileFile}.${kind.replace(/ /g, '-')}.cpuprofile`, JSON.stringify(profile));
  }
  const sum = [...distinct.values()].reduce((s, e) => s + e.best * e.times, 0);
  const old = [...distinct.values()].reduce((s, e) => s + e.old * e.times, 0);
  if (abSplit)
    console.log(
      `\n${kind}: this ${(sum / queries.length).toFixed(1)} µs, split from 3 words without read-on ${(old / queries.length).toFixed(1)} µs: ${(sum / old).toFixed(2)}`,
    );
  console.log(
    `\n${kind}: ${queries.length} queries, ${distinct.size} distinct, ${(sum / queries.length).toFixed(1)} µs a query (sum of bests)`,
  );
  for (const e of [...distinct.values()].sort((a, b) => b.best * b.times - a.best * a.times).slice(0, top))
    console.log(
      `${e.best.toFixed(0).padStart(7)} µs${abSplit ? ` (${(e.best / e.old).toFixed(2)})` : ''} x${String(e.times).padStart(3)} ${((100 * e.best * e.times) / sum).toFixed(1).padStart(5)}%  ${JSON.stringify(e.query.q)}  ${e.outcome}`,
    );
}
console.log(`\nload ${loadAverage()}`);
