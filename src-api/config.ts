import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';

/**
 * Everything the API needs to know about its environment, parsed once at
 * start-up and passed down. Entry points (serve, cli, Electron) build it from
 * flags and environment variables; tests build it with `createConfig`.
 */
export const rateLimitConfigSchema = z.object({
  enabled: z.boolean(),
  /** Length of one counting window, in milliseconds. */
  windowMs: z.number().int().positive(),
  /** Read requests per window per IP without an API key. */
  anonymousReads: z.number().int().positive(),
  /** Read requests per window per API key. */
  keyedReads: z.number().int().positive(),
  /** Write requests per window per IP, with or without a key. */
  writes: z.number().int().positive(),
  /**
   * Most (policy, client) counters kept in memory. At the cap, expired windows are swept and then the
   * oldest window is dropped: memory stays bounded; a flood of distinct addresses can at most restart
   * the oldest counters early.
   */
  maxClients: z.number().int().positive(),
});

/** Socket deadlines and limits (contract section 2); tests shorten them. */
export const transportConfigSchema = z.object({
  /** The request line and headers must arrive within this; a silent socket is closed after it too. */
  headersTimeoutMs: z.number().int().positive(),
  /** The whole request, body included, must arrive within this. */
  requestTimeoutMs: z.number().int().positive(),
  /** How often Node checks the two deadlines above. */
  timeoutCheckIntervalMs: z.number().int().positive(),
  /** Request line and headers larger than this are refused with 431. */
  maxHeaderBytes: z.number().int().positive(),
});

/** Which addresses X-Forwarded-For may name the client: false, the number of proxies in front, or the proxies' addresses. */
export const trustProxySchema = z.union([z.literal(false), z.number().int().positive(), z.array(z.string().min(1)).min(1)]);

export const webhookConfigSchema = z.object({
  /** Delays before each retry, in milliseconds (attempt 2 waits delays[0], …). */
  retryDelaysMs: z.array(z.number().int().nonnegative()),
  /** Random spread added to each delay, as a fraction of it (0.2 = ±20 %). */
  jitter: z.number().min(0).max(1),
  /** A response slower than this counts as a failure. */
  timeoutMs: z.number().int().positive(),
  /** How many deliveries are in flight at once. */
  concurrency: z.number().int().positive(),
  /** How often the dispatcher looks for due deliveries when idle. */
  pollIntervalMs: z.number().int().positive(),
  /** Consecutive failed deliveries after which an endpoint is disabled. */
  disableAfterFailures: z.number().int().positive(),
});

export const configSchema = z.object({
  host: z.string().min(1),
  port: z.number().int().min(0).max(65535),
  dataDir: z.string().min(1),
  /** Seed the demo directory when `serve` starts on an empty database. */
  demoData: z.boolean(),
  /**
   * Honour X-Forwarded-For when finding the client IP: `N` trusts the N right-most hops (N proxies in
   * front), a CIDR list trusts hops from those addresses. The client-chosen left-most entry never counts.
   */
  trustProxy: trustProxySchema,
  /** Let claim checks and webhooks reach private and loopback addresses (local tests only). */
  allowPrivateUrls: z.boolean(),
  rateLimit: rateLimitConfigSchema,
  transport: transportConfigSchema,
  webhooks: webhookConfigSchema,
  /** Bearer token for the admin tRPC API; undefined means "read or create <dataDir>/admin-token". */
  adminToken: z.string().min(16).optional(),
  /** Log requests (pino) to stdout. */
  logRequests: z.boolean(),
  /** Deadline of one fetch of a claim's well-known file. */
  claimCheckTimeoutMs: z.number().int().positive(),
  /** Claim checks running at once; more wait for a slot (up to their deadline), so hostile targets cannot pile up sockets. */
  claimCheckConcurrency: z.number().int().positive(),
  /** DNS servers (`ip` or `ip:port`) for outgoing checks; empty means the system's (resolv.conf). */
  dnsServers: z.array(z.string().min(1)),
  /** Deadline of one DNS query attempt; the resolver tries `dnsTries` times. */
  dnsTimeoutMs: z.number().int().positive(),
  dnsTries: z.number().int().positive(),
  /** Longest time /stats may serve a cached answer while nothing changed (the change cursor invalidates it at once). */
  statsCacheTtlMs: z.number().int().nonnegative(),
  /** Listed agents whose serialized profiles are kept in memory (about 0.85 KB each); past it, reads fall back to SQLite. */
  profileCacheEntries: z.number().int().positive(),
});

