/**
 * `npx tsx bench/webhooks.ts`: webhook delivery on loopback, end to end.
 *
 * A real `serve` process (default webhook settings: concurrency 8, poll 1 s)
 * delivers to a real receiver in this process, which checks every signature.
 * Events are produced the way the product produces them: reviews POSTed to
 * the server (the event commits with the review), or, in the last scenario,
 * written by another process on the same data dir (as `cli import
 * --emit-events` would), which the server finds by polling.
 *
 * Latency: from the event's commit (its `timestamp`, taken inside the
 * committing transaction) to the moment the receiver sends its 200.
 * Throughput: events delivered per second, from the first commit to the last 200.
 *
 *   npx tsx bench/webhooks.ts [--events 2000] [--rate 200] [--keep]
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import { createConfig, databasePath } from '../src-api/config';
import { openDatabase } from '../src-api/db/client';
import { createServices, type Services } from '../src-api/services';
import { agentInput } from '../test/helpers/test-server';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../test/helpers/webhook-receiver';

const root = path.resolve(import.meta.dirname, '..');

const options = new Command('bench-webhooks')
  .option('--events <n>', 'events per burst scenario', (v) => Number(v), 2_000)
  .option('--rate <n>', 'events per second in the steady scenario', (v) => Number(v), 200)
  .option('--keep', 'keep the data dir')
  .parse()
  .opts<{ events: number; rate: number; keep?: boolean }>();

interface Result {
  scenario: string;
  events: number;
  /** How fast the events were committed (the producer's pace), for context. */
  producedPerSecond: number;
  seconds: number;
  throughput: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  duplicates: number;
  badSignatures: number;
}

async function main(): Promise<void> {
  // The compiled server, as `npm run serve` runs it: built first if needed.
  execFileSync(process.execPath, ['scripts/ensure-build.mjs', 'api'], { cwd: root, stdio: 'inherit' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-bench-webhooks-'));
  const receiver = await startWebhookReceiver();
  const config = createConfig({ dataDir });
  const prep = createServices({ db: openDatabase(databasePath(config)), config });
  const agent = await prep.agents.edits.create(agentInput({ name: 'Bench Target' }), { emitEvents: false });
  const endpoint = await prep.webhooks.add({ url: receiver.url, description: 'bench receiver' }, { actor: 'bench' });
  receiver.secret = endpoint.secret;
  // A backlog queued while no server runs: the dispatcher's own pace, without a producer competing for the CPU.
  const backlog = options.events;
  for (let i = 0; i < backlog; i++) await writeExternalEvent(prep, agent.id, i);
  prep.db.$client.close();

  const port = await freePort();
  const results: Result[] = [];
  console.error(`· backlog: ${backlog} events queued before the server starts`);
  const server = await startServe(dataDir, port);
  await receiver.waitFor((hits) => new Set(hits.map((h) => h.eventId)).size >= backlog, 120_000, 'the backlog');
  await receiver.waitForQuiet(300);
  results.push(measureBacklog(`backlog: ${backlog} events queued before start`, receiver.received));
  const reviewsUrl = `http://127.0.0.1:${port}/api/v1/agents/${agent.id}/reviews`;
  const postReview = async (i: number): Promise<void> => {
    const response = await fetch(reviewsUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rating: (i % 5) + 1, comment: `bench ${i}` }),
    });
    if (response.status !== 201) throw new Error(`POST review answered ${response.status}`);
    await response.arrayBuffer();
  };

  try {
    // Warm-up: JIT, connections, SQLite caches.
    await runScenario(receiver, 'warm-up', 200, () => burst(200, 16, postReview));

    results.push(
      await runScenario(receiver, `burst: ${options.events} reviews POSTed, 16 at a time`, options.events, () =>
        burst(options.events, 16, postReview),
      ),
    );
    const steadyCount = options.rate * 10;
    results.push(
      await runScenario(receiver, `steady: ${options.rate} reviews/s for 10 s`, steadyCount, () =>
        paced(steadyCount, options.rate, postReview),
      ),
    );
    receiver.respond = () => ({ status: 200, delayMs: 20 });
    const slowCount = Math.min(1_000, options.events);
    results.push(
      await runScenario(receiver, `burst, receiver answers in 20 ms: ${slowCount} reviews`, slowCount, () =>
        burst(slowCount, 16, postReview),
      ),
    );
    receiver.respond = () => ({ status: 200 });

    // Another process writes the events: the server only learns of them by polling (pollIntervalMs 1 s).
    const writer = createServices({ db: openDatabase(databasePath(config)), config });
    try {
      const externalCount = 500;
      results.push(
        await runScenario(receiver, `other process: ${externalCount} events, 50/s (found by polling)`, externalCount, () =>
          paced(externalCount, 50, async (i) => {
            await writeExternalEvent(writer, agent.id, i);
          }),
        ),
      );
    } finally {
      writer.db.$client.close();
    }
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    await receiver.close();
    if (!options.keep) fs.rmSync(dataDir, { recursive: true, force: true });
    else console.error(`data dir kept: ${dataDir}`);
  }
  printTable(results);
}

