/**
 * The reads ported to the data-access seam (issue 16, step 1) on SQLite, A/B
 * in one process: each read as it was before the port (sync drizzle on the Db,
 * copied here), next to the ported service method (async, through the Store).
 * Variants alternate round by round on the same file; µs per call, median of
 * the rounds, and the ratio after/before. Issue 16 asks that SQLite keep its speed.
 *
 *   npx tsx bench/ported-reads-ab.ts [--agents 1000] [--reviews 20] [--rounds 30] [--ops 300]
 *
 * Not a test: the figures depend on the machine and its load (printed first and last).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { and, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import { inTransaction, openDatabase } from '../src-api/db/client';
import { sqliteStore } from '../src-api/db/store-sqlite';
import type { AgentsService } from '../src-api/modules/agents/agents.service';
import { agents } from '../src-api/modules/agents/agents.table';
import { createKeyUsage } from '../src-api/modules/keys/key-usage';
import { createAuditService } from '../src-api/modules/audit/audit.service';
import { auditLog } from '../src-api/modules/audit/audit.table';
import { reviewReplies } from '../src-api/modules/owners/owners.table';
import { createReviewsService, toReview } from '../src-api/modules/reviews/reviews.service';
import { reviews } from '../src-api/modules/reviews/reviews.table';
import { agentRow } from '../test/helpers/both-stores';
import { loadAverage } from './lib/cli';

const option = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const agentCount = option('agents', 1000);
const perAgent = option('reviews', 20);
const rounds = option('rounds', 30);
const ops = option('ops', 300);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-reads-bench-'));
const db = openDatabase(path.join(dir, 'bench.sqlite'));
const store = sqliteStore(db);
const ids = Array.from({ length: agentCount }, (_, i) => `agt_${String(i).padStart(6, '0')}`);
const at = (i: number) => new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString();
db.$client.transaction(() => {
  let n = 0;
  for (const [i, id] of ids.entries()) {
    db.insert(agents)
      .values(agentRow({ id, sourceUrlKey: `example.org/${id}`, changeSeq: i + 1 }))
      .run();
    for (let r = 0; r < perAgent; r++, n++) {
      const reviewId = `rev_${n}`;
      db.insert(reviews)
        .values({ id: reviewId, agentId: id, rating: (n % 5) + 1, comment: `review ${n}`, hidden: n % 10 === 0, createdAt: at(n) })
        .run();
      if (r % 4 === 0)
        db.insert(reviewReplies)
          .values({ id: `rpl_${n}`, reviewId, agentId: id, accountId: 'acc', body: 'thanks', createdAt: at(n), updatedAt: at(n) })
          .run();
      db.insert(auditLog)
        .values({ id: `aud_${n}`, actor: `mod${n % 7}`, action: 'review.hide', entityType: 'review', entityId: reviewId, createdAt: at(n) })
        .run();
    }
  }
})();

const clock = { now: () => new Date() };
const ids2 = { next: () => 'x', agent: () => 'x' };
const agentsStub = { get: () => ({}), getRow: () => ({}) } as unknown as AgentsService;
const reviewsService = createReviewsService({
  store,
  clock,
  ids: ids2,
  agents: agentsStub,
  events: undefined as never,
  audit: undefined as never,
  quota: { enabled: false, windowMs: 0 },
});
const auditService = createAuditService({ store, clock, ids: ids2 });

// Before the port (1e46672^): the same queries, sync on the Db.
const NEWEST_FIRST = [desc(reviews.createdAt), desc(sql`${reviews}.rowid`)];
const countWhere = (where: SQL | undefined): number => db.select({ n: count() }).from(reviews).where(where).get()?.n ?? 0;
function listVisibleBefore(agentId: string, query: { page: number; limit: number }) {
  agentsStub.get(agentId);
  const where = and(eq(reviews.agentId, agentId), eq(reviews.hidden, false));
  const rows = db
    .select({ review: reviews, reply: reviewReplies })
    .from(reviews)
    .leftJoin(reviewReplies, eq(reviewReplies.reviewId, reviews.id))
    .where(where)
    .orderBy(...NEWEST_FIRST)
    .limit(query.limit)
    .offset((query.page - 1) * query.limit)
    .all();
  return {
    items: rows.map(({ review, reply }) => toReview(review, reply)),
    page: query.page,
    limit: query.limit,
    total: countWhere(where),
  };
}
function auditListBefore(entityId: string) {
  const where = eq(auditLog.entityId, entityId);
  const items = db
    .select()
    .from(auditLog)
    .where(where)
    .orderBy(desc(auditLog.createdAt), desc(sql`${auditLog}.rowid`))
    .limit(20)
    .all();
  return { items, total: db.select({ n: count() }).from(auditLog).where(where).get()?.n ?? 0 };
}

// Key usage, before the port (1e46672's key-usage.ts, record and flush): counts in a Map,
// flushed by a prepared upsert per (key, day) in one sync transaction.
function createKeyUsageBefore(now: () => Date) {
  let pending = new Map<string, { keyId: string; day: string; requests: number; rateLimited: number }>();
  const upsert = db.$client.prepare(
    `INSERT INTO key_usage_daily (key_id, day, requests, rate_limited) VALUES (?, ?, ?, ?)
     ON CONFLICT (key_id, day) DO UPDATE SET requests = requests + excluded.requests, rate_limited = rate_limited + excluded.rate_limited`,
  );
  return {
    record(keyId: string, rateLimited: boolean) {
      const day = now().toISOString().slice(0, 10);
      const mapKey = `${keyId}\u0000${day}`;
      const entry = pending.get(mapKey) ?? { keyId, day, requests: 0, rateLimited: 0 };
      entry.requests++;
      if (rateLimited) entry.rateLimited++;
      pending.set(mapKey, entry);
    },
    flush() {
      const batch = pending;
      pending = new Map();
      inTransaction(db, () => {
        for (const entry of batch.values()) upsert.run(entry.keyId, entry.day, entry.requests, entry.rateLimited);
      });
    },
  };
}
const KEYS_PER_FLUSH = 50;
const usageNow = () => new Date('2025-03-01T12:00:00Z');
const keyUsageBefore = createKeyUsageBefore(usageNow);
const keyUsage = createKeyUsage({ store, clock: { now: usageNow } });
/** Three requests for each of 50 keys, then a flush (the write that runs every few seconds). */
function recordAndFlush(usage: { record(keyId: string, rateLimited: boolean): void; flush(): unknown }, i: number) {
  for (let k = 0; k < KEYS_PER_FLUSH; k++) {
    usage.record(`key_${(i + k) % 500}`, k % 2 === 1);
    usage.record(`key_${(i + k) % 500}`, false);
    usage.record(`key_${(i + k) % 500}`, false);
  }
  return usage.flush();
}