export type Config = z.infer<typeof configSchema>;
export type RateLimitConfig = z.infer<typeof rateLimitConfigSchema>;
export type TransportConfig = z.infer<typeof transportConfigSchema>;
export type TrustProxy = z.infer<typeof trustProxySchema>;
export type WebhookConfig = z.infer<typeof webhookConfigSchema>;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** About 8 attempts spread over about a day, as the contract says. */
export const DEFAULT_RETRY_DELAYS_MS = [1 * MINUTE, 5 * MINUTE, 15 * MINUTE, 1 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR];

export const defaultConfig: Config = {
  host: '127.0.0.1',
  port: 8787,
  dataDir: path.resolve('data'),
  demoData: true,
  trustProxy: false,
  allowPrivateUrls: false,
  rateLimit: {
    enabled: true,
    windowMs: MINUTE,
    anonymousReads: 100,
    keyedReads: 1000,
    writes: 20,
    maxClients: 100_000,
  },
  transport: {
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    timeoutCheckIntervalMs: 1_000,
    maxHeaderBytes: 16 * 1024,
  },
  webhooks: {
    retryDelaysMs: DEFAULT_RETRY_DELAYS_MS,
    jitter: 0.2,
    timeoutMs: 10_000,
    concurrency: 8,
    pollIntervalMs: 1_000,
    disableAfterFailures: 50,
  },
  adminToken: undefined,
  logRequests: false,
  claimCheckTimeoutMs: 5_000,
  claimCheckConcurrency: 8,
  dnsServers: [],
  dnsTimeoutMs: 2_000,
  dnsTries: 2,
  statsCacheTtlMs: 60_000,
  profileCacheEntries: 150_000,
};

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K] };
export type ConfigOverrides = DeepPartial<Config>;

/** Defaults, then overrides, validated: the single way a Config comes to be. */
export function createConfig(overrides: ConfigOverrides = {}): Config {
  return configSchema.parse({
    ...defaultConfig,
    ...overrides,
    rateLimit: { ...defaultConfig.rateLimit, ...overrides.rateLimit },
    transport: { ...defaultConfig.transport, ...overrides.transport },
    webhooks: { ...defaultConfig.webhooks, ...overrides.webhooks },
  });
}

