/**
 * Per-class cost of a search in this process, through the REST routes' path (`searchJson`: index, profiles,
 * JSON bytes), result cache off, on the bench's generated directory. With `--base DIR` (another checkout of
 * the project, node_modules linked), the same queries also run through that checkout's SearchService over the
 * same database, alternating rounds, so a busy machine slows both alike: compare the ratios.
 *
 * `--ab-id-ranks` instead compares this checkout with itself, TopK breaking ties on id strings ("base") or id ranks.
 *
 *   npx tsx bench/search-service-ab.ts --agents 100000 [--base /tmp/base | --ab-id-ranks] [--rounds 6] [--classes prefix,exact,mixed]
 *     [--per-query] [--first-only] [--slowest 10] [--allow-different] [--profile-cache-entries 1100000]
 *
 * Class `mixed` is the bench's mixed search load (`mixedSearches`, its first 1,000), not one of the issue's classes.
 *
 * The database is generated once per size under the OS temp folder and reused. Not a test.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import * as ownConfig from '../src-api/config';
import * as ownClient from '../src-api/db/client';
import * as ownServices from '../src-api/services';
import { ID_RANKS } from '../src-api/modules/search/top-k';
import { classSearches, generateAgents, mixedSearches } from './lib/dataset';
import { argument, chosenClasses, loadAverage } from './lib/cli';

const size = Number(argument('agents') ?? 100_000);
const rounds = Number(argument('rounds') ?? 6);
const baseDir = argument('base');
const classes = chosenClasses();
/**
 * `--profile FILE`: a CPU profile of the timed rounds only (not the build, nor first passes unless `--profile-first`),
 * for `chrome://inspect` or a summary script.
 */
const profileFile = argument('profile');
/**
 * `--first-only`: only the first passes (each query new to both variants: its typo, stem and prefix expansions
 * computed), one query by each variant in turn rather than one variant's whole pass after the other's, then the
 * answers compared; no repeated rounds.
 */
const firstOnly = process.argv.includes('--first-only');
/** `--allow-different`: answers that differ between the variants are counted, not an error (a change meant to alter them). */
const allowDifferent = process.argv.includes('--allow-different');
/** `--slowest N`: after each class, its N slowest queries in the first pass (the last variant's times), to find outliers. */
const slowest = Number(argument('slowest') ?? 0);
/** `--profile-cache-entries N`: this checkout's profile cache holds N profiles (the base keeps the default), warmed as at start-up. */
const profileCacheEntries = argument('profile-cache-entries') === undefined ? undefined : Number(argument('profile-cache-entries'));

interface Variant {
  name: string;
  /** Sync in checkouts before search was ported to the Store (4e67268 and older), async since: both are awaited. */
  searchJson: (params: Record<string, unknown>) => { json: Buffer } | Promise<{ json: Buffer }>;
}

/** A SearchService from the checkout at `dir` (this one when undefined), over the database in `dataDir`, with the index built. */
async function load(name: string, dir: string | undefined, dataDir: string, entries?: number): Promise<Variant> {
  // Static imports for this checkout, so that a bundled copy of this script (for line-level profiles) runs too.
  const from = async <T>(module: string, own: T): Promise<T> => (dir ? ((await import(path.join(dir, module))) as T) : own);
  const { createConfig, databasePath } = await from('src-api/config.ts', ownConfig);
  const { openDatabase } = await from('src-api/db/client.ts', ownClient);
  const { createServices } = await from('src-api/services.ts', ownServices);
  const config = createConfig({
    dataDir,
    demoData: false,
    searchCache: false,
    ...(entries !== undefined && { profileCacheEntries: entries }),
  });
  const services = createServices({ db: openDatabase(databasePath(config)), config });
  await services.search.refresh();
  // As the server at start-up: every profile serialized into the cache, so first passes measure the engine.
  await new Promise<void>((resolve, reject) => services.agents.warmUpProfiles({ onDone: resolve, onError: reject }));
  return { name, searchJson: (params) => services.search.searchJson(params as never) };
}

async function database(): Promise<string> {
  const dataDir = path.join(os.tmpdir(), `agentdir-search-service-ab-${size}`);
  if (fs.existsSync(path.join(dataDir, 'ready'))) return dataDir;
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  const { createConfig, databasePath } = ownConfig;
  const { openDatabase } = ownClient;
  const { createServices } = ownServices;
  const config = createConfig({ dataDir, demoData: false });
  const db = openDatabase(databasePath(config));
  const services = createServices({ db, config });
  await services.store.transaction(async () => {
    for (const { id, ...input } of generateAgents(size)) await services.agents.edits.create(input, { id, emitEvents: false });
  });
  db.$client.close();
  fs.writeFileSync(path.join(dataDir, 'ready'), '');
  return dataDir;
}

