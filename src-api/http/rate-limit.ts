import { createHash } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { Redis } from 'ioredis';
import type { RateLimitConfig } from '../config';

/** Which budget a route spends from: reads (per IP, or per key) or writes (per IP). */
export type RateLimitPolicy = 'reads' | 'writes';

export interface RateLimitDecision {
  allowed: boolean;
  /** Policy name as reported in the RateLimit headers. */
  name: string;
  quota: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  windowSeconds: number;
}

interface Window {
  count: number;
  resetAt: number;
}

/** Counts requests against the limits: in this process's memory, or in Redis for every process at once. */
export interface RateLimits {
  /** Counts one request from `client` (an IP bucket, or an API key id for keyed reads) and says whether it is allowed. */
  hit(policy: RateLimitPolicy, client: string, keyed: boolean): RateLimitDecision | Promise<RateLimitDecision>;
}

/** The budget a request spends from, as the headers name it. */
function budgetOf(config: RateLimitConfig, policy: RateLimitPolicy, keyed: boolean): { name: string; quota: number } {
  if (policy === 'writes') return { name: 'writes', quota: config.writes };
  return keyed ? { name: 'reads-key', quota: config.keyedReads } : { name: 'reads', quota: config.anonymousReads };
}

/**
 * Fixed-window counters in memory, one per (policy, client). Hand-written
 * because the contract's IETF structured headers (`RateLimit-Policy:
 * "writes";q=20;w=60`, `RateLimit: "writes";r=0;t=41`) are not what
 * @fastify/rate-limit emits.
 */
export function createRateLimiter(config: RateLimitConfig, now: () => number = Date.now) {
  // Insertion order is window-start order (a renewed window is re-inserted), so the first entry is the oldest.
  const windows = new Map<string, Window>();
  let nextSweep = now() + config.windowMs;

  const sweep = (time: number, force = false): void => {
    if (time < nextSweep && !force) return;
    for (const [key, window] of windows) if (window.resetAt <= time) windows.delete(key);
    nextSweep = time + config.windowMs;
  };

  /** Room for one more counter: expired windows go first, then the oldest live one (see RateLimitConfig.maxClients). */
  const makeRoom = (time: number): void => {
    if (windows.size < config.maxClients) return;
    sweep(time, true);
    while (windows.size >= config.maxClients) {
      const oldest = windows.keys().next().value;
      if (oldest === undefined) break;
      windows.delete(oldest);
    }
  };

  return {
    /** Counts one request from `client` (an IP, or an API key id for keyed reads). */
    hit(policy: RateLimitPolicy, client: string, keyed: boolean): RateLimitDecision {
      const time = now();
      sweep(time);
      const { name, quota } = budgetOf(config, policy, keyed);
      const mapKey = `${name}\u0000${client}`;
      let window = windows.get(mapKey);
      if (!window || window.resetAt <= time) {
        if (window) windows.delete(mapKey);
        else makeRoom(time);
        window = { count: 0, resetAt: time + config.windowMs };
        windows.set(mapKey, window);
      }
      const allowed = window.count < quota;
      if (allowed) window.count++;
      return {
        allowed,
        name,
        quota,
        remaining: quota - window.count,
        resetSeconds: Math.max(1, Math.ceil((window.resetAt - time) / 1000)),
        windowSeconds: Math.ceil(config.windowMs / 1000),
      };
    },

    /** Counters held now (bounded by maxClients). */
    get size(): number {
      return windows.size;
    },
  };
}

/**
 * One fixed window in Redis, decided atomically: count the request if the
 * window has room, start the window's expiry with its first request.
 * Returns {allowed 0|1, count in window, milliseconds left}.
 */
const WINDOW_SCRIPT = `
local quota = tonumber(ARGV[1])
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local allowed = 0
if count < quota then
  count = redis.call('INCR', KEYS[1])
  allowed = 1
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {allowed, count, ttl}
`;

/**
 * The same fixed windows, counted in Redis (`--redis-url`): exact across every
 * process on it, one script run per decision. Without an answer from Redis
 * (an outage) a request is let through and the outage logged by the client:
 * the directory stays up, unlimited, until Redis is back.
 */
export function createRedisRateLimiter(config: RateLimitConfig, redis: Redis, prefix = 'agentdir:rate:'): RateLimits {
  const windowSeconds = Math.ceil(config.windowMs / 1000);
  return {
    async hit(policy, client, keyed) {
      const { name, quota } = budgetOf(config, policy, keyed);
      let result: [number, number, number];
      try {
        result = (await redis.eval(WINDOW_SCRIPT, 1, `${prefix}${name}:${client}`, quota, config.windowMs)) as [number, number, number];
      } catch {
        return { allowed: true, name, quota, remaining: quota, resetSeconds: windowSeconds, windowSeconds };
      }
      const [allowed, count, ttl] = result;
      return {
        allowed: allowed === 1,
        name,
        quota,
        remaining: Math.max(0, quota - count),
        resetSeconds: Math.max(1, Math.ceil(ttl / 1000)),
        windowSeconds,
      };
    },
  };
}

/**
 * The bucket an address counts in: an IPv4 address on its own, an IPv6 address by its /64 (one
 * subscriber's network usually holds a whole /64, so per-address counting would be no limit at all).
 * IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
export function clientBucket(address: string): string {
  const known = knownBuckets.get(address);
  if (known !== undefined) return known;
  const bucket = bucketOf(address);
  if (knownBuckets.size >= KNOWN_BUCKETS_MAX) knownBuckets.clear();
  knownBuckets.set(address, bucket);
  return bucket;
}

/**
 * Buckets of the addresses seen lately: every limited request asks, and ipaddr's parse costs 1-2 µs for an
 * IPv4 address, 5-9 µs for an IPv6 or IPv4-mapped one (what a dual-stack listener sees).
 */
const knownBuckets = new Map<string, string>();
/** Bounded: past this many addresses, the answers start afresh. */
const KNOWN_BUCKETS_MAX = 4096;

function bucketOf(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(':')}::/64`;
}

/**
 * The client identity the quotas against abuse count by (pending claims and submissions, one
 * review per agent): the address's bucket, hashed, so rows never store the address itself.
 */
export function quotaClientKey(address: string): string {
  return createHash('sha256').update(clientBucket(address)).digest('hex');
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return {
    'RateLimit-Policy': `"${decision.name}";q=${decision.quota};w=${decision.windowSeconds}`,
    RateLimit: `"${decision.name}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}
