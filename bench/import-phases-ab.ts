/**
 * Where a create-only import spends its CPU, this checkout against another, alternating in one process:
 *
 *   npx tsx bench/import-phases-ab.ts /path/to/other/checkout [agents=100000] [rounds=3]
 *
 * Imports the bench's generated agents (bench/lib/dataset.ts, as `npm run bench` imports them) into a
 * fresh SQLite data dir with each version and splits importAgents' CPU time (process.cpuUsage: steadier
 * than wall time on a loaded machine) by its progress events: check and plan, the writes, the commit
 * (and whatever follows the last write). Prints the medians per version and this ÷ other.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { generateAgents } from './lib/dataset';
import { loadImportCheckout, type ImportCheckout } from './lib/import-checkout';

const [otherRoot, countArg, roundsArg] = process.argv.slice(2);
if (!otherRoot) throw new Error('usage: npx tsx bench/import-phases-ab.ts /path/to/other/checkout [agents] [rounds]');
const count = Number(countArg ?? 100_000);
const rounds = Number(roundsArg ?? 3);

const agents = generateAgents(count);
const PHASES = ['check + plan', 'write', 'commit', 'total CPU', 'total wall'] as const;

async function round(version: ImportCheckout): Promise<number[]> {
  const records = agents.map((value, i) => ({ value: structuredClone(value), line: i + 1 }));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-import-phases-'));
  const db = version.openDatabase(path.join(dataDir, 'agent-directory.sqlite'));
  try {
    const deps = version.createServices({ db, config: version.createConfig({ dataDir }) });
    const cpu = () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    };
    const marks: Record<string, number> = {};
    const onProgress = ({ phase, done, total }: { phase: string; done: number; total: number }) => {
      if (phase === 'validating' && done === total) marks.planned ??= cpu();
      if (phase === 'writing' && done === 0) marks.writing ??= cpu();
      if (phase === 'writing' && done === total) marks.written ??= cpu();
    };
    const started = cpu();
    const wall = performance.now();
    await version.importAgents(deps, records, { onProgress });
    const ended = cpu();
    return [marks.planned! - started, marks.written! - marks.writing!, ended - marks.written!, ended - started, performance.now() - wall];
  } finally {
    db.$client.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const versions = [
  await loadImportCheckout('this', path.resolve(import.meta.dirname, '..')),
  await loadImportCheckout('other', path.resolve(otherRoot)),
];
const samples = new Map(versions.map((version) => [version.name, PHASES.map(() => [] as number[])]));
const loads: number[] = [];
for (let r = 0; r < rounds; r++) {
  for (const version of r % 2 === 0 ? versions : [...versions].reverse()) {
    loads.push(os.loadavg()[0]!);
    const times = await round(version);
    times.forEach((ms, i) => samples.get(version.name)![i]!.push(ms));
  }
}
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
console.log(`${count} agents (bench data), ${rounds} rounds, load ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}`);
PHASES.forEach((phase, i) => {
  const mine = median(samples.get('this')![i]!);
  const theirs = median(samples.get('other')![i]!);
  console.log(
    `${phase.padEnd(13)} this ${mine.toFixed(0).padStart(6)} ms  other ${theirs.toFixed(0).padStart(6)} ms  this/other ${(mine / theirs).toFixed(3)}`,
  );
});
