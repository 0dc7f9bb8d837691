import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Failed sign-ins per account (by e-mail, known or not, so the answer says
 * nothing about who exists) and per client IP in a sliding window: 10 in 15
 * minutes by default. Counted in this process's memory, or in Redis shared by
 * every process (`--redis-url`).
 *
 * An attempt is counted when it starts, in the same step as the check, and
 * taken back when the password turns out right: concurrent attempts (on one
 * process or several) can never get past the limit together while their
 * passwords are being checked.
 */
export interface SignInLimits {
  /** Checks the limit and counts the attempt: the seconds to wait when over it, else the attempt's id. */
  begin(keys: string[]): Promise<SignInStart> | SignInStart;
  /**
   * The password was right: the attempt is no failure. `clearAccount`: the sign-in succeeded, so the
   * account's count (keys[0]) starts again; the IP's keeps its earlier failures.
   */
  settle(keys: string[], attempt: string, clearAccount: boolean): Promise<void> | void;
}

export type SignInStart = { wait: number } | { attempt: string };

export interface SignInLimitOptions {
  maxFailures: number;
  windowMs: number;
  enabled: boolean;
}

interface Entry {
  at: number;
  attempt: string;
}

export function createSignInLimiter(options: SignInLimitOptions, now: () => number = Date.now): SignInLimits {
  const failures = new Map<string, Entry[]>();

  const recent = (key: string, time: number): Entry[] => {
    const list = (failures.get(key) ?? []).filter((entry) => entry.at > time - options.windowMs);
    if (list.length === 0) failures.delete(key);
    else failures.set(key, list);
    return list;
  };

  return {
    begin(keys) {
      const attempt = randomUUID();
      if (!options.enabled) return { attempt };
      const time = now();
      let wait = 0;
      for (const key of keys) {
        const list = recent(key, time);
        if (list.length >= options.maxFailures) wait = Math.max(wait, Math.ceil((list[0]!.at + options.windowMs - time) / 1000));
      }
      if (wait > 0) return { wait };
      for (const key of keys) failures.set(key, [...recent(key, time), { at: time, attempt }]);
      if (failures.size > 100_000) for (const key of failures.keys()) recent(key, time); // drop stale keys under a flood
      return { attempt };
    },

    settle(keys, attempt, clearAccount) {
      keys.forEach((key, i) => {
        if (i === 0 && clearAccount) failures.delete(key);
        else {
          const list = failures.get(key)?.filter((entry) => entry.attempt !== attempt);
          if (list?.length) failures.set(key, list);
          else failures.delete(key);
        }
      });
    },
  };
}

/**
 * Check and count in one step: trim each key's sorted set (scored by time) to the window; when one is
 * full, the wait until its oldest entry leaves it; else the attempt is added to every key.
 */
const BEGIN_SCRIPT = `
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
if wait > 0 then return wait end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, window)
end
return 0
`;

const SETTLE_SCRIPT = `
for i, key in ipairs(KEYS) do
  if i == 1 and ARGV[2] == '1' then redis.call('DEL', key) else redis.call('ZREM', key, ARGV[1]) end
end
return 0
`;

/**
 * The same windows in Redis, shared by every process: one script run per
 * decision. Without an answer from Redis an attempt is allowed (the outage is
 * logged by the client), so an outage never locks everybody out.
 */
export function createRedisSignInLimiter(
  options: SignInLimitOptions,
  redis: Redis,
  now: () => number = Date.now,
  prefix = 'agentdir:sign-in:',
): SignInLimits {
  const keysOf = (keys: string[]) => keys.map((key) => `${prefix}${key}`);
  return {
    async begin(keys) {
      const attempt = randomUUID();
      if (!options.enabled) return { attempt };
      try {
        const waitMs = Number(
          await redis.eval(BEGIN_SCRIPT, keys.length, ...keysOf(keys), now(), options.windowMs, options.maxFailures, attempt),
        );
        return waitMs > 0 ? { wait: Math.ceil(waitMs / 1000) } : { attempt };
      } catch {
        return { attempt };
      }
    },
    async settle(keys, attempt, clearAccount) {
      if (!options.enabled) return;
      await redis.eval(SETTLE_SCRIPT, keys.length, ...keysOf(keys), attempt, clearAccount ? '1' : '0').catch(() => undefined);
    },
  };
}
