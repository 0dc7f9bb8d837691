/**
 * `cli import` as the bench runs it (bench/run.ts: the compiled CLI, a fresh data dir, the bench's
 * generated agents), this checkout against another, alternating one CLI process each:
 *
 *   npx tsx bench/import-cli-ab.ts /path/to/other/checkout [agents=100000] [rounds=5] [--instructions] [--postgres]
 *
 * Both checkouts need their out/api built (`npm run build:api`). Prints each version's median wall
 * time and CPU time (user + system of the CLI process, steadier than wall on a loaded machine) and
 * the ratios this ÷ other. --instructions: also the instructions the CLI process ran (`perf stat`),
 * which other processes' load hardly moves (CPU time grows with it, as the cores' caches are shared).
 * --postgres: into a fresh database each time on one PostgreSQL server started as the bench starts it (the CLI's
 * CPU and instructions are then only the client's part; compare wall times).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBenchStore, type BenchStore } from './lib/bench-store';
import { generateAgents, writeAgentsJsonl } from './lib/dataset';

const args = process.argv.slice(2);
const instructions = args.includes('--instructions');
const postgres = args.includes('--postgres');
const [otherRoot, agentsArg, roundsArg] = args.filter((arg) => !arg.startsWith('--'));
if (!otherRoot) throw new Error('usage: npx tsx bench/import-cli-ab.ts /path/to/other/checkout [agents] [rounds]');
const count = Number(agentsArg ?? 100_000);
const rounds = Number(roundsArg ?? 5);
const versions = [
  { name: 'this', root: path.resolve(import.meta.dirname, '..') },
  { name: 'other', root: path.resolve(otherRoot) },
];

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-import-cli-ab-'));
let store: BenchStore | undefined;
try {
  store = postgres ? await startBenchStore('postgres') : undefined;
  const file = path.join(work, 'agents.jsonl');
  await writeAgentsJsonl(file, generateAgents(count));
  const samples = new Map(versions.map(({ name }) => [name, { wall: [] as number[], cpu: [] as number[], instructions: [] as number[] }]));
  const perfFile = path.join(work, 'perf.csv');
  const loads: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const { name, root } of r % 2 === 0 ? versions : [...versions].reverse()) {
      const dataDir = path.join(work, `data-${name}-${r}`);
      loads.push(os.loadavg()[0]!);
      // /usr/bin/time: the CLI process's own wall and CPU seconds, on stderr's last line.
      // PostgreSQL: a new database per run, made from template0 as the bench's (its URL with the database name swapped).
      let database: string[] = [];
      if (store?.databaseUrl) {
        const databaseName = `import_${name}_${r}`;
        await runSql(store.databaseUrl, `CREATE DATABASE ${databaseName} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
        const url = new URL(store.databaseUrl);
        url.pathname = `/${databaseName}`;
        database = ['--database', url.toString()];
      }
      const cli = ['node', 'out/api/cli.js', 'import', file, '--data-dir', dataDir, ...database];
      const perf = instructions ? ['perf', 'stat', '-e', 'instructions', '-x', ',', '-o', perfFile, '--'] : [];
      const result = spawnSync('/usr/bin/time', ['-f', '%e %U %S', ...perf, ...cli], { cwd: root, encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`${name}: cli import failed\n${result.stderr}`);
      const [wall, user, system] = result.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
      samples.get(name)!.wall.push(wall!);
      samples.get(name)!.cpu.push(user! + system!);
      // perf's CSV: "<count>,,instructions,…"
      const ran = instructions ? Number(/^(\d+),[^,]*,instructions/m.exec(fs.readFileSync(perfFile, 'utf8'))![1]) / 1e9 : 0;
      samples.get(name)!.instructions.push(ran);
      console.error(
        `  round ${r + 1} ${name}: wall ${wall!.toFixed(2)} s, cpu ${(user! + system!).toFixed(2)} s${instructions ? `, ${ran.toFixed(2)} G instructions` : ''}`,
      );
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
  const [mine, theirs] = versions.map(({ name }) => samples.get(name)!);
  console.log(
    `cli import of ${count} agents${postgres ? ' (PostgreSQL)' : ''}, ${rounds} rounds, load ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}\n` +
      `wall this ${median(mine!.wall).toFixed(2)} s  other ${median(theirs!.wall).toFixed(2)} s  this/other ${(median(mine!.wall) / median(theirs!.wall)).toFixed(3)}\n` +
      `cpu  this ${median(mine!.cpu).toFixed(2)} s  other ${median(theirs!.cpu).toFixed(2)} s  this/other ${(median(mine!.cpu) / median(theirs!.cpu)).toFixed(3)}`,
  );
  if (instructions) {
    const [a, b] = [median(mine!.instructions), median(theirs!.instructions)];
    console.log(`instructions this ${a.toFixed(2)} G  other ${b.toFixed(2)} G  this/other ${(a / b).toFixed(3)}`);
  }
} finally {
  store?.stop();
  fs.rmSync(work, { recursive: true, force: true });
}

/** One statement on the bench's PostgreSQL server, through the pg client. */
async function runSql(url: string, statement: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
