/**
 * Agent writes on PostgreSQL 15, A/B in one process: another checkout's agent parts (events, audit,
 * the write path and the edits, wired as test/helpers/agent-parts.ts wires them) next to this
 * checkout's, each on its own pool over one database of a server this run starts (fsync on,
 * synchronous_commit off, as the bench's), alternating round by round. Moderator edits (event and
 * audit entry each) one at a time and `--concurrency` at once (a batch: all awaited); µs per call
 * or batch, median of the rounds, and the ratio this/base (writes a second: calls × 10⁶ / µs).
 *
 *   npx tsx bench/pg-writes-ab.ts --base <other checkout> [--agents 2000] [--rounds 15] [--ops 100] [--concurrency 8]
 *
 * Not a test: the figures depend on the machine and its load (printed first and last).
 */
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { Store } from '../src-api/db/store';
import { openPgStore } from '../src-api/db/store-pg';
import { agentParts } from '../test/helpers/agent-parts';
import { abOptions, alternate } from './lib/alternate';
import { loadAverage } from './lib/cli';
import { startBenchStore } from './lib/bench-store';

const { base, agentCount, rounds, ops } = abOptions({ ops: 100 });
const concurrency = Number(process.argv.find((arg, i, all) => all[i - 1] === '--concurrency') ?? '8');

type Edits = ReturnType<typeof agentParts>['edits'];

async function main() {
  console.log(`load ${loadAverage()}; base ${base}; ${agentCount} agents, ${rounds} rounds of ${ops}, ${concurrency} at once`);
  const bench = await startBenchStore('postgres');
  try {
    const url = bench.databaseUrl!;
    const store = await openPgStore(url, { max: concurrency + 2 });
    const fromBase = (module: string) => import(path.join(base, module));
    const [{ openPgStore: openBaseStore }, { agentParts: baseAgentParts }] = await Promise.all([
      fromBase('src-api/db/store-pg.ts'),
      fromBase('test/helpers/agent-parts.ts'),
    ]);
    const baseStore = (await openBaseStore(url, { max: concurrency + 2 })) as Store;
    const current = agentParts(store);
    const baseParts = (baseAgentParts as typeof agentParts)(baseStore);

    const ids = Array.from({ length: agentCount }, (_, i) => `agt_bench_${i}`);
    for (let i = 0; i < agentCount; i += 500)
      await current.writes.write(
        ids.slice(i, i + 500).map((id) => ({
          kind: 'create' as const,
          row: current.writes.newRow({ id, name: `Agent ${id}`, tagline: 'Bench', sourceUrl: `https://example.org/${id}` }),
        })),
      );

    // Each side edits its own agents (base: even ids, this: odd ones); a batch's edits are of different agents.
    let n = 0;
    const pick = (side: number) => ids[((n++ * 7919) % (agentCount / 2)) * 2 + side]!;
    const edit = (edits: Edits, side: number, i: number) => edits.update(pick(side), { tagline: `Tagline ${i}` }, { actor: 'bench' });
    const calls = (edits: Edits, side: number) => ({
      'edits.update, one at a time': (i: number) => edit(edits, side, i),
      [`edits.update, ${concurrency} at once`]: (i: number) => Promise.all(Array.from({ length: concurrency }, () => edit(edits, side, i))),
    });
    await alternate(calls(baseParts.edits, 0), calls(current.edits, 1), { rounds, ops, width: 32 });

    // Both sides' writes counted on past each other: change_seqs unique.
    const [row] = await store.all<{ rows: string; seqs: string }>(
      sql`SELECT count(*) AS rows, count(DISTINCT change_seq) AS seqs FROM agents`,
    );
    console.log(`agents ${row!.rows}, distinct change_seqs ${row!.seqs}; load ${loadAverage()}`);
    await Promise.all([store.close(), baseStore.close()]);
  } finally {
    bench.stop();
  }
}

void main();
