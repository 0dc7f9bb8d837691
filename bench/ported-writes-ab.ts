/**
 * The writers ported to the data-access seam (issue 16, step 2 and after) on
 * SQLite, A/B in one process: each as it was before the port (sync drizzle on
 * the Db, copied here from main before the port), next to the ported form
 * (async, through the Store). Variants alternate round by round on the same
 * file; µs per call, median of the rounds, and the ratio after/before.
 *
 *   npx tsx bench/ported-writes-ab.ts [--rounds 20] [--ops 300] [--endpoints 5]
 *
 * Not a test: the figures depend on the machine and its load (printed first and last).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { eq, sql } from 'drizzle-orm';
import { inTransaction, openDatabase } from '../src-api/db/client';
import { sqliteStore } from '../src-api/db/store-sqlite';
import { accounts } from '../src-api/modules/accounts/accounts.table';
import { agents } from '../src-api/modules/agents/agents.table';
import { createAuditService } from '../src-api/modules/audit/audit.service';
import { createEventsService } from '../src-api/modules/events/events.service';
import type { EventRow, EventType } from '../src-api/modules/events/events.table';
import { createKeysService } from '../src-api/modules/keys/keys.service';
import { apiKeys } from '../src-api/modules/keys/keys.table';
import { createFanOut } from '../src-api/modules/webhooks/webhooks.fan-out';
import { webhookDeliveries, webhookEndpoints } from '../src-api/modules/webhooks/webhooks.table';
import { agentRow } from '../test/helpers/both-stores';
import { loadAverage } from './lib/cli';

const option = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const rounds = option('rounds', 20);
const ops = option('ops', 300);
const endpointCount = option('endpoints', 5);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-writes-bench-'));
const db = openDatabase(path.join(dir, 'bench.sqlite'));
const store = sqliteStore(db);
const clock = { now: () => new Date() };
let n = 0;
const ids = { next: (prefix: string) => `${prefix}_${(++n).toString(36)}`, agent: () => `agt_${(++n).toString(36)}` };
const audit = createAuditService({ store, clock, ids });
const keys = createKeysService({ store, clock, ids, audit });
const events = createEventsService({ store, clock, ids });
const fanOut = createFanOut({ store, clock, ids, announce: () => {} });
events.addListener(async (event) => void (await fanOut.inTransaction(event)));

const now = new Date().toISOString();
db.insert(agents)
  .values(agentRow({ id: 'agt_bench', sourceUrlKey: 'example.org/bench', ownerAccountId: 'acc_bench' }))
  .run();
for (let i = 0; i < endpointCount; i++) {
  db.insert(webhookEndpoints)
    .values({
      id: `whk_${i}`,
      url: `https://example.org/${i}`,
      secret: 's',
      events: i % 2 ? ['agent.updated'] : [],
      scope: i === 0 ? 'owned' : 'all',
      ownerAccountId: i === 0 ? 'acc_bench' : null,
      createdAt: now,
      updatedAt: now,
    })
    .run();
}
db.insert(accounts)
  .values({ id: 'acc_bench', email: 'b@example.org', emailKey: 'b@example.org', name: 'B', createdAt: now, updatedAt: now })
  .run();
const KEYS = 100;
const issued: string[] = [];

// Before the port (main 34b758c^): keys.authenticate, sync on the Db.
const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');
const lastUsedBefore = new Map<string, number>();
function authenticateBefore(key: string): string {
  const row = db
    .select({ id: apiKeys.id, revokedAt: apiKeys.revokedAt, accountDisabledAt: accounts.disabledAt })
    .from(apiKeys)
    .leftJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(eq(apiKeys.keyHash, hashKey(key)))
    .get();
  if (!row || row.revokedAt || row.accountDisabledAt) throw new Error('invalid');
  const at = clock.now().getTime();
  if (at - (lastUsedBefore.get(row.id) ?? 0) > 60_000) {
    lastUsedBefore.set(row.id, at);
    db.update(apiKeys)
      .set({ lastUsedAt: new Date(at).toISOString() })
      .where(eq(apiKeys.id, row.id))
      .run();
  }
  return row.id;
}

// Before the port: events.record with the webhook fan-out as its listener, prepared statements on the Db.
const insertEvent = db.$client.prepare('INSERT INTO events (id, type, data, created_at) VALUES (?, ?, ?, ?)');
const p = sql.placeholder;
const activeEndpoints = db
  .select({
    id: webhookEndpoints.id,
    events: webhookEndpoints.events,
    scope: webhookEndpoints.scope,
    ownerAccountId: webhookEndpoints.ownerAccountId,
  })
  .from(webhookEndpoints)
  .where(eq(webhookEndpoints.active, true))
  .prepare();
const agentOwner = db
  .select({ ownerAccountId: agents.ownerAccountId })
  .from(agents)
  .where(eq(agents.id, p('agentId')))
  .prepare();
const insertPending = db
  .insert(webhookDeliveries)
  .values({
    id: p('id'),
    eventId: p('eventId'),
    endpointId: p('endpointId'),
    status: 'pending',
    nextAttemptAt: p('now'),
    createdAt: p('now'),
    updatedAt: p('now'),
  })
  .prepare();
function recordBefore(type: EventType, data: Record<string, unknown>): EventRow {
  const event: EventRow = { id: ids.next('evt'), type, data, createdAt: new Date().toISOString() };
  insertEvent.run(event.id, event.type, JSON.stringify(event.data), event.createdAt);
  const endpoints = activeEndpoints.all();
  const at = new Date().toISOString();
  let owner: string | null | undefined;
  const ownerOf = () => (owner ??= agentOwner.get({ agentId: 'agt_bench' })?.ownerAccountId ?? null);
  for (const endpoint of endpoints) {
    if (endpoint.events.length > 0 && !endpoint.events.includes(event.type)) continue;
    if (endpoint.scope === 'owned' && (endpoint.ownerAccountId === null || ownerOf() !== endpoint.ownerAccountId)) continue;
    insertPending.run({ id: ids.next('dlv'), eventId: event.id, endpointId: endpoint.id, now: at });
  }
  return event;
}
const data = { agent_id: 'agt_bench', name: 'Bench', changed_fields: ['tagline'] };

type Variant = { name: string; run: (i: number) => unknown };
const keysOnly = process.argv.includes('--keys-only');
const variants: Variant[] = [
  { name: 'keys.authenticate before (sync Db)', run: (i) => authenticateBefore(issued[i % KEYS]!) },
  { name: 'keys.authenticate after (Store)', run: (i) => keys.authenticate(issued[i % KEYS]!) },
  ...(keysOnly ? [] : eventVariants()),
];
function eventVariants(): Variant[] {
  return [
    { name: 'event + fan-out, before (sync tx)', run: () => inTransaction(db, () => recordBefore('agent.updated', data)) },
    { name: 'event + fan-out, recordInTransaction', run: () => store.transaction(() => events.recordInTransaction('agent.updated', data)) },
  ];
}

async function measure(variant: Variant, count: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const result = variant.run(i);
    if (result instanceof Promise) await result;
  }
  return ((performance.now() - start) * 1000) / count;
}

async function main() {
  for (let i = 0; i < KEYS; i++) issued.push((await keys.create(`bench ${i}`, 'bench', i % 2 ? 'acc_bench' : null)).key);
  // Same answers first: the A/B compares equal work.
  if (authenticateBefore(issued[7]!) !== (await keys.authenticate(issued[7]!))) throw new Error('authenticate: before and after differ');
  const deliveriesOf = (eventId: string) =>
    db
      .select({ e: webhookDeliveries.endpointId })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.eventId, eventId))
      .all()
      .map((r) => r.e)
      .sort();
  const a = deliveriesOf(inTransaction(db, () => recordBefore('agent.updated', data)).id);
  const b = deliveriesOf((await store.transaction(() => events.recordInTransaction('agent.updated', data))).id);
  if (JSON.stringify(a) !== JSON.stringify(b) || a.length === 0) throw new Error(`fan-out differs: ${a} / ${b}`);
  console.log(`node ${process.version}, ${os.cpus().length} CPUs, load average ${loadAverage()}`);
  console.log(
    `${KEYS} keys, ${endpointCount} endpoints (${a.length} get each event), ${rounds} rounds of ${ops} calls per variant, alternating`,
  );
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
