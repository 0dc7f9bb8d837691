import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { createConfig, databasePath } from '../../src-api/config';
import { openDatabase } from '../../src-api/db/client';
import { createServices } from '../../src-api/services';
import { agentInput, makeTempDir } from '../helpers/test-server';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * The real server process, SIGKILLed in the middle of a burst of 1,000
 * events and restarted on the same data dir: the receiver ends up with every
 * event at least once, nothing else, every signature valid. Only deliveries
 * that were in flight at the kill may arrive twice.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const EVENTS = 1_000;
/** The server's default dispatcher concurrency: at most this many deliveries can be in flight at the kill. */
const DISPATCH_CONCURRENCY = 8;

const children = new Set<ChildProcess>();
let receiver: WebhookReceiver | undefined;

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await receiver?.close();
});

it('delivers every event at least once across a SIGKILL and a restart', { timeout: 180_000 }, async () => {
  const dataDir = makeTempDir('agentdir-crash-');
  // Answering takes a while, so deliveries are still going on when the server is killed.
  receiver = await startWebhookReceiver({ respond: () => ({ status: 200, body: 'ok', delayMs: 25 }) });

  // Before the server runs: one agent to review and an endpoint at the receiver (as `cli` would).
  const prep = createServices({ db: openDatabase(databasePath({ dataDir })), config: createConfig({ dataDir }) });
  const agent = await prep.agents.edits.create(agentInput({ name: 'Crash Target' }), { emitEvents: false });
  const endpoint = await prep.webhooks.add({ url: receiver.url }, { actor: 'test' });
  receiver.secret = endpoint.secret;
  prep.db.$client.close();

  const port = await freePort();
  let server = await startServeProcess(dataDir, port);
  const base = `http://127.0.0.1:${port}/api/v1`;

  // The burst: reviews over HTTP, 16 at a time, until the server dies under us.
  let acknowledged = 0;
  let killedWith: number | undefined;
  const postReview = async (i: number): Promise<boolean> => {
    try {
      const response = await fetch(`${base}/agents/${agent.id}/reviews`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rating: (i % 5) + 1, comment: `burst ${i}` }),
      });
      if (response.status !== 201) throw new Error(`POST review answered ${response.status}`);
      acknowledged++;
      return true;
    } catch (error) {
      if (killedWith !== undefined) return false; // the server is gone: expected
      throw error;
    }
  };
  const killWhenHalfDelivered = (async () => {
    await receiver!.waitFor((hits) => hits.length >= 300, 60_000, '300 deliveries before the kill');
    killedWith = receiver!.received.length;
    server.kill('SIGKILL');
    await exited(server);
  })();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (killedWith === undefined && next < EVENTS) if (!(await postReview(next++))) return;
    }),
  );
  await killWhenHalfDelivered;
  const distinctAtKill = new Set(receiver.received.map((h) => h.eventId)).size;
  expect(distinctAtKill).toBeLessThan(acknowledged); // killed in the middle: work was left over

  // Restart on the same data dir and finish the burst.
  server = await startServeProcess(dataDir, port);
  while (acknowledged < EVENTS) {
    const batch = Math.min(16, EVENTS - acknowledged);
    await Promise.all(Array.from({ length: batch }, () => postReview(next++)));
  }

  // The truth is the database: every event it holds must reach the receiver.
  const storedEventIds = (): Set<string> => {
    const db = new Database(databasePath({ dataDir }), { readonly: true });
    try {
      return new Set((db.prepare('SELECT id FROM events').all() as Array<{ id: string }>).map((row) => row.id));
    } finally {
      db.close();
    }
  };
  const stored = storedEventIds();
  expect(stored.size).toBeGreaterThanOrEqual(EVENTS);
  await receiver.waitFor(
    (hits) => {
      const got = new Set(hits.map((h) => h.eventId));
      return [...stored].every((id) => got.has(id));
    },
    60_000,
    `all ${stored.size} stored events`,
  );
  // The deliveries in flight at the kill stay leased until the lease runs out (timeout 10 s + margin 5 s);
  // then the restarted server sends them again. Wait for the log to settle: every delivery succeeded.
  const deliveryStates = (): Record<string, number> => {
    const db = new Database(databasePath({ dataDir }), { readonly: true });
    try {
      const rows = db.prepare('SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status').all() as Array<{
        status: string;
        n: number;
      }>;
      return Object.fromEntries(rows.map((row) => [row.status, row.n]));
    } finally {
      db.close();
    }
  };
  const deadline = Date.now() + 60_000;
  while (JSON.stringify(deliveryStates()) !== JSON.stringify({ succeeded: stored.size }) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(deliveryStates()).toEqual({ succeeded: stored.size });
  await receiver.waitForQuiet(500);

  const hits = receiver.received;
  expect(hits.filter((h) => !h.signatureValid || !h.standardValid)).toEqual([]);
  const receivedIds = new Set(hits.map((h) => h.eventId));
  expect([...receivedIds].filter((id) => !stored.has(id!))).toEqual([]); // nothing unknown
  expect(receivedIds.size).toBe(stored.size);

  // Duplicates only for what was in flight when the server died.
  const perDelivery = new Map<string, number>();
  for (const hit of hits) perDelivery.set(hit.deliveryId!, (perDelivery.get(hit.deliveryId!) ?? 0) + 1);
  const duplicated = [...perDelivery.values()].filter((n) => n > 1);
  expect(duplicated.every((n) => n === 2)).toBe(true);
  expect(duplicated.length).toBeLessThanOrEqual(DISPATCH_CONCURRENCY);
  expect(perDelivery.size).toBe(stored.size); // one delivery per event: nothing fanned out twice

  // SIGTERM stops it cleanly.
  server.kill('SIGTERM');
  expect(await exited(server)).toBe(0);
});

/** `serve` as a real process (node --import tsx: one process, so SIGKILL hits the server itself). */
async function startServeProcess(dataDir: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src-api/serve.ts',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--data-dir',
      dataDir,
      '--no-demo-data',
      '--allow-private-urls',
      '--rate-limit',
      'off',
    ],
    { cwd: ROOT, env: { ...process.env, AGENTDIR_WEBHOOK_RETRY_DELAYS_MS: '200,400,800' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start within 30 s:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`Agent Directory API: http://127.0.0.1:${port}/api/v1`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before listening:\n${output}`));
    });
  });
  return child;
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
