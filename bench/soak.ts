/**
 * `npx tsx bench/soak.ts [--minutes 10] [--clients 200] [--rps 100]`: a soak of the real server.
 *
 * A `serve` process (compiled, as `npm run serve` runs it; demo directory, rate limits ON,
 * `--trust-proxy` so each simulated client has its own address) takes mixed reads and writes from
 * `--clients` simulated clients, half IPv4 (10.77.x.y) and half IPv6 (each in its own /64), sent
 * from this loopback "proxy" with `X-Forwarded-For`. Meanwhile:
 * - a fast webhook receiver (review.created) verifies every delivery with the official
 *   `standardwebhooks` package;
 * - a slow receiver (every kind) answers each delivery after 9.9 s;
 * - the server's DNS resolver (AGENTDIR_DNS_SERVERS) points at a DNS server that never answers.
 *
 * It reports latency (p50/p99/max, per operation), status counts, the server's RSS at start and
 * end (and its peak), and proves nothing was lost: every review the API committed (a 201) must
 * arrive at the fast receiver as a verified `review.created`. Exit code 1 if any was lost, any
 * delivery failed verification, or any answer was a 5xx.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import { Webhook } from 'standardwebhooks';
import { createConfig, databasePath } from '../src-api/config';
import { openDatabase } from '../src-api/db/client';
import { createServices } from '../src-api/services';
import { startDnsServer } from '../test/helpers/dns-server';
import { startWebhookReceiver } from '../test/helpers/webhook-receiver';

const root = path.resolve(import.meta.dirname, '..');

const options = new Command('soak')
  .option('--minutes <n>', 'how long the load runs', (v) => Number(v), 10)
  .option('--clients <n>', 'simulated clients (half IPv4, half IPv6)', (v) => Number(v), 200)
  .option('--rps <n>', 'requests per second, all clients together', (v) => Number(v), 100)
  .option('--slow-ms <n>', 'how long the slow receiver takes to answer', (v) => Number(v), 9_900)
  .option('--drain-seconds <n>', 'how long to wait for the last deliveries after the load', (v) => Number(v), 120)
  .option('--keep', 'keep the data dir')
  .parse()
  .opts<{ minutes: number; clients: number; rps: number; slowMs: number; drainSeconds: number; keep?: boolean }>();

type Op =
  | 'search'
  | 'list'
  | 'profile'
  | 'bulk'
  | 'reviews-list'
  | 'stats'
  | 'marketing'
  | 'review'
  | 'submit'
  | 'claim'
  | 'claim-verify'
  | 'newsletter';

/** Weights per operation: about three reads to one write. */
const MIX: [Op, number][] = [
  ['search', 22],
  ['list', 10],
  ['profile', 16],
  ['bulk', 5],
  ['reviews-list', 8],
  ['stats', 5],
  ['marketing', 4],
  ['review', 18],
  ['submit', 4],
  ['claim', 3],
  ['claim-verify', 1],
  ['newsletter', 4],
];
const WORDS = ['code', 'review', 'summarize', 'deploy', 'data', 'search', 'test', 'agent', 'translate', 'security', 'sql', 'chat'];

interface Sample {
  op: Op;
  status: number;
  ms: number;
}

