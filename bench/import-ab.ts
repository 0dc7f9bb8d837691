/**
 * `cli import` in-process, this checkout against another one (before/after a change to the
 * import), alternating in one process so both see the same machine:
 *
 *   npx tsx bench/import-ab.ts /path/to/other/checkout [count=30000] [rounds=3]
 *
 * Each round imports `count` new agents into a fresh SQLite data dir with each version,
 * then the same records again with every tagline changed (updates), then the updates
 * once more with events (`--emit-events`). Prints the median time of each step per version
 * and the ratio this ÷ other. The other checkout may have a sync importAgents (before
 * the Store port); its result is awaited either way.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadImportCheckout, type ImportCheckout } from './lib/import-checkout';

const [otherRoot, countArg, roundsArg] = process.argv.slice(2);
if (!otherRoot) throw new Error('usage: npx tsx bench/import-ab.ts /path/to/other/checkout [count] [rounds]');
const count = Number(countArg ?? 30_000);
const rounds = Number(roundsArg ?? 3);
const thisRoot = path.resolve(import.meta.dirname, '..');

const records = (tagline: string) =>
  Array.from({ length: count }, (_, i) => ({
    value: {
      id: `agt-bench-${i}`,
      name: `Bench agent ${i}`,
      tagline: `${tagline} ${i}`,
      source_url: `https://example.com/bench/${i}`,
      capabilities: ['search', `skill-${i % 50}`],
      type: 'coding',
    },
    line: i + 1,
  }));

const steps = [
  { step: 'create', records: records('Tagline'), options: {} },
  { step: 'update', records: records('Changed'), options: {} },
  { step: 'update + events', records: records('Again'), options: { emitEvents: true } },
];

async function round(version: ImportCheckout): Promise<number[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-import-ab-'));
  const db = version.openDatabase(path.join(dataDir, 'agent-directory.sqlite'));
  try {
    const services = version.createServices({ db, config: version.createConfig({ dataDir }) });
    const times: number[] = [];
    for (const { records: list, options } of steps) {
      const started = performance.now();
      await version.importAgents(services, list, options);
      times.push(performance.now() - started);
    }
    return times;
  } finally {
    db.$client.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const versions = [await loadImportCheckout('this', thisRoot), await loadImportCheckout('other', path.resolve(otherRoot))];
const samples = new Map(versions.map((version) => [version.name, steps.map(() => [] as number[])]));
for (let r = 0; r < rounds; r++) {
  for (const version of r % 2 === 0 ? versions : [...versions].reverse()) {
    const times = await round(version);
    times.forEach((ms, i) => samples.get(version.name)![i]!.push(ms));
  }
}
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
console.log(`${count} agents, ${rounds} rounds, load ${os.loadavg()[0]!.toFixed(2)}`);
steps.forEach(({ step }, i) => {
  const mine = median(samples.get('this')![i]!);
  const theirs = median(samples.get('other')![i]!);
  console.log(
    `${step.padEnd(16)} this ${mine.toFixed(0).padStart(6)} ms  other ${theirs.toFixed(0).padStart(6)} ms  this/other ${(mine / theirs).toFixed(3)}`,
  );
});
