import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestFrom, startCluster, type AccessLogEntry, type TestCluster } from '../helpers/cluster';
import { psql } from '../helpers/postgres-server';
import { waitUntilSettled } from '../helpers/serve-process';
import { bearer, trpcCall } from '../helpers/trpc';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * Contract section 8, as the README's deployment example runs it: scripts/cluster.sh starts a real
 * redis-server, a real PostgreSQL 15, two real `serve` processes on its one database (the demo
 * directory, seeded once by whichever replica starts first) and a real nginx in front of them.
 * `CLUSTER_STORE=sqlite npx vitest run test/cluster/cluster.test.ts` runs the same cases with the
 * replicas on one SQLite file instead (one machine), as the script can.
 */
const store = process.env.CLUSTER_STORE === 'sqlite' ? 'sqlite' : 'postgres';
let cluster: TestCluster;
let agentIds: string[];
const receivers: WebhookReceiver[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  cluster = await startCluster({ serveArgs: ['--allow-private-urls'], env: { CLUSTER_STORE: store } });
  // The script says where the admin token is, never the token itself.
  expect(cluster.output()).toContain('(admin token: AGENTDIR_ADMIN_TOKEN)');
  expect(cluster.output()).not.toContain(cluster.adminToken);
  const sqliteFiles = fs.readdirSync(path.join(cluster.dir, 'data')).filter((file) => file.includes('.sqlite'));
  if (store === 'postgres') {
    // The directory is in the script's PostgreSQL (an ICU collation, as most installations have), not in a SQLite file.
    expect(cluster.databaseUrl).toMatch(/^postgres:\/\/.*\/agentdir$/);
    expect(Number(psql(cluster.databaseUrl!, 'SELECT count(*) FROM agents'))).toBeGreaterThanOrEqual(100);
    expect(psql(cluster.databaseUrl!, "SELECT datlocprovider FROM pg_database WHERE datname = 'agentdir'")).toBe('i');
    expect(sqliteFiles).toEqual([]);
  } else {
    expect(cluster.postgresPid).toBeUndefined();
    expect(sqliteFiles).not.toEqual([]);
  }
  // Both replicas settled (search index and profile cache warm-up done) before anything is timed.
  for (const replica of cluster.replicas) await waitUntilSettled(replica.origin);
  const listed = await fetch(`${cluster.api}/agents?limit=100`);
  expect(listed.status).toBe(200);
  agentIds = ((await listed.json()) as { agents: { id: string }[] }).agents.map((agent) => agent.id);
  expect(agentIds.length).toBe(100);
}, 300_000);

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await cluster?.stop();
}, 120_000);

/** An admin tRPC mutation through nginx. */
const mutate = (procedure: string, input: unknown) => trpcCall(cluster.origin, 'mutation', procedure, input, bearer(cluster.adminToken));

/** A receiver and an endpoint for agent.updated, created through nginx. */
async function subscribe(): Promise<{ receiver: WebhookReceiver; endpointId: string }> {
  const receiver = await startWebhookReceiver();
  receivers.push(receiver);
  const created = await mutate('webhooks.create', { url: receiver.url, events: ['agent.updated'] });
  expect(created.status).toBe(200);
  receiver.secret = created.data.secret as string;
  return { receiver, endpointId: created.data.id as string };
}

/** `count` renames through nginx, `workers` at a time; worker w renames only `agents[w]`, one write after another. */
async function renameBurst(
  agents: string[],
  count: number,
  label: string,
  onAnswer: (done: number) => void = () => {},
): Promise<{ name: string; agent: string; status: number; worker: number }[]> {
  const writes: { name: string; agent: string; status: number; worker: number }[] = [];
  let next = 0;
  await Promise.all(
    agents.map(async (agent, worker) => {
      while (next < count) {
        const name = `Cluster ${label} ${String(next++).padStart(4, '0')}`;
        let status: number;
        try {
          status = (await mutate('agents.update', { id: agent, patch: { name } })).status;
        } catch {
          status = 0; // the connection itself failed
        }
        writes.push({ name, agent, status, worker });
        onAnswer(writes.length);
      }
    }),
  );
  return writes;
}

