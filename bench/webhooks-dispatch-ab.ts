/**
 * Webhook dispatch on SQLite, A/B in one process: the queue and dispatcher of a
 * base checkout (`--base`, a `git worktree add --detach` of the revision before)
 * next to this checkout's, alternating round by round. Each round queues
 * `--events` events (fanned out to one endpoint) while no dispatcher runs, then
 * starts one and times it until every delivery is recorded: deliveries per
 * second, median of the rounds, and the ratio new/base. Two senders: `instant`
 * (a function answering 200 at once: the queue's own bookkeeping, claim and
 * outcome) and `http` (a real receiver on loopback).
 *
 *   npx tsx bench/webhooks-dispatch-ab.ts --base /work/wt/base-x [--rounds 6] [--events 1000]
 *
 * Not a test: the figures depend on the machine and its load (printed first and last).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const option = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1]! : fallback;
};
const base = path.resolve(option('base', ''));
const rounds = Number(option('rounds', '6'));
const eventCount = Number(option('events', '1000'));
const here = path.resolve(import.meta.dirname, '..');

interface Tree {
  name: string;
  createConfig: (overrides: object) => { webhooks: object; allowPrivateUrls: boolean };
  databasePath: (config: unknown) => string;
  openDatabase: (file: string) => { $client: { close(): void } };
  createServices: (deps: { db: unknown; config: unknown }) => {
    store: { transaction<T>(work: () => Promise<T>): Promise<T> };
    events: { recordInTransaction(type: string, data: object): Promise<unknown> };
    webhooks: { add(input: object, options: object): unknown; queue: unknown };
  };
  createWebhookDispatcher: (deps: object) => {
    start(): void;
    stop(): Promise<void>;
    onAttempt(listener: () => void): () => void;
  };
}

async function load(name: string, root: string): Promise<Tree> {
  const config = await import(path.join(root, 'src-api/config.ts'));
  const client = await import(path.join(root, 'src-api/db/client.ts'));
  const services = await import(path.join(root, 'src-api/services.ts'));
  const dispatcher = await import(path.join(root, 'src-api/modules/webhooks/webhooks.dispatcher.ts'));
  return {
    name,
    createConfig: config.createConfig,
    databasePath: config.databasePath,
    openDatabase: client.openDatabase,
    createServices: services.createServices,
    createWebhookDispatcher: dispatcher.createWebhookDispatcher,
  };
}

type Sender = (request: unknown) => Promise<{ ok: boolean; statusCode: number; latencyMs: number; responseExcerpt: string; error: null }>;
const instant: Sender = async () => ({ ok: true, statusCode: 200, latencyMs: 0, responseExcerpt: 'ok', error: null });

async function receiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200).end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One round: `eventCount` events queued, then timed from the dispatcher's start to the last recorded outcome. */
async function round(tree: Tree, sender: 'instant' | 'http', url: string): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-dispatch-ab-'));
  const config = tree.createConfig({ dataDir, allowPrivateUrls: true });
  const db = tree.openDatabase(tree.databasePath(config));
  try {
    const services = tree.createServices({ db, config });
    await services.webhooks.add({ url }, { actor: 'bench' });
    await services.store.transaction(async () => {
      for (let i = 0; i < eventCount; i++)
        await services.events.recordInTransaction('agent.updated', { agent_id: `agt_${i}`, name: `A${i}`, changed_fields: ['name'] });
    });
    const dispatcher = tree.createWebhookDispatcher({
      queue: services.webhooks.queue,
      clock: { now: () => new Date() },
      config,
      ...(sender === 'instant' && { send: instant }),
      log: () => {},
    });
    let recorded = 0;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    dispatcher.onAttempt(() => {
      if (++recorded === eventCount) done();
    });
    const started = performance.now();
    dispatcher.start();
    await finished;
    const seconds = (performance.now() - started) / 1000;
    await dispatcher.stop();
    return eventCount / seconds;
  } finally {
    db.$client.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  if (!fs.existsSync(path.join(base, 'src-api'))) throw new Error('--base <a checkout of the revision to compare with>');
  const trees = [await load('base', base), await load('new', here)];
  const hooks = await receiver();
  console.log(
    `load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}; ${eventCount} deliveries a round, ${rounds} rounds`,
  );
  try {
    for (const sender of ['instant', 'http'] as const) {
      const results = new Map<string, number[]>(trees.map((tree) => [tree.name, []]));
      await round(trees[0]!, sender, hooks.url); // warm-up
      await round(trees[1]!, sender, hooks.url);
      for (let r = 0; r < rounds; r++) {
        for (const tree of r % 2 === 0 ? trees : [...trees].reverse()) results.get(tree.name)!.push(await round(tree, sender, hooks.url));
      }
      const [a, b] = [median(results.get('base')!), median(results.get('new')!)];
      console.log(`${sender.padEnd(7)} base ${a.toFixed(0)}/s  new ${b.toFixed(0)}/s  new/base ${(b / a).toFixed(3)}`);
    }
  } finally {
    await hooks.close();
  }
  console.log(
    `load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
