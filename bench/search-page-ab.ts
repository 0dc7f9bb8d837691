/**
 * A search page's parts, A/B on SQLite in one process (issue 13): another checkout's services (default
 * /work/main) next to this checkout's, over one SQLite file of small agents (as bench/agent-reads-ab.ts),
 * alternating round by round. Splits the page into its steps so a regression can be placed: the change cursor
 * read, the profile cache's visit of 20 hits, the JSON page (searchJson) and the page as objects (search).
 * µs per call, median of the rounds, and the ratio this/base. Same answers are checked first.
 *
 *   npx tsx bench/search-page-ab.ts [--base /work/main] [--agents 2000] [--rounds 15] [--ops 2000] [--only name,name] [--cache off]
 *
 * The result cache is on by default, as in bench/agent-reads-ab.ts (whose search page is then a cached answer, parsed).
 *
 * Not a test: the figures depend on the machine and its load (printed first and last).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createConfig } from '../src-api/config';
import { openDatabase } from '../src-api/db/client';
import { createServices } from '../src-api/services';
import { AB_WORDS, abOptions, cliArg, seedAbAgents } from './lib/alternate';

const { base, agentCount, rounds, ops } = abOptions({ ops: 2000 });
const only = process.argv.includes('--only') ? cliArg('only', '').split(',') : undefined;
const searchCache = cliArg('cache', 'on') !== 'off';

type AnyServices = ReturnType<typeof createServices>;
type Loose = Record<string, (...args: unknown[]) => unknown>;

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-search-page-'));
  const config = createConfig({
    dataDir: dir,
    demoData: false,
    adminToken: 'bench-admin-token-0123456789',
    rateLimit: { enabled: false },
    searchCache,
  });
  const words = AB_WORDS;
  const db = openDatabase(path.join(dir, 'agent-directory.sqlite'));
  const ids = seedAbAgents(db, agentCount);

  const mainModule = (file: string) => import(path.join(base, 'src-api', file));
  const [{ createServices: createBase }, { openDatabase: openBase }] = await Promise.all([
    mainModule('services.ts'),
    mainModule('db/client.ts'),
  ]);
  const baseServices = createBase({ db: openBase(path.join(dir, 'agent-directory.sqlite')), config }) as AnyServices;
  const services = createServices({ db, config });

  const pick = (i: number) => ids[(i * 7919) % ids.length]!;
  const twenty = (i: number) => Array.from({ length: 20 }, (_, k) => pick(i + k));
  const query = (i: number) => ({ q: `${words[i % 8]} ${words[(i + 3) % 8]}`, limit: 20 });
  let sink = 0;
  const calls = (s: AnyServices) => {
    const a = s.agents as unknown as Loose;
    // Since search went onto the Store (after 4e67268), SQLite's synchronous reads are agents.searchSync's.
    const sync = (s.agents as { searchSync?: { latestChangeSeq: () => number; profiles: Loose } }).searchSync;
    return {
      latestChangeSeq: () => (sync ? sync.latestChangeSeq() : a.latestChangeSeq!()),
      'visitProfilesJson 20': (i: number) =>
        (sync ? sync.profiles.visitMany! : a.visitProfilesJson!)(twenty(i), (_k: number, _b: Buffer, start: number, end: number) => {
          sink += end - start;
        }),
      'profilesJson 20': (i: number) => (sync ? sync.profiles.getMany! : a.profilesJson!)(twenty(i)),
      'searchJson (2 words)': async (i: number) => (await s.search.searchJson(query(i))).json,
      'search (2 words)': (i: number) => s.search.search(query(i)),
    };
  };
  const before = calls(baseServices);
  const after = calls(services);
  const names = (Object.keys(before) as (keyof typeof before)[]).filter((name) => !only || only.some((o) => name.startsWith(o)));

  const text = (value: unknown) =>
    Buffer.isBuffer(value)
      ? value.toString()
      : value instanceof Map
        ? JSON.stringify([...value].map(([k, v]) => [k, String(v)]))
        : JSON.stringify(value);
  for (const name of names)
    for (const i of [0, 1, 5]) {
      const [x, y] = [text(await before[name](i)), text(await after[name](i))];
      if (x !== y) throw new Error(`${name}: base and this checkout differ\n${x.slice(0, 300)}\n${y.slice(0, 300)}`);
    }

  // Each call awaited (the search methods are async since search went onto the Store; sync ones too, alike).
  const measure = async (run: (i: number) => unknown, n: number) => {
    const start = performance.now();
    for (let i = 0; i < n; i++) await run(i);
    return ((performance.now() - start) * 1000) / n;
  };
  const load = () =>
    os
      .loadavg()
      .map((n) => n.toFixed(1))
      .join(' ');
  console.log(`node ${process.version}, ${os.cpus().length} CPUs, load average ${load()}`);
  console.log(
    `${agentCount} agents; base ${base}; result cache ${searchCache ? 'on' : 'off'}; ${rounds} rounds of ${ops} calls per variant, alternating`,
  );
  const samples = new Map<string, [number[], number[]]>(names.map((name) => [name, [[], []]]));
  for (const name of names) {
    await measure(before[name], ops / 4);
    await measure(after[name], ops / 4);
  }
  for (let round = 0; round < rounds; round++)
    for (const name of names) {
      const [b, a] = samples.get(name)!;
      // Each turn its own event-loop turn, as requests are (the change cursor is kept for one turn).
      await new Promise((resolve) => setImmediate(resolve));
      if (round % 2) {
        a.push(await measure(after[name], ops));
        b.push(await measure(before[name], ops));
      } else {
        b.push(await measure(before[name], ops));
        a.push(await measure(after[name], ops));
      }
    }
  const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
  for (const name of names) {
    const [b, a] = samples.get(name)!.map(median) as [number, number];
    console.log(`${name.padEnd(24)} base ${b.toFixed(2).padStart(8)} µs   this ${a.toFixed(2).padStart(8)} µs   ${(a / b).toFixed(3)}×`);
  }
  console.log(`load average at the end ${load()} (${sink > 0 ? 'ok' : ''})`);
  fs.rmSync(dir, { recursive: true, force: true });
}

void main();
