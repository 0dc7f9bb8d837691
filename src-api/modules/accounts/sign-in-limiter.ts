import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Failed sign-ins per account (by e-mail, known or not, so the answer says
 * nothing about who exists) and per client IP in a sliding window. In memory,
 * per process, like the rate limits without `--redis-url`; createRedisSignInLimiter below shares them.
 */
export function createSignInLimiter(
  options: { maxFailures: number; windowMs: number; enabled: boolean },
  now: () => number = Date.now,
): SignInLimits {
  const failures = new Map<string, number[]>();

  const recent = (key: string, time: number): number[] => {
    const list = (failures.get(key) ?? []).filter((at) => at > time - options.windowMs);
    if (list.length === 0) failures.delete(key);
    else failures.set(key, list);
    return list;
  };

  return {
    /** Seconds until the next attempt is allowed, or 0 when it is allowed now. */
    retryAfterSeconds(keys: string[]): number {
      if (!options.enabled) return 0;
      const time = now();
      let wait = 0;
      for (const key of keys) {
        const list = recent(key, time);
        if (list.length >= options.maxFailures) wait = Math.max(wait, Math.ceil((list[0]! + options.windowMs - time) / 1000));
      }
      return wait;
    },

    recordFailure(keys: string[]): void {
      if (!options.enabled) return;
      const time = now();
      for (const key of keys) failures.set(key, [...recent(key, time), time]);
      if (failures.size > 100_000) for (const key of failures.keys()) recent(key, time); // drop stale keys under a flood
    },

    /** A successful sign-in clears the account's count (not the IP's). */
    recordSuccess(accountKey: string): void {
      failures.delete(accountKey);
    },
  };
}

/** What sign-in asks of its counters, in memory or in Redis (each method may answer later). */
export interface SignInLimits {
  /** Seconds until the next attempt is allowed, or 0 when it is allowed now. */
  retryAfterSeconds(keys: string[]): number | Promise<number>;
  recordFailure(keys: string[]): void | Promise<void>;
  /** A successful sign-in clears the account's count (not the IP's). */
  recordSuccess(accountKey: string): void | Promise<void>;
}

/** Failures within the window (a sorted set scored by time, trimmed first); the wait until the oldest leaves it, when full. */
const WAIT_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
local wait = 0
for _, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if redis.call('ZCARD', key) >= max then
    local oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
    wait = math.max(wait, oldest + window - now)
  end
end
return wait
`;

const FAILURE_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
for _, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  redis.call('ZADD', key, now, ARGV[3])
  redis.call('PEXPIRE', key, window)
end
return 0
`;

/**
 * The same sliding windows in Redis (`--redis-url`), shared by every process:
 * one script run per decision. Without an answer from Redis an attempt is
 * allowed and a failure not counted (the outage is logged by the client).
 */
export function createRedisSignInLimiter(
  options: { maxFailures: number; windowMs: number; enabled: boolean },
  redis: Redis,
  now: () => number = Date.now,
  prefix = 'agentdir:sign-in:',
): SignInLimits {
  const keysOf = (keys: string[]) => keys.map((key) => `${prefix}${key}`);
  return {
    async retryAfterSeconds(keys) {
      if (!options.enabled) return 0;
      try {
        const waitMs = Number(await redis.eval(WAIT_SCRIPT, keys.length, ...keysOf(keys), now(), options.windowMs, options.maxFailures));
        return waitMs > 0 ? Math.ceil(waitMs / 1000) : 0;
      } catch {
        return 0;
      }
    },
    async recordFailure(keys) {
      if (!options.enabled) return;
      const time = now();
      await redis
        .eval(FAILURE_SCRIPT, keys.length, ...keysOf(keys), time, options.windowMs, `${time}:${randomUUID()}`)
        .catch(() => undefined);
    },
    async recordSuccess(accountKey) {
      await redis.del(`${prefix}${accountKey}`).catch(() => undefined);
    },
  };
}
