/**
 * One create-only `cli import` step in-process, for a profile or a statement count of one checkout:
 *
 *   node --cpu-prof --cpu-prof-dir=DIR --import tsx bench/import-profile.ts /path/to/checkout [count=50000] [--count-statements]
 *
 * Imports `count` new agents (the records of bench/import-ab.ts) into a fresh SQLite data dir and
 * prints the wall and CPU time of importAgents; with --count-statements, also how many SQLite
 * statements ran (by SQL, most first) per created agent.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const args = process.argv.slice(2);
const countStatements = args.includes('--count-statements');
const [root, countArg] = args.filter((arg) => !arg.startsWith('--'));
if (!root) throw new Error('usage: bench/import-profile.ts /path/to/checkout [count] [--count-statements]');
const count = Number(countArg ?? 50_000);
const from = (file: string) => import(path.join(path.resolve(root), file));
const [config, client, services, importer] = await Promise.all([
  from('src-api/config.ts'),
  from('src-api/db/client.ts'),
  from('src-api/services.ts'),
  from('src-api/modules/agents/agents-import.ts'),
]);
const records = Array.from({ length: count }, (_, i) => ({
  value: {
    id: `agt-bench-${i}`,
    name: `Bench agent ${i}`,
    tagline: `Tagline ${i}`,
    source_url: `https://example.com/bench/${i}`,
    capabilities: ['search', `skill-${i % 50}`],
    type: 'coding',
  },
  line: i + 1,
}));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-import-profile-'));
const db = client.openDatabase(path.join(dataDir, 'agent-directory.sqlite'));
const counts = new Map<string, number>();
if (countStatements) {
  const proto = Object.getPrototypeOf(db.$client.prepare('SELECT 1'));
  for (const method of ['run', 'get', 'all', 'iterate']) {
    const original = proto[method];
    proto[method] = function (this: { source: string }, ...params: unknown[]) {
      counts.set(this.source, (counts.get(this.source) ?? 0) + 1);
      return original.apply(this, params);
    };
  }
  const exec = db.$client.exec;
  db.$client.exec = function (this: unknown, source: string) {
    counts.set(`exec: ${source}`, (counts.get(`exec: ${source}`) ?? 0) + 1);
    return exec.call(this, source);
  } as typeof exec;
}
try {
  const deps = services.createServices({ db, config: config.createConfig({ dataDir }) });
  const cpu = process.cpuUsage();
  const started = performance.now();
  const summary = await importer.importAgents(deps, records, {});
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  console.log(`${root}: ${JSON.stringify(summary)} wall ${wall.toFixed(0)} ms, cpu ${((used.user + used.system) / 1000).toFixed(0)} ms, load ${os.loadavg()[0]!.toFixed(2)}`);
  if (countStatements) {
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    console.log(`statements ${total}, per created agent ${(total / count).toFixed(3)}`);
    for (const [source, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${String(n).padStart(8)}  ${source.slice(0, 140)}`);
  }
} finally {
  db.$client.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
