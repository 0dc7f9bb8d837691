/**
 * What a query costs through the data-access seam (src-api/db/store.ts) on
 * SQLite, next to the same drizzle query run directly: one process, the
 * variants alternating round by round on the same file, µs per query
 * (median of the rounds). Issue 16 asks that the SQLite path keep its speed.
 *
 *   npx tsx bench/store-overhead.ts [--agents 1000] [--rounds 30] [--ops 500]
 *
 * Not a test: the figures depend on the machine and its load (printed first).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { count, eq } from 'drizzle-orm';
import { openDatabase } from '../src-api/db/client';
import { sqliteStore } from '../src-api/db/store-sqlite';
import { agents } from '../src-api/modules/agents/agents.table';
import { agentRow } from '../test/helpers/both-stores';

const option = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const agentCount = option('agents', 1000);
const rounds = option('rounds', 30);
const ops = option('ops', 500);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-store-bench-'));
const db = openDatabase(path.join(dir, 'bench.sqlite'));
const store = sqliteStore(db);
const ids = Array.from({ length: agentCount }, (_, i) => `agt_${String(i).padStart(6, '0')}`);
db.$client.transaction(() => {
  for (const [i, id] of ids.entries())
    db.insert(agents)
      .values(agentRow({ id, sourceUrlKey: `example.org/${id}`, changeSeq: i + 1 }))
      .run();
})();

type Variant = { name: string; run: (id: string) => unknown };
const als = new AsyncLocalStorage<object>();
const noop = { get: () => undefined };
const variants: Variant[] = [
  { name: 'direct .get() (sync, before the seam)', run: (id) => db.select().from(agents).where(eq(agents.id, id)).get() },
  { name: 'direct .get(), awaited', run: async (id) => await Promise.resolve(db.select().from(agents).where(eq(agents.id, id)).get()) },
  { name: 'store.first()', run: (id) => store.first(store.db.select().from(store.t.agents).where(eq(store.t.agents.id, id))) },
  {
    name: 'store.rows() count(*) (stats-like)',
    run: () => store.rows(store.db.select({ n: count() }).from(store.t.agents).where(eq(store.t.agents.listed, true))),
  },
  { name: 'direct .all() count(*) (stats-like)', run: () => db.select({ n: count() }).from(agents).where(eq(agents.listed, true)).all() },
  // The seam's own cost, without SQLite: a query object whose get() does nothing.
  { name: 'no-op get(), called directly', run: () => noop.get() },
  { name: 'no-op get() through store.first()', run: () => store.first(noop) },
  { name: 'AsyncLocalStorage.getStore() alone', run: () => als.getStore() },
];

/** Runs `ops` queries one after another (awaiting each when it returns a promise); µs per query. */
async function measure(variant: Variant, n: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const result = variant.run(ids[i % ids.length]!);
    if (result instanceof Promise) await result;
  }
  return ((performance.now() - start) * 1000) / n;
}

/** Inside one store transaction: the statements find it through AsyncLocalStorage. */
const inTransaction: Variant = {
  name: 'store.first() inside store.transaction()',
  run: () => undefined,
};

async function main() {
  console.log(
    `node ${process.version}, ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')}`,
  );
  console.log(`${agentCount} agents, ${rounds} rounds of ${ops} queries per variant, alternating`);
  const samples = new Map<string, number[]>([...variants, inTransaction].map((v) => [v.name, []]));
  for (const variant of variants) await measure(variant, ops / 10); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const variant of variants) samples.get(variant.name)!.push(await measure(variant, ops));
    const start = performance.now();
    await store.transaction(async () => {
      for (let i = 0; i < ops; i++)
        await store.first(
          store.db
            .select()
            .from(store.t.agents)
            .where(eq(store.t.agents.id, ids[i % ids.length]!)),
        );
    });
    samples.get(inTransaction.name)!.push(((performance.now() - start) * 1000) / ops);
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const base = median(samples.get(variants[0]!.name)!);
  for (const [name, values] of samples) {
    const us = median(values);
    console.log(`${name.padEnd(44)} ${us.toFixed(2).padStart(7)} µs/op  (${(us / base).toFixed(2)}× direct)`);
  }
  console.log(
    `load average at the end ${os
      .loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')}`,
  );
  db.$client.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

void main();