async function main(): Promise<void> {
  execFileSync(process.execPath, ['scripts/ensure-build.mjs', 'api'], { cwd: root, stdio: 'inherit' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-soak-'));

  // Receivers and the endpoints, written before the server starts (it seeds the demo directory
  // itself, which sends no events).
  const verified = new Map<string, number>(); // review_id → deliveries
  let badSignatures = 0;
  let fastDeliveries = 0;
  let fastSecret = '';
  const fast = await startWebhookReceiver({
    respond: (hit) => {
      fastDeliveries++;
      try {
        const event = new Webhook(fastSecret).verify(hit.rawBody.toString('utf8'), hit.headers as Record<string, string>) as {
          data: { review_id?: string };
        };
        const id = event.data.review_id;
        if (id) verified.set(id, (verified.get(id) ?? 0) + 1);
      } catch {
        badSignatures++;
      }
      hit.rawBody = Buffer.alloc(0); // keep memory flat over a long run
      return { status: 204 };
    },
  });
  const slow = await startWebhookReceiver({ respond: () => ({ status: 200, delayMs: options.slowMs }) });
  const dns = await startDnsServer();
  dns.mode = 'silent'; // queries are received and never answered

  const config = createConfig({ dataDir });
  const prep = createServices({ db: openDatabase(databasePath(config)), config });
  const fastEndpoint = await prep.webhooks.add(
    { url: fast.url, events: ['review.created'], description: 'soak: fast, verifying' },
    { actor: 'soak' },
  );
  fastSecret = fastEndpoint.secret;
  await prep.webhooks.add({ url: slow.url, events: [], description: `soak: answers in ${options.slowMs} ms` }, { actor: 'soak' });
  // A destination whose name never resolves: retried, never counted toward disabling the endpoint.
  const unresolvable = await prep.webhooks.add(
    { url: 'http://soak-unresolvable.invalid/hooks', events: ['review.created'], description: 'soak: DNS fails' },
    { actor: 'soak' },
  );
  prep.db.$client.close();

  const port = await freePort();
  const server = await startServe(dataDir, port, dns.address);
  const base = `http://127.0.0.1:${port}/api/v1`;
  const pid = server.pid!;

  const call = async (ip: string, method: 'GET' | 'POST', url: string, body?: unknown) => {
    const started = performance.now();
    const response = await fetch(`${base}${url}`, {
      method,
      headers: { 'x-forwarded-for': ip, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, ms: performance.now() - started, text };
  };

  // Agent ids of the demo directory, for profile, review and claim targets.
  const ids: string[] = [];
  for (let page = 1; ids.length < 500; page++) {
    const { text } = await call('10.0.0.1', 'GET', `/agents?limit=100&page=${page}&sort=name`);
    const agents = (JSON.parse(text) as { agents: { id: string }[] }).agents;
    if (agents.length === 0) break;
    ids.push(...agents.map((a) => a.id));
  }
  if (ids.length === 0) throw new Error('no agents in the demo directory');

  const rssStart = rssOf(pid);
  // The machine's 1-minute load when the load starts and ends: p99 on 2 shared cores depends on it.
  const [loadStart = 0] = os.loadavg();
  let rssPeak = rssStart;
  const rssTimer = setInterval(() => (rssPeak = Math.max(rssPeak, rssOf(pid))), 5_000);
  console.error(
    `· soak: ${options.clients} clients, ~${options.rps} req/s, ${options.minutes} min; ${ids.length} agents; server RSS ${mb(rssStart)} MB`,
  );

  const samples: Sample[] = [];
  const committed = new Set<string>();
  const total = MIX.reduce((sum, [, weight]) => sum + weight, 0);
  const pick = (): Op => {
    let roll = Math.random() * total;
    for (const [op, weight] of MIX) {
      roll -= weight;
      if (roll < 0) return op;
    }
    return 'search';
  };

  const deadline = Date.now() + options.minutes * 60_000;
  const interval = (options.clients / options.rps) * 1000;
  let progress = Date.now();

  const client = async (index: number): Promise<void> => {
    const ip =
      index % 2 === 0 ? `10.77.${(index >> 8) & 255}.${(index & 255) + 1}` : `2001:db8:${index.toString(16)}::${index.toString(16)}`;
    const claims: string[] = [];
    let reviewed = 0;
    let submitted = 0;
    await sleep(Math.random() * interval); // spread the start
    while (Date.now() < deadline) {
      const op = pick();
      const agentId = ids[Math.floor(Math.random() * ids.length)]!;
      let result: { status: number; ms: number; text: string };
      try {
        switch (op) {
          case 'search':
            result = await call(ip, 'GET', `/agents/search?q=${WORDS[Math.floor(Math.random() * WORDS.length)]}&limit=10`);
            break;
          case 'list':
            result = await call(ip, 'GET', `/agents?limit=20&page=${1 + Math.floor(Math.random() * 5)}&sort=trust_score`);
            break;
          case 'profile':
            result = await call(ip, 'GET', `/agents/${agentId}`);
            break;
          case 'bulk':
            result = await call(ip, 'GET', `/agents/bulk?ids=${ids.slice(0, 10).join(',')}`);
            break;
          case 'reviews-list':
            result = await call(ip, 'GET', `/agents/${agentId}/reviews?limit=10`);
            break;
          case 'stats':
            result = await call(ip, 'GET', '/stats');
            break;
          case 'marketing':
            result = await call(ip, 'GET', '/marketing/posts?limit=10');
            break;
          case 'review': {
            // A different agent each time: one review per agent per client is the quota.
            const target = ids[(index * 7 + reviewed++) % ids.length]!;
            result = await call(ip, 'POST', `/agents/${target}/reviews`, {
              rating: 1 + Math.floor(Math.random() * 5),
              comment: `Soak review ${index}/${reviewed}`,
              reviewer_name: `client ${index}`,
            });
            if (result.status === 201) committed.add((JSON.parse(result.text) as { id: string }).id);
            break;
          }
          case 'submit':
            submitted++;
            result = await call(ip, 'POST', '/submit', {
              name: `Soak Agent ${index}-${submitted}`,
              tagline: 'Submitted during the soak',
              source_url: `https://example.com/soak/${index}/${submitted}/${Date.now()}`,
            });
            break;
          case 'claim':
            result = await call(ip, 'POST', '/claims', {
              agent_id: agentId,
              claimant_name: `Client ${index}`,
              claimant_email: `client${index}@example.com`,
            });
            if (result.status === 201) claims.push((JSON.parse(result.text) as { id: string }).id);
            break;
          case 'claim-verify': {
            const claimId = claims.shift();
            result = claimId ? await call(ip, 'POST', `/claims/${claimId}/verify`) : await call(ip, 'GET', '/stats');
            break;
          }
          case 'newsletter':
            result = await call(ip, 'POST', '/newsletter', { email: `soak${index}-${Date.now()}@example.com` });
            break;
        }
      } catch (error) {
        result = { status: 0, ms: 0, text: String(error) };
      }
      samples.push({ op, status: result.status, ms: result.ms });
      if (Date.now() - progress > 60_000) {
        progress = Date.now();
        const left = Math.round((deadline - Date.now()) / 1000);
        console.error(`· ${samples.length} requests, ${committed.size} reviews committed, RSS ${mb(rssOf(pid))} MB, ${left} s left`);
      }
      await sleep(Math.max(0, interval * (0.5 + Math.random()) - result.ms));
    }
  };

  const loadStarted = performance.now();
  await Promise.all(Array.from({ length: options.clients }, (_, i) => client(i)));
  const loadSeconds = (performance.now() - loadStarted) / 1000;

  // Drain: every committed review must reach the fast receiver, verified.
  const drainStarted = performance.now();
  const drainDeadline = Date.now() + options.drainSeconds * 1000;
  while (Date.now() < drainDeadline && [...committed].some((id) => !verified.has(id))) await sleep(250);
  const drainSeconds = (performance.now() - drainStarted) / 1000;
  const lost = [...committed].filter((id) => !verified.has(id));
  const rssEnd = rssOf(pid);
  const [loadEnd = 0] = os.loadavg();
  clearInterval(rssTimer);
  rssPeak = Math.max(rssPeak, rssEnd);

  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  await Promise.all([fast.close(), slow.close(), dns.close()]);
  // What the server left in its delivery queue, read from the database once it has stopped.
  const after = createServices({ db: openDatabase(databasePath(config)), config });
  const queue = await after.webhooks.queue.countByStatus();
  const unresolvableState = await after.webhooks.get(unresolvable.id);
  after.db.$client.close();
  if (!options.keep) fs.rmSync(dataDir, { recursive: true, force: true });
  else console.error(`data dir kept: ${dataDir}`);

  const byOp = new Map<Op, Sample[]>();
  for (const sample of samples) byOp.set(sample.op, [...(byOp.get(sample.op) ?? []), sample]);
  const statuses: Record<string, number> = {};
  for (const sample of samples) statuses[sample.status] = (statuses[sample.status] ?? 0) + 1;
  const summary = {
    machine: `${os.cpus().length} cores, shared with other work; Node ${process.version}`,
    minutes: options.minutes,
    clients: options.clients,
    requests: samples.length,
    requests_per_second: round(samples.length / loadSeconds),
    latency_ms: stats(samples.map((s) => s.ms)),
    latency_ms_without_claim_verify: stats(samples.filter((s) => s.op !== 'claim-verify').map((s) => s.ms)),
    by_operation: Object.fromEntries([...byOp].map(([op, list]) => [op, { n: list.length, ...stats(list.map((s) => s.ms)) }])),
    statuses,
    server_errors: samples.filter((s) => s.status >= 500 || s.status === 0).length,
    rss_mb: { start: mb(rssStart), end: mb(rssEnd), peak: mb(rssPeak) },
    load_average_1m: { start: round(loadStart), end: round(loadEnd) },
    webhooks: {
      reviews_committed: committed.size,
      delivered_verified: [...committed].filter((id) => verified.has(id)).length,
      lost: lost.length,
      duplicates: [...verified.values()].filter((n) => n > 1).length,
      bad_signatures: badSignatures,
      fast_deliveries: fastDeliveries,
      slow_receiver_requests: slow.received.length,
      slow_receiver_max_concurrent: slow.maxConcurrent,
      drain_seconds: round(drainSeconds),
      queue_at_stop: queue,
      unresolvable_endpoint: { active: unresolvableState.active, consecutive_failures: unresolvableState.consecutive_failures },
    },
    // Only server code that asks the configured resolver (AGENTDIR_DNS_SERVERS) reaches this server.
    dns: { queries_to_the_stalling_server: dns.queries.length },
  };
  console.log(JSON.stringify(summary, null, 2));
  fs.mkdirSync(path.join(root, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(path.join(root, 'bench', 'results', 'soak-latest.json'), `${JSON.stringify(summary, null, 2)}\n`);
  if (lost.length > 0 || badSignatures > 0 || summary.server_errors > 0) process.exitCode = 1;
}

function stats(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
  return { p50: at(0.5), p99: at(0.99), max: round(sorted.at(-1) ?? 0) };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

function mb(bytes: number): number {
  return Math.round(bytes / 1024 / 1024);
}

/** Resident set size of a process, from /proc (Linux). */
function rssOf(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function startServe(dataDir: string, port: number, dnsServer: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['out/api/serve.js', '--port', String(port), '--data-dir', dataDir, '--allow-private-urls', '--trust-proxy'],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, AGENTDIR_DNS_SERVERS: dnsServer } },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output}`)), 120_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Agent Directory API:')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${output}`)));
  });
  child.stdout!.resume();
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