/** Delivered events by webhook-id (the event id): how many requests each got. */
function byEventId(received: ReceivedWebhook[]): Map<string, ReceivedWebhook[]> {
  const map = new Map<string, ReceivedWebhook[]>();
  for (const hit of received) {
    const id = String(hit.headers['webhook-id']);
    map.set(id, [...(map.get(id) ?? []), hit]);
  }
  return map;
}

/** This replica's own count of webhook attempts that succeeded (its /metrics, read directly over loopback). */
async function succeededAttempts(origin: string): Promise<number> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  return Number(/^agentdir_webhook_attempts_total\{outcome="succeeded"\} (\d+)/m.exec(text)?.[1] ?? NaN);
}

describe(`two serve processes on ${store === 'postgres' ? 'one PostgreSQL' : 'one SQLite file'} behind nginx, limits in Redis (scripts/cluster.sh)`, () => {
  it('a review written through one replica is in search and in the profile read from the other within one second', async () => {
    // Reads with a key (1,000 a minute): the polling below must not run into the anonymous read limit.
    const key = (await mutate('keys.create', { name: 'cluster test' })).data.key as string;
    const delays: number[] = [];
    for (const [writer, reader, agentId] of [
      [cluster.replicas[0]!, cluster.replicas[1]!, agentIds[10]!],
      [cluster.replicas[1]!, cluster.replicas[0]!, agentIds[11]!],
    ] as const) {
      const profileOf = async () =>
        (await (await fetch(`${reader.api}/agents/${agentId}`, { headers: bearer(key) })).json()) as {
          name: string;
          rating: { count: number };
        };
      const before = await profileOf();

      const written = await fetch(`${writer.api}/agents/${agentId}/reviews`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rating: 5, comment: 'Seen by the other replica.', reviewer_name: 'Cluster' }),
      });
      expect(written.status).toBe(201);
      const review = (await written.json()) as { id: string };
      const writtenAt = performance.now();

      // Poll the other replica: its search hit, its profile and its review list all show the review.
      let seenAfter: number | undefined;
      while (seenAfter === undefined && performance.now() - writtenAt < 10_000) {
        const [search, profile, reviews] = await Promise.all([
          fetch(`${reader.api}/agents/search?q=${encodeURIComponent(before.name)}&limit=20`, { headers: bearer(key) }).then(
            (response) => response.json() as Promise<{ agents: { id: string; rating: { count: number } }[] }>,
          ),
          profileOf(),
          fetch(`${reader.api}/agents/${agentId}/reviews?limit=5`, { headers: bearer(key) }).then(
            (response) => response.json() as Promise<{ reviews: { id: string }[] }>,
          ),
        ]);
        const hit = search.agents.find((agent) => agent.id === agentId);
        if (
          hit?.rating.count === before.rating.count + 1 &&
          profile.rating.count === before.rating.count + 1 &&
          reviews.reviews.some((listed) => listed.id === review.id)
        ) {
          seenAfter = performance.now() - writtenAt;
        } else {
          await sleep(20);
        }
      }
      expect(seenAfter, 'the review never showed on the other replica').toBeDefined();
      delays.push(seenAfter!);
    }
    console.log(`cluster: review seen on the other replica after ${delays.map((ms) => ms.toFixed(0)).join(' and ')} ms`);
    for (const delay of delays) expect(delay).toBeLessThanOrEqual(1_000);
  }, 60_000);

  it('21 writes through nginx from one client IP, spread over both replicas: exactly one 429; a forged X-Forwarded-For changes nothing', async () => {
    // Every write claims to come from another address; nginx appends the real one, which the replicas take.
    const answers = await Promise.all(
      Array.from({ length: 21 }, (_, i) =>
        requestFrom('127.0.0.2', `${cluster.api}/newsletter`, {
          headers: { 'x-forwarded-for': `203.0.113.${i + 1}` },
          body: { email: `cluster-reader${i}@example.com` },
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 429)).toHaveLength(1);
    expect(statuses.filter((status) => status === 202)).toHaveLength(20);
    const limited = answers.find((answer) => answer.status === 429)!;
    expect(limited.json()).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);

    // Both replicas answered some of them (nginx's access log names the replica of each request).
    const logged = await cluster.waitForAccessLog((entry) => entry.client === '127.0.0.2' && entry.path === '/api/v1/newsletter', 21);
    expect(logged).toHaveLength(21);
    expect(new Set(logged.map((entry) => entry.upstream))).toEqual(
      new Set(cluster.replicas.map((replica) => new URL(replica.origin).host)),
    );
    expect(logged.every((entry) => entry.xff.endsWith(', 127.0.0.2'))).toBe(true);

    // One counter, for the real client address: none for nginx's address or the forged ones.
    const redis = new Redis(cluster.redisUrl);
    try {
      const keys = await redis.keys('agentdir:rate:writes:*');
      expect(keys).toContain('agentdir:rate:writes:127.0.0.2');
      expect(keys.filter((key) => key.includes('203.0.113.'))).toEqual([]);
    } finally {
      redis.disconnect();
    }

    // Another client still has its whole budget: the limit is per client, not per nginx.
    const other = await requestFrom('127.0.0.3', `${cluster.api}/newsletter`, { body: { email: 'cluster-other@example.com' } });
    expect(other.status).toBe(202);
    expect(other.headers.ratelimit).toMatch(/^"writes";r=19;t=\d+$/);
  }, 60_000);

  it('1,000 events written across both replicas are each delivered once', async () => {
    const { receiver, endpointId } = await subscribe();
    const started = performance.now();
    const writes = await renameBurst(agentIds.slice(20, 36), 1_000, 'c');
    const written = performance.now();
    expect(writes.filter((write) => write.status !== 200)).toEqual([]);
    const updates = await cluster.waitForAccessLog((entry) => entry.path === '/trpc/agents.update', 1_000);
    expect(updates).toHaveLength(1_000);
    expect(new Set(updates.map((entry) => entry.upstream)).size).toBe(2);

    await receiver.waitFor((received) => byEventId(received).size >= 1_000, 120_000, '1,000 distinct events');
    const delivered = performance.now();
    await receiver.waitForQuiet(1_000);

    const events = byEventId(receiver.received);
    expect(events.size).toBe(1_000);
    expect([...events.values()].filter((hits) => hits.length > 1).map((hits) => hits[0]!.eventId)).toEqual([]);
    expect(receiver.received).toHaveLength(1_000);
    expect(receiver.received.every((hit) => hit.signatureValid && hit.standardValid)).toBe(true);
    // One event per write: the names the events carry are exactly the names written.
    expect(new Set(receiver.received.map((hit) => hit.body!.data.name))).toEqual(new Set(writes.map((write) => write.name)));
    // Both replicas sent deliveries, and between them exactly 1,000 succeeded.
    const sent = await Promise.all(cluster.replicas.map((replica) => succeededAttempts(replica.origin)));
    expect(sent.every((count) => count > 0)).toBe(true);
    expect(sent[0]! + sent[1]!).toBe(1_000);
    console.log(
      `cluster: 1,000 renames written in ${(written - started).toFixed(0)} ms (${updates.length} through nginx), ` +
        `all delivered after ${(delivered - started).toFixed(0)} ms; sent by the replicas ${sent.join(' + ')}`,
    );
    expect((await mutate('webhooks.remove', { id: endpointId })).status).toBe(200);
  }, 240_000);

  it('killing one replica (SIGKILL) mid-burst loses nothing: every acknowledged write is there and every event is delivered', async () => {
    const { receiver } = await subscribe();
    // A receiver that takes 30 ms per delivery: the victim is likely to die with deliveries in flight.
    receiver.respond = () => ({ status: 200, body: 'ok', delayMs: 30 });
    const victim = cluster.replicas[0]!;
    const survivor = cluster.replicas[1]!;
    const agents = agentIds.slice(40, 48);
    const isUpdate = (entry: AccessLogEntry) => entry.path === '/trpc/agents.update';
    const updatesBefore = cluster.accessLog().filter(isUpdate).length;
    const loggedBefore = cluster.accessLog().length;
    let killedAt = 0;
    // Two readers through nginx meanwhile, with a key (1,000 reads a minute): a GET the victim had
    // taken when it died is passed on to the survivor, so no read fails.
    const key = (await mutate('keys.create', { name: 'cluster readers' })).data.key as string;
    let bursting = true;
    const reads: number[] = [];
    const readers = [0, 1].map(async (reader) => {
      for (let i = 0; bursting && i < 300; i++) {
        reads.push((await fetch(`${cluster.api}/agents/${agents[(i + reader) % agents.length]}`, { headers: bearer(key) })).status);
        await sleep(50);
      }
    });
    const writes = await renameBurst(agents, 400, 'd', (done) => {
      if (done === 120 && killedAt === 0) {
        process.kill(victim.pid, 'SIGKILL');
        killedAt = Date.now();
      }
    });
    bursting = false;
    await Promise.all(readers);
    expect(killedAt).toBeGreaterThan(0);
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.filter((status) => status !== 200)).toEqual([]);
    await expect(fetch(`${victim.api}/health`)).rejects.toThrow();

    const acknowledged = writes.filter((write) => write.status === 200);
    const unanswered = writes.filter((write) => write.status !== 200);
    // Only requests the dying replica had already taken fail (nginx does not resend a POST): the one
    // each writer had in flight, or one sent on a kept-alive connection before nginx saw it close.
    expect(unanswered.every((write) => write.status === 502)).toBe(true);
    expect(unanswered.length).toBeLessThanOrEqual(2 * agents.length);
    // nginx logs each request once (one passed on to the survivor after a refused connection names both).
    const logged = (await cluster.waitForAccessLog(isUpdate, updatesBefore + 400)).slice(updatesBefore);
    expect(logged).toHaveLength(400);
    const failed = logged.filter((entry) => entry.status >= 500);
    expect(failed).toHaveLength(unanswered.length);
    expect(failed.every((entry) => entry.method === 'POST' && entry.upstream === new URL(victim.origin).host)).toBe(true);

    // Reads fail over: every GET through nginx is answered by the survivor.
    for (let i = 0; i < 6; i++) expect((await fetch(`${cluster.api}/agents/${agents[i]}`)).status).toBe(200);

    // Every acknowledged write's event arrives: the victim's in-flight deliveries are taken over by the
    // survivor once their lease runs out (the send timeout, 10 s, plus 5 s).
    const names = (received: ReceivedWebhook[]) => new Set(received.map((hit) => hit.body?.data.name));
    await receiver.waitFor(
      (received) => acknowledged.every((write) => names(received).has(write.name)),
      90_000,
      `the events of ${acknowledged.length} acknowledged writes`,
    );
    await receiver.waitForQuiet(2_000);
    const events = byEventId(receiver.received);
    // Nothing but what was written: an unanswered write may have committed (then its event comes too).
    const written = new Set(writes.map((write) => write.name));
    expect([...names(receiver.received)].filter((name) => !written.has(name as string))).toEqual([]);
    // One event per committed write (no event twice under two ids).
    expect(events.size).toBe(names(receiver.received).size);
    // A repeat of an event is only a delivery the victim was sending when it died (at most the 4 an
    // endpoint may have in flight): the same delivery sent again once its lease ran out (the send
    // timeout, 10 s, plus 5 s after it was claimed and signed), never two senders at once.
    const repeated = [...events.values()].filter((hits) => hits.length > 1);
    expect(repeated.length).toBeLessThanOrEqual(4);
    for (const hits of repeated) {
      expect(hits).toHaveLength(2);
      expect(hits[1]!.deliveryId).toBe(hits[0]!.deliveryId);
      const signedAt = hits.map((hit) => Number(hit.headers['webhook-timestamp']));
      expect(signedAt[1]! - signedAt[0]!).toBeGreaterThanOrEqual(14);
    }
    expect(receiver.overlappingDeliveries).toEqual([]);

    // Afterwards every agent carries its last acknowledged name, or a later one whose answer was lost.
    for (const [worker, agent] of agents.entries()) {
      const own = writes.filter((write) => write.worker === worker);
      const lastAcked = own.map((write) => write.status).lastIndexOf(200);
      const allowed = own
        .slice(lastAcked)
        .filter((write, i) => i === 0 || write.status !== 200)
        .map((write) => write.name);
      const profile = (await (await fetch(`${survivor.api}/agents/${agent}`)).json()) as { name: string };
      expect(allowed).toContain(profile.name);
    }
    console.log(
      `cluster: SIGKILL after 120 of 400 writes: ${acknowledged.length} acknowledged, ${unanswered.length} unanswered (502), ` +
        `${reads.length} reads meanwhile all 200, ` +
        `${
          cluster
            .accessLog()
            .slice(loggedBefore)
            .filter((entry) => entry.upstream.includes(',')).length
        } requests passed on to the survivor by nginx, ` +
        `${events.size} events delivered, ${repeated.length} sent again after the lease ran out, ` +
        `last one ${((Math.max(...receiver.received.map((hit) => hit.receivedAtEpochMs)) - killedAt) / 1000).toFixed(1)} s after the kill`,
    );
  }, 240_000);

  it('Ctrl-C stops everything the script started: nginx, then the replicas, then PostgreSQL and Redis', async () => {
    const alive = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const replicas = cluster.replicas.filter((replica) => alive(replica.pid));
    expect(replicas.length).toBeGreaterThan(0);
    expect(alive(cluster.nginxPid)).toBe(true);
    expect(alive(cluster.redisPid!)).toBe(true);
    const postgresPids = cluster.postgresPid === undefined ? [] : [cluster.postgresPid];
    expect(postgresPids.filter(alive)).toEqual(postgresPids);

    await cluster.interrupt(); // SIGINT to the script's whole process group, as a terminal sends it
    expect(cluster.output()).toContain('cluster: stopped');
    expect(
      [cluster.nginxPid, cluster.redisPid!, ...postgresPids, ...cluster.replicas.map((replica) => replica.pid)].filter(alive),
    ).toEqual([]);
    // The parts run in sessions of their own: the replicas heard the script's SIGTERM (not the
    // terminal's SIGINT) and shut down while Redis still answered.
    for (const replica of replicas) {
      const log = fs.readFileSync(path.join(cluster.dir, `serve-${cluster.replicas.indexOf(replica) + 1}.log`), 'utf8');
      expect(log).toContain('SIGTERM received, shutting down');
      expect(log).not.toContain('Connection is closed');
    }
    expect(fs.readFileSync(path.join(cluster.dir, 'redis.log'), 'utf8')).toContain('Received SIGTERM');
    // PostgreSQL too, once the replicas had gone: a smart shutdown (SIGTERM), which waits for its clients.
    if (store === 'postgres') {
      const log = fs.readFileSync(path.join(cluster.dir, 'postgres.log'), 'utf8');
      expect(log).toContain('received smart shutdown request');
      expect(log).toContain('database system is shut down');
    }
  }, 120_000);
});