/** The overrides that the AGENTDIR_* environment variables ask for. Flags are applied on top. */
export function configFromEnv(env: NodeJS.ProcessEnv): ConfigOverrides {
  const overrides: ConfigOverrides = {};
  if (env.AGENTDIR_HOST) overrides.host = env.AGENTDIR_HOST;
  if (env.AGENTDIR_PORT) overrides.port = parsePort(env.AGENTDIR_PORT, 'AGENTDIR_PORT');
  if (env.AGENTDIR_DATA_DIR) overrides.dataDir = path.resolve(env.AGENTDIR_DATA_DIR);
  if (env.AGENTDIR_ADMIN_TOKEN) overrides.adminToken = env.AGENTDIR_ADMIN_TOKEN;
  if (env.AGENTDIR_RATE_LIMIT) overrides.rateLimit = { enabled: parseOnOff(env.AGENTDIR_RATE_LIMIT, 'AGENTDIR_RATE_LIMIT') };
  if (env.AGENTDIR_TRUST_PROXY) overrides.trustProxy = parseTrustProxy(env.AGENTDIR_TRUST_PROXY, 'AGENTDIR_TRUST_PROXY');
  if (env.AGENTDIR_DNS_SERVERS) overrides.dnsServers = parseDnsServers(env.AGENTDIR_DNS_SERVERS, 'AGENTDIR_DNS_SERVERS');
  if (env.AGENTDIR_ALLOW_PRIVATE_URLS) {
    overrides.allowPrivateUrls = parseOnOff(env.AGENTDIR_ALLOW_PRIVATE_URLS, 'AGENTDIR_ALLOW_PRIVATE_URLS');
  }
  if (env.AGENTDIR_RATE_LIMIT_WINDOW_MS) {
    overrides.rateLimit = {
      ...overrides.rateLimit,
      windowMs: parsePositiveInt(env.AGENTDIR_RATE_LIMIT_WINDOW_MS, 'AGENTDIR_RATE_LIMIT_WINDOW_MS'),
    };
  }
  if (env.AGENTDIR_WEBHOOK_RETRY_DELAYS_MS) {
    overrides.webhooks = {
      retryDelaysMs: env.AGENTDIR_WEBHOOK_RETRY_DELAYS_MS.split(',').map((part) =>
        parsePositiveInt(part.trim(), 'AGENTDIR_WEBHOOK_RETRY_DELAYS_MS'),
      ),
    };
  }
  if (env.AGENTDIR_LOG_REQUESTS) overrides.logRequests = parseOnOff(env.AGENTDIR_LOG_REQUESTS, 'AGENTDIR_LOG_REQUESTS');
  if (env.AGENTDIR_PROFILE_CACHE_ENTRIES) {
    overrides.profileCacheEntries = parsePositiveInt(env.AGENTDIR_PROFILE_CACHE_ENTRIES, 'AGENTDIR_PROFILE_CACHE_ENTRIES');
  }
  return overrides;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function parsePort(value: string, source: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`${source} must be a port number from 0 to 65535, got "${value}"`);
  }
  return port;
}

export function parsePositiveInt(value: string, source: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${source} must be a positive integer, got "${value}"`);
  return n;
}

export function parseOnOff(value: string, source: string): boolean {
  const normalized = value.trim().toLowerCase();
  if (['on', 'true', '1', 'yes'].includes(normalized)) return true;
  if (['off', 'false', '0', 'no'].includes(normalized)) return false;
  throw new ConfigError(`${source} must be "on" or "off", got "${value}"`);
}

/**
 * `--trust-proxy` / AGENTDIR_TRUST_PROXY: on (1 proxy), off, a number of proxies, or a comma-separated
 * list of proxy addresses and CIDR ranges.
 */
export function parseTrustProxy(value: string, source: string): TrustProxy {
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    return n === 0 ? false : n;
  }
  if (/^[a-z]+$/i.test(text)) return parseOnOff(text, source) ? 1 : false;
  const entries = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  const bad = entries.find((entry) => !isIpOrCidr(entry));
  if (entries.length === 0 || bad !== undefined) {
    throw new ConfigError(`${source} must be on, off, a number of proxies or a list of addresses/CIDR ranges, got "${value}"`);
  }
  return entries;
}

function isIpOrCidr(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  if (rest.length > 0 || isIP(address) === 0) return false;
  if (bits === undefined) return true;
  const max = isIP(address) === 4 ? 32 : 128;
  return /^\d+$/.test(bits) && Number(bits) <= max;
}

/** AGENTDIR_DNS_SERVERS: comma-separated `ip` or `ip:port` (IPv6 as `[ip]:port`). */
export function parseDnsServers(value: string, source: string): string[] {
  const servers = value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  for (const server of servers) {
    const match = /^(?:\[([^\]]+)\]|([^:]+)|([0-9a-fA-F:]+))(?::(\d{1,5}))?$/.exec(server);
    const address = match?.[1] ?? match?.[2] ?? match?.[3] ?? '';
    if (!match || isIP(address) === 0 || (match[4] !== undefined && Number(match[4]) > 65535)) {
      throw new ConfigError(`${source} must be comma-separated ip:port entries, got "${server}"`);
    }
  }
  return servers;
}

export function databasePath(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'agent-directory.sqlite');
}
