/**
 * How much of a search class's latency tail under 50 connections its own queries make, apart from the machine:
 * under the bench's load every event-loop turn serves all 50 connections' requests (bench/tail-latency.ts), so a
 * request waits about one turn, the sum of 50 requests' costs. Here each query of the class (the bench's 1,000,
 * through the REST routes' searchJson, cache off) is timed alone in this process, its cost the fastest of
 * --rounds runs (what it costs without the machine's interruptions); then every run of 50 consecutive queries in
 * the bench's cyclic order is summed: that turn's cost. p99 ÷ mean of those sums is the tail the queries make;
 * the bench's quiet-machine p99 ÷ mean latency (~1.9 in every class) against it is what the machine adds.
 *
 *   npx tsx bench/tail-intrinsic.ts [--data-dir /tmp/agentdir-tail/data-100000] [--rounds 5]
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import { createConfig } from '../src-api/config';
import { openStore } from '../src-api/db/open-store';
import { createServices } from '../src-api/services';
import { classSearches, filtersOf, generateAgents, SEARCH_CLASSES } from './lib/dataset';

const options = new Command('tail-intrinsic')
  .option('--data-dir <dir>', 'an imported data dir of --agents (bench/tail-latency.ts makes one)', path.join(os.tmpdir(), 'agentdir-tail', 'data-100000'))
  .option('--agents <n>', 'agents', (v) => Number(v), 100_000)
  .option('--rounds <n>', 'runs of each query (its cost: the fastest)', (v) => Number(v), 5)
  .option('--connections <n>', 'requests per turn', (v) => Number(v), 50)
  .parse()
  .opts<{ dataDir: string; agents: number; rounds: number; connections: number }>();

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function main(): Promise<void> {
  const agents = generateAgents(options.agents);
  const config = createConfig({ dataDir: options.dataDir, demoData: false, searchCache: false });
  const opened = await openStore(config);
  const services = createServices({ store: opened.store, config });
  await services.search.refresh();
  await new Promise<void>((resolve, reject) => services.agents.warmUpProfiles({ onDone: resolve, onError: reject }));
  console.log(`${options.agents.toLocaleString('en')} agents, ${options.rounds} rounds, turns of ${options.connections}, load ${os.loadavg()[0]!.toFixed(2)}`);
  for (const kind of SEARCH_CLASSES) {
    const queries = classSearches(agents, kind, 1000).map((s) => ({ query: s.q, limit: 20, ...(kind === 'filtered POST' ? filtersOf(s) : {}) }));
    const cost = queries.map(() => Infinity);
    for (let round = 0; round < options.rounds; round++) {
      for (let i = 0; i < queries.length; i++) {
        const started = performance.now();
        await services.search.searchJson(queries[i] as never);
        cost[i] = Math.min(cost[i]!, performance.now() - started);
      }
    }
    const n = options.connections;
    const turns = cost.map((_, at) => {
      let sum = 0;
      for (let k = 0; k < n; k++) sum += cost[(at + k) % cost.length]!;
      return sum;
    });
    turns.sort((a, b) => a - b);
    const mean = turns.reduce((a, b) => a + b, 0) / turns.length;
    const single = [...cost].sort((a, b) => a - b);
    const worst = cost.map((c, i) => [c, queries[i]!.query] as const).sort((a, b) => b[0] - a[0]).slice(0, 2);
    console.log(
      `${kind.padEnd(24)} query p50 ${single[500]!.toFixed(3)} p99 ${quantile(single, 0.99).toFixed(2)} max ${single.at(-1)!.toFixed(2)} ms; ` +
        `turn of ${n}: mean ${mean.toFixed(1)} p99 ${quantile(turns, 0.99).toFixed(1)} ms, p99/mean ${(quantile(turns, 0.99) / mean).toFixed(2)}` +
        ` (slowest: ${worst.map(([c, q]) => `${c.toFixed(1)} ms "${q}"`).join(', ')})`,
    );
  }
  await opened.close();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
