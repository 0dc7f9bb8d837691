import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startRedis, type TestRedis } from '../helpers/redis-server';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process';
import { makeTempDir } from '../helpers/test-server';

/**
 * Contract section 8: with --redis-url the limits of section 3 are counted in
 * Redis, exact across processes. Two real `serve` processes on one real
 * redis-server and one data dir; every request comes from 127.0.0.1.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let redis: TestRedis;
let admin: Redis;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
});
afterEach(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }
  children.clear();
  await admin.flushall();
});
afterAll(async () => {
  admin.disconnect();
  await redis.stop();
});

/** `serve` as a real process expected to stop at start-up: its exit code and output. */
function failingServe(args: string[]): { output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src-api/serve.ts', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { output: () => output, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
}

/** A serve process with the limits on, on `dataDir`, counted through it. */
async function startServe(dataDir: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const server = await startServeProcess(['--data-dir', dataDir, '--no-demo-data', '--rate-limit', 'on', ...extra], env);
  children.add(server.child);
  return server;
}

describe('limits in Redis, shared by two serve processes', () => {
  it('21 writes from one IP spread over both processes at once: exactly one 429, with Retry-After and the RateLimit headers', async () => {
    const dataDir = makeTempDir('agentdir-redis-limits-');
    const [a, b] = await Promise.all([
      startServe(dataDir, ['--redis-url', redis.url]),
      startServe(dataDir, [], { AGENTDIR_REDIS_URL: redis.url }),
    ]);

    const responses = await Promise.all(
      Array.from({ length: 21 }, (_, i) =>
        fetch(`${(i % 2 === 0 ? a : b).api}/newsletter`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: `reader${i}@example.com` }),
        }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 429)).toHaveLength(1);
    expect(statuses.filter((status) => status === 202)).toHaveLength(20);

    // Each allowed write saw its own count: the 20 remaining budgets are 19 … 0, once each.
    const remaining = responses
      .filter((response) => response.status === 202)
      .map((response) => Number(/;r=(\d+);/.exec(response.headers.get('ratelimit') ?? '')?.[1]));
    expect(remaining.sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));

    const limited = responses.find((response) => response.status === 429)!;
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('ratelimit-policy')).toBe('"writes";q=20;w=60');
    expect(limited.headers.get('ratelimit')).toBe(`"writes";r=0;t=${retryAfter}`);
    expect(limited.headers.get('content-type')).toContain('application/problem+json');
    expect(await limited.json()).toMatchObject({ status: 429, code: 'rate_limited' });

    // The count lives in Redis, with the window as its expiry.
    const keys = await admin.keys('agentdir:rate:writes:*');
    expect(keys).toHaveLength(1);
    expect(await admin.get(keys[0]!)).toBe('20');
    expect(await admin.pttl(keys[0]!)).toBeGreaterThan(0);

    // Reads have their own budget, shared the same way.
    const read = await fetch(`${b.api}/agents?limit=1`);
    expect(read.status).toBe(200);
    expect(read.headers.get('ratelimit')).toMatch(/^"reads";r=99;t=\d+$/);
  }, 120_000);

  it('failed sign-ins count across processes, exactly even when they arrive at once: 15 wrong passwords, 10 × 401 and 5 × 429', async () => {
    const dataDir = makeTempDir('agentdir-redis-sign-in-');
    const [a, b] = await Promise.all([startServe(dataDir, ['--redis-url', redis.url]), startServe(dataDir, ['--redis-url', redis.url])]);
    const signIn = (server: ServeProcess) =>
      fetch(`${server.api}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'nobody@example.test', password: 'wrong password 123' }),
      });
    // All 15 are in flight together: each is counted, with the check, before its password is hashed.
    const statuses = (await Promise.all(Array.from({ length: 15 }, (_, i) => signIn(i % 2 === 0 ? a : b)))).map((r) => r.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(5);

    const blocked = await signIn(b);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await signIn(a)).status).toBe(429);
    expect(await admin.zcard('agentdir:sign-in:ip:127.0.0.1')).toBe(10);
  }, 120_000);
});

describe('an unreachable Redis', () => {
  it('stops serve at start-up with a clear error and a non-zero exit', async () => {
    const port = await freePort(); // nothing listens there
    const { output, exited } = failingServe([
      '--port',
      '0',
      '--data-dir',
      makeTempDir('agentdir-redis-down-'),
      '--no-demo-data',
      '--redis-url',
      `redis://127.0.0.1:${port}`,
    ]);
    expect(await exited).toBe(1);
    expect(output()).toContain(`serve: Redis at redis://127.0.0.1:${port} is unreachable`);
    expect(output()).not.toContain('Agent Directory API:');
  }, 60_000);

  it('rejects a --redis-url that is not a redis:// URL', async () => {
    const { output, exited } = failingServe([
      '--port',
      '0',
      '--data-dir',
      makeTempDir('agentdir-redis-bad-'),
      '--redis-url',
      'http://127.0.0.1:6379',
    ]);
    expect(await exited).not.toBe(0);
    expect(output()).toContain('--redis-url must be a redis://host:port URL');
  }, 60_000);
});
