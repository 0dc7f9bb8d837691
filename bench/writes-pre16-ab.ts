/**
 * The bench's in-process write loop (bench/lib/measure.ts measureInProcess: a review, then an
 * agent update with its events, on random agents) A/B against a checkout from before the data-
 * access seam (d60f1b0: sync services, `agents.update`), in one process on SQLite. Each side has
 * its own copy of one seeded file (so neither reads the other's writes as changes), its search
 * index built first as in the bench; rounds alternate. µs per write, median of the rounds, and
 * the ratio this/base.
 *
 *   npx tsx bench/writes-pre16-ab.ts --base /work/wt/base-pre16 [--bench-data] [--agents 100000] [--rounds 15] [--ops 400] [--only <name prefix>] [--count] [--profile <file>]
 *
 * Not a test: the figures depend on the machine and its load (printed first and last).
 */
import fs from 'node:fs';
import inspector from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { createConfig } from '../src-api/config';
import { openDatabase } from '../src-api/db/client';
import { createServices, type Services } from '../src-api/services';
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { abOptions, cliArg, seedAbAgents } from './lib/alternate';
import { loadAverage } from './lib/cli';
import { createRandom, generateAgents, writeAgentsJsonl } from './lib/dataset';

const { base, agentCount, rounds, ops } = abOptions({ ops: 400 });
/** `--bench-data`: bench/lib/dataset's agents (descriptions, capabilities) imported as the bench does, not seedAbAgents' short rows. */
const benchData = process.argv.includes('--bench-data');
const only = cliArg('only', '');

type Loose = Record<string, (...args: unknown[]) => unknown>;

/** `--count`: better-sqlite3's prepare, exec and statement calls counted by SQL text, per side (both use one better-sqlite3). */
const counting = { side: '', counts: new Map<string, Map<string, number>>() };
function countStatements() {
  const bump = (kind: string, text: string) => {
    let m = counting.counts.get(counting.side);
    if (!m) counting.counts.set(counting.side, (m = new Map()));
    const key = `${kind} ${text.replace(/\s+/g, ' ').slice(0, 110)}`;
    m.set(key, (m.get(key) ?? 0) + 1);
  };
  type Method = (this: { source: string }, ...args: unknown[]) => unknown;
  const database = Database.prototype as unknown as Record<'prepare' | 'exec', Method>;
  for (const name of ['prepare', 'exec'] as const) {
    const original = database[name];
    database[name] = function (...args) {
      bump(name, args[0] as string);
      return original.apply(this, args);
    };
  }
  const statement = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as Record<string, Method>;
  for (const name of ['run', 'get', 'all', 'iterate']) {
    const original = statement[name]!;
    statement[name] = function (...args) {
      bump(name, this.source);
      return original.apply(this, args);
    };
  }
}