type Variant = { name: string; run: (i: number) => unknown };
const variants: Variant[] = [
  { name: 'reviews.listVisible before (sync Db)', run: (i) => listVisibleBefore(ids[i % ids.length]!, { page: 1, limit: 20 }) },
  { name: 'reviews.listVisible after (Store)', run: (i) => reviewsService.listVisible(ids[i % ids.length]!, { page: 1, limit: 20 }) },
  { name: 'audit.list by entity before (sync Db)', run: (i) => auditListBefore(`rev_${(i * 7919) % (agentCount * perAgent)}`) },
  {
    name: 'audit.list by entity after (Store)',
    run: (i) => auditService.list({ page: 1, limit: 20, entityId: `rev_${(i * 7919) % (agentCount * perAgent)}` }),
  },
  { name: `key usage, ${KEYS_PER_FLUSH} keys × 3 + flush, before`, run: (i) => recordAndFlush(keyUsageBefore, i) },
  { name: `key usage, ${KEYS_PER_FLUSH} keys × 3 + flush, after`, run: (i) => recordAndFlush(keyUsage, i) },
];

async function measure(variant: Variant, n: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const result = variant.run(i);
    if (result instanceof Promise) await result;
  }
  return ((performance.now() - start) * 1000) / n;
}

async function main() {
  // Same answers first: the A/B compares equal work.
  const [a, b] = [listVisibleBefore(ids[3]!, { page: 1, limit: 20 }), await reviewsService.listVisible(ids[3]!, { page: 1, limit: 20 })];
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error('listVisible: before and after differ');
  console.log(`node ${process.version}, ${os.cpus().length} CPUs, load average ${loadAverage()}`);
  console.log(`${agentCount} agents × ${perAgent} reviews, ${rounds} rounds of ${ops} calls per variant, alternating`);
  const samples = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  for (const variant of variants) await measure(variant, ops / 10); // warm-up
  for (let round = 0; round < rounds; round++) for (const variant of variants) samples.get(variant.name)!.push(await measure(variant, ops));
  const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
  for (let i = 0; i < variants.length; i += 2) {
    const before = median(samples.get(variants[i]!.name)!);
    const after = median(samples.get(variants[i + 1]!.name)!);
    console.log(`${variants[i]!.name.padEnd(40)} ${before.toFixed(1).padStart(8)} µs`);
    console.log(`${variants[i + 1]!.name.padEnd(40)} ${after.toFixed(1).padStart(8)} µs  (${(after / before).toFixed(3)}× before)`);
  }
  console.log(`load average at the end ${loadAverage()}`);
  db.$client.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

void main();