const dataDir = await database();
const agents = generateAgents(size);
const variants = [await load('this', undefined, dataDir, profileCacheEntries)];
if (baseDir) variants.unshift(await load('base', path.resolve(baseDir), dataDir));
if (process.argv.includes('--ab-id-ranks')) {
  const own = variants[0]!;
  const withRanks = (enabled: boolean) => (params: Record<string, unknown>) => {
    ID_RANKS.enabled = enabled;
    return own.searchJson(params);
  };
  variants.splice(0, 1, { name: 'base', searchJson: withRanks(false) }, { name: 'this', searchJson: withRanks(true) });
}
console.log(`${size.toLocaleString('en')} agents, node ${process.version}, load ${loadAverage()}`);

const session = new Session();
if (profileFile) {
  session.connect();
  await session.post('Profiler.enable');
}
for (const kind of classes) {
  const searches = (kind as string) === 'mixed' ? mixedSearches(agents, 1000) : classSearches(agents, kind, 1000);
  const queries = searches.map(({ q, ...filters }) => ({ q, limit: 20, ...filters }));
  if (profileFile && process.argv.includes('--profile-first') && kind === classes[0]) await session.post('Profiler.start');
  // First pass: expansions (typos, prefixes, stems) not cached yet, as for each new query.
  const cold: number[] = variants.map(() => 0);
  const firstTimes = queries.map(() => 0);
  const timed = async (variant: Variant, q: number): Promise<number> => {
    const started = performance.now();
    await variant.searchJson(queries[q]!);
    const elapsed = performance.now() - started;
    firstTimes[q] = elapsed;
    return elapsed;
  };
  if (firstOnly) {
    for (const q of queries.keys()) {
      for (const [v, variant] of variants.entries()) cold[v]! += ((await timed(variant, q)) * 1000) / queries.length;
    }
  } else {
    for (const [v, variant] of variants.entries()) {
      for (const q of queries.keys()) cold[v]! += ((await timed(variant, q)) * 1000) / queries.length;
    }
  }
  if (slowest > 0) {
    const order = [...queries.keys()].sort((a, b) => firstTimes[b]! - firstTimes[a]!).slice(0, slowest);
    for (const q of order) console.log(`  ${firstTimes[q]!.toFixed(2).padStart(8)} ms  ${JSON.stringify(queries[q])}`);
  }
  // Profiles show the steady state: from the end of the first class's first pass.
  if (profileFile && !process.argv.includes('--profile-first') && kind === classes[0]) await session.post('Profiler.start');
  // The answers must be byte for byte the same (with --allow-different: counted, for a change that means to differ).
  if (variants.length === 2) {
    let different = 0;
    for (const query of queries) {
      const [a, b] = await Promise.all(variants.map(async (variant) => (await variant.searchJson(query)).json));
      if (a!.equals(b!)) continue;
      if (!allowDifferent) throw new Error(`${kind}: different answers for ${JSON.stringify(query)}`);
      different++;
    }
    if (allowDifferent) console.log(`${kind}: ${different} of ${queries.length} answers differ`);
  }
  if (firstOnly) {
    const figures = variants.map((variant, v) => `${variant.name} first ${cold[v]!.toFixed(0)} µs`).join(', ');
    const ratio = variants.length === 2 ? `, this/base ${(cold[1]! / cold[0]!).toFixed(2)}` : '';
    console.log(`${kind.padEnd(24)} ${figures}${ratio} (first passes, query by query in turn)`);
    continue;
  }
  const best = variants.map(() => Infinity);
  if (process.argv.includes('--per-query')) {
    // On a busy machine: each query `rounds` times by each variant in turn, its fastest time each; the sum of those
    // minimums leaves out most of the time other processes took (a whole round's best still holds some of it).
    const fastest = variants.map(() => queries.map(() => Infinity));
    for (let round = 0; round < rounds; round++) {
      for (const [q, query] of queries.entries()) {
        for (const [v, variant] of variants.entries()) {
          const started = performance.now();
          await variant.searchJson(query);
          fastest[v]![q] = Math.min(fastest[v]![q]!, performance.now() - started);
        }
      }
    }
    fastest.forEach((times, v) => (best[v] = (times.reduce((sum, time) => sum + time, 0) * 1000) / queries.length));
  } else {
    for (let round = 0; round < rounds; round++) {
      for (const [v, variant] of variants.entries()) {
        const started = performance.now();
        for (const query of queries) await variant.searchJson(query);
        best[v] = Math.min(best[v]!, ((performance.now() - started) * 1000) / queries.length);
      }
    }
  }
  const figures = variants.map((variant, v) => `${variant.name} ${best[v]!.toFixed(1)} µs (first ${cold[v]!.toFixed(0)})`).join(', ');
  const ratio = variants.length === 2 ? `, this/base ${(best[1]! / best[0]!).toFixed(2)}` : '';
  console.log(
    `${kind.padEnd(24)} ${figures}${ratio} (${process.argv.includes('--per-query') ? `sum of per-query bests of ${rounds}` : `best round of ${rounds}`})`,
  );
}
if (profileFile) {
  const { profile } = await session.post('Profiler.stop');
  fs.writeFileSync(profileFile, JSON.stringify(profile));
}
console.log(`load ${loadAverage()}`);