async function writeExternalEvent(services: Services, agentId: string, i: number): Promise<void> {
  await services.agents.edits.update(agentId, { tagline: `Updated by another process, change ${i}` }, { emitEvents: true });
}

/** Runs `produce`, waits until `count` new distinct events reached the receiver, and measures. */
async function runScenario(receiver: WebhookReceiver, scenario: string, count: number, produce: () => Promise<void>): Promise<Result> {
  await receiver.waitForQuiet(300);
  receiver.received.length = 0;
  console.error(`· ${scenario}`);
  const started = performance.now();
  await produce();
  const producedPerSecond = count / ((performance.now() - started) / 1000);
  await receiver.waitFor((hits) => new Set(hits.map((h) => h.eventId)).size >= count, 120_000, scenario);
  await receiver.waitForQuiet(300);
  return measure(scenario, receiver.received, producedPerSecond);
}

function measure(scenario: string, hits: ReceivedWebhook[], producedPerSecond: number): Result {
  const firstByEvent = new Map<string, ReceivedWebhook>();
  for (const hit of hits) if (hit.eventId && !firstByEvent.has(hit.eventId)) firstByEvent.set(hit.eventId, hit);
  const answeredEpoch = (hit: ReceivedWebhook) => performance.timeOrigin + (hit.answeredAt ?? hit.receivedAt);
  const latencies: number[] = [];
  let firstCommit = Number.POSITIVE_INFINITY;
  let lastAnswer = 0;
  for (const hit of firstByEvent.values()) {
    const committed = Date.parse(hit.body!.timestamp);
    firstCommit = Math.min(firstCommit, committed);
    lastAnswer = Math.max(lastAnswer, answeredEpoch(hit));
    latencies.push(answeredEpoch(hit) - committed);
  }
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? Number.NaN;
  const seconds = (lastAnswer - firstCommit) / 1000;
  return {
    scenario,
    events: firstByEvent.size,
    producedPerSecond,
    seconds,
    throughput: firstByEvent.size / seconds,
    p50: pct(50),
    p95: pct(95),
    p99: pct(99),
    max: latencies.at(-1) ?? Number.NaN,
    duplicates: hits.length - firstByEvent.size,
    badSignatures: hits.filter((h) => !h.signatureValid).length,
  };
}

/** Throughput only: the events were committed long before, so commit → 200 says nothing. */
function measureBacklog(scenario: string, hits: ReceivedWebhook[]): Result {
  const ids = new Set(hits.map((h) => h.eventId));
  const first = Math.min(...hits.map((h) => h.receivedAt));
  const last = Math.max(...hits.map((h) => h.answeredAt ?? h.receivedAt));
  const seconds = (last - first) / 1000;
  return {
    scenario,
    events: ids.size,
    producedPerSecond: Number.NaN,
    seconds,
    throughput: ids.size / seconds,
    p50: Number.NaN,
    p95: Number.NaN,
    p99: Number.NaN,
    max: Number.NaN,
    duplicates: hits.length - ids.size,
    badSignatures: hits.filter((h) => !h.signatureValid).length,
  };
}

/** `count` calls, `parallel` at a time, as fast as they complete. */
async function burst(count: number, parallel: number, call: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) await call(next++);
    }),
  );
}

/** `count` calls started at `perSecond`, on schedule (not waiting for each other). */
async function paced(count: number, perSecond: number, call: (i: number) => Promise<void>): Promise<void> {
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = started + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(call(i));
  }
  await Promise.all(pending);
}

function printTable(results: Result[]): void {
  const header = [
    'scenario',
    'events',
    'committed/s',
    'seconds',
    'delivered/s',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'max ms',
    'dupes',
    'bad sig',
  ];
  const fixed = (n: number, digits: number) => (Number.isNaN(n) ? '–' : n.toFixed(digits));
  const rows = results.map((r) => [
    r.scenario,
    String(r.events),
    fixed(r.producedPerSecond, 0),
    fixed(r.seconds, 2),
    fixed(r.throughput, 0),
    fixed(r.p50, 1),
    fixed(r.p95, 1),
    fixed(r.p99, 1),
    fixed(r.max, 1),
    String(r.duplicates),
    String(r.badSignatures),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  console.log('\nWebhook delivery, loopback, `serve` with default webhook settings (concurrency 8, poll 1 s)');
  console.log(`Node ${process.version}, ${os.cpus().length} CPU(s): ${os.cpus()[0]?.model ?? 'unknown'}\n`);
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const row of rows) console.log(line(row));
  console.log('\ncommitted/s: the pace at which the producer got its events committed (POST 201s, or the other process).');
  console.log('delivered/s: distinct events delivered, first commit → last 200. Latency: event commit (its timestamp,');
  console.log('1 ms resolution) → the receiver sends 200. In a burst, latency is mostly time queued behind earlier events.');
}

async function startServe(dataDir: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['out/api/serve.js', '--port', String(port), '--data-dir', dataDir, '--no-demo-data', '--allow-private-urls', '--rate-limit', 'off'],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Agent Directory API:')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${output}`)));
  });
  return child;
}

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