async function main() {
  if (process.argv.includes('--count')) countStatements();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-writes-ab-'));
  const [fileBase, fileThis] = [path.join(dir, 'base.sqlite'), path.join(dir, 'this.sqlite')];
  let ids: string[];
  if (benchData) {
    // The bench's directory, imported by the base's compiled CLI (its out/api; `npm run build:api` there),
    // kept in `--data-cache <file>` when given (and taken from it next time).
    const agents = generateAgents(agentCount);
    const cache = cliArg('data-cache', '');
    if (cache && fs.existsSync(cache)) fs.copyFileSync(cache, fileBase);
    else {
      await writeAgentsJsonl(path.join(dir, 'agents.jsonl'), agents);
      execFileSync('node', [path.join(base, 'out/api/cli.js'), 'import', path.join(dir, 'agents.jsonl'), '--data-dir', dir], {
        stdio: 'ignore',
      });
      const imported = new Database(path.join(dir, 'agent-directory.sqlite'));
      imported.pragma('wal_checkpoint(TRUNCATE)');
      imported.close();
      fs.renameSync(path.join(dir, 'agent-directory.sqlite'), fileBase);
      if (cache) fs.copyFileSync(fileBase, cache);
    }
    ids = agents.map((agent) => agent.id);
  } else {
    const seed = openDatabase(fileBase);
    ids = seedAbAgents(seed, agentCount);
    seed.$client.close();
  }
  fs.copyFileSync(fileBase, fileThis);

  const config = createConfig({ dataDir: dir, demoData: false, searchCache: false, rateLimit: { enabled: false } });
  const fromBase = (module: string) => import(path.join(base, 'src-api', module));
  const [{ createServices: createBase }, { openDatabase: openBase }] = await Promise.all([
    fromBase('services.ts'),
    fromBase('db/client.ts'),
  ]);
  const baseServices = createBase({ db: openBase(fileBase), config }) as Services;
  const services = createServices({ db: openDatabase(fileThis), config });
  // The bench searches before it writes: the index is built.
  await (baseServices.search.search as (q: unknown) => unknown)({ query: 'data', limit: 20 });
  await services.search.search({ query: 'data', limit: 20 });

  const review = { rating: 4, comment: 'bench', reviewer_name: 'bench' };
  // The bench's loop picks agents at random (bench/lib/measure.ts); both sides the same ones.
  const random = createRandom(3);
  const picks = Array.from({ length: 1 << 16 }, () => ids[random.int(ids.length)]!);
  const pick = (i: number) => picks[i & 0xffff]!;
  // d60f1b0 has agents.update; a base after the seam has agents.edits.update.
  const baseAgents = ((baseServices.agents as unknown as { edits?: Loose }).edits ?? baseServices.agents) as unknown as Loose;
  const baseReviews = baseServices.reviews as unknown as Loose;
  const before = {
    'review, update (bench loop)': (i: number) =>
      i % 2 === 0
        ? baseReviews.create!(pick(i), review)
        : baseAgents.update!(pick(i), { tagline: `Updated tagline ${i}` }, { emitEvents: true }),
    'reviews.create': (i: number) => baseReviews.create!(pick(i), review),
    'agents update (events)': (i: number) => baseAgents.update!(pick(i), { tagline: `Tagline b ${i}` }, { emitEvents: true }),
  };
  const after = {
    'review, update (bench loop)': (i: number) =>
      i % 2 === 0
        ? services.reviews.create(pick(i), review)
        : services.agents.edits.update(pick(i), { tagline: `Updated tagline ${i}` }, { emitEvents: true }),
    'reviews.create': (i: number) => services.reviews.create(pick(i), review),
    'agents update (events)': (i: number) => services.agents.edits.update(pick(i), { tagline: `Tagline b ${i}` }, { emitEvents: true }),
  };

  console.log(`node ${process.version}, ${os.cpus().length} CPUs, load average ${loadAverage()}`);
  console.log(`${agentCount} agents; base ${base}; ${rounds} rounds of ${ops} calls per variant, alternating`);
  if (process.argv.includes('--count')) {
    // Statements per call (countStatements: prepared, run, read), 100 calls of each, per side.
    for (const name of Object.keys(before) as (keyof typeof before)[]) {
      for (const [side, calls] of [
        ['base', before],
        ['this', after],
      ] as const) {
        counting.side = `${name} ${side}`;
        for (let i = 0; i < 100; i++) await calls[name](i + 70000);
        const m = counting.counts.get(counting.side) ?? new Map<string, number>();
        console.log(`--- ${counting.side}: ${[...m.values()].reduce((a, b) => a + b, 0) / 100} per call`);
        for (const [sql, n] of [...m].sort((x, y) => y[1] - x[1])) console.log(`${(n / 100).toFixed(2).padStart(6)} ${sql}`);
      }
    }
    return;
  }
  const chosen = <T extends object>(all: T): T =>
    (only ? Object.fromEntries(Object.entries(all).filter(([name]) => name.startsWith(only))) : all) as T;
  // `--profile <file>`: a CPU profile of the measured rounds only (not the import, the index build).
  const profileFile = cliArg('profile', '');
  const session = profileFile ? new inspector.Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  await alternateCpu(chosen(before), chosen(after));
  if (session) fs.writeFileSync(profileFile, JSON.stringify((await session.post('Profiler.stop')).profile));
  console.log(`load average at the end ${loadAverage()}`);
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Wall and CPU µs per call of `run` over `n` calls, each awaited. */
async function measure(run: (i: number) => unknown, n: number, from: number): Promise<[number, number]> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = from; i < from + n; i++) await run(i);
  const used = process.cpuUsage(cpu);
  return [((performance.now() - start) * 1000) / n, (used.user + used.system) / n];
}

/**
 * Like lib/alternate's, with CPU time beside wall time (on a loaded machine the process's CPU
 * time per call is the steadier figure): the order flipped every round, a warm-up first.
 */
async function alternateCpu<Names extends string>(
  base: Record<Names, (i: number) => unknown>,
  current: Record<Names, (i: number) => unknown>,
) {
  const names = Object.keys(base) as Names[];
  const samples = new Map(names.map((name) => [name, { b: [] as [number, number][], a: [] as [number, number][] }]));
  let at = 0;
  for (const name of names) {
    await measure(base[name], ops / 4, (at += ops));
    await measure(current[name], ops / 4, at);
  }
  for (let round = 0; round < rounds; round++)
    for (const name of names) {
      const { b, a } = samples.get(name)!;
      at += ops;
      if (round % 2) {
        a.push(await measure(current[name], ops, at));
        b.push(await measure(base[name], ops, at));
      } else {
        b.push(await measure(base[name], ops, at));
        a.push(await measure(current[name], ops, at));
      }
    }
  const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
  for (const name of names) {
    const { b, a } = samples.get(name)!;
    const [bw, aw, bc, ac] = [
      median(b.map((s) => s[0])),
      median(a.map((s) => s[0])),
      median(b.map((s) => s[1])),
      median(a.map((s) => s[1])),
    ];
    console.log(
      `${name.padEnd(28)} wall base ${bw.toFixed(0).padStart(6)} this ${aw.toFixed(0).padStart(6)} µs ${(aw / bw).toFixed(3)}×` +
        `   cpu base ${bc.toFixed(0).padStart(6)} this ${ac.toFixed(0).padStart(6)} µs ${(ac / bc).toFixed(3)}×`,
    );
  }
}

void main();
