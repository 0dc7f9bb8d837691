import { Redis } from 'ioredis';

/** Redis could not be reached at start-up: `serve` says so and exits non-zero. */
export class RedisUnreachableError extends Error {}

export interface ConnectRedisOptions {
  /** How long the first connection and PING may take. */
  timeoutMs?: number;
}

/**
 * Connects to the Redis of `--redis-url` and checks that it answers (PING), or
 * rejects with one clear sentence: a server configured to share its limits
 * must not start counting alone. Once connected, a lost connection is retried
 * in the background (at most every 2 s); commands sent meanwhile fail at once
 * (no offline queue), so callers decide what a request does without Redis.
 */
export async function connectRedis(url: string, { timeoutMs = 3000 }: ConnectRedisOptions = {}): Promise<Redis> {
  let connected = false;
  let reported = false;
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // Before the first connection: no retries (start-up fails); after it: reconnect with backoff.
    retryStrategy: (times) => (connected ? Math.min(times * 200, 2000) : null),
  });
  client.on('error', (error: Error) => {
    if (!connected || reported) return;
    reported = true; // once per outage, not once per retry
    console.error(`Redis at ${redactRedisUrl(url)}: ${error.message} (reconnecting)`);
  });
  client.on('ready', () => {
    reported = false;
  });
  try {
    await withTimeout(
      (async () => {
        await client.connect();
        await client.ping();
      })(),
      timeoutMs,
    );
  } catch (error) {
    client.disconnect();
    const reason = error instanceof Error && error.message ? error.message : String(error);
    throw new RedisUnreachableError(`Redis at ${redactRedisUrl(url)} is unreachable: ${reason}`);
  }
  connected = true;
  return client;
}

/** The URL without its password, for messages. */
export function redactRedisUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'the configured Redis';
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
