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
});

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

export const METRICS_ACCESS = ['local', 'token', 'off'] as const;
export type MetricsAccess = (typeof METRICS_ACCESS)[number];

export const configSchema = z.object({
  host: z.string().min(1),
  port: z.number().int().min(0).max(65535),
  dataDir: z.string().min(1),
  /** Seed the demo directory when `serve` starts on an empty database. */
  demoData: z.boolean(),
  /** Honour X-Forwarded-For when finding the client IP. */
  trustProxy: z.boolean(),
  /** Let claim checks and webhooks reach private and loopback addresses (local tests only). */
  allowPrivateUrls: z.boolean(),
  rateLimit: rateLimitConfigSchema,
  webhooks: webhookConfigSchema,
  /** Bearer token for the admin tRPC API; undefined means "read or create <dataDir>/admin-token". */
  adminToken: z.string().min(16).optional(),
  /** Log requests (pino) to stdout. */
  logRequests: z.boolean(),
  /** Deadline of one fetch of a claim's well-known file. */
  claimCheckTimeoutMs: z.number().int().positive(),
  /** Listed agents whose serialized profiles are kept in memory (about 0.85 KB each); past it, reads fall back to SQLite. */
  profileCacheEntries: z.number().int().positive(),
  /** Who may read GET /metrics: loopback clients or the admin token (`local`), the admin token only (`token`), nobody (`off`). */
  metrics: z.enum(METRICS_ACCESS),
});

export type Config = z.infer<typeof configSchema>;
export type RateLimitConfig = z.infer<typeof rateLimitConfigSchema>;
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
  profileCacheEntries: 150_000,
  metrics: 'local',
};

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? (T[K] extends unknown[] ? T[K] : DeepPartial<T[K]>) : T[K] };
export type ConfigOverrides = DeepPartial<Config>;

/** Defaults, then overrides, validated: the single way a Config comes to be. */
export function createConfig(overrides: ConfigOverrides = {}): Config {
  return configSchema.parse({
    ...defaultConfig,
    ...overrides,
    rateLimit: { ...defaultConfig.rateLimit, ...overrides.rateLimit },
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
  if (env.AGENTDIR_TRUST_PROXY) overrides.trustProxy = parseOnOff(env.AGENTDIR_TRUST_PROXY, 'AGENTDIR_TRUST_PROXY');
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
  if (env.AGENTDIR_METRICS) overrides.metrics = parseMetricsAccess(env.AGENTDIR_METRICS, 'AGENTDIR_METRICS');
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

export function parseMetricsAccess(value: string, source: string): MetricsAccess {
  const normalized = value.trim().toLowerCase();
  const access = METRICS_ACCESS.find((candidate) => candidate === normalized);
  if (!access) throw new ConfigError(`${source} must be one of ${METRICS_ACCESS.join(', ')}, got "${value}"`);
  return access;
}

export function databasePath(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'agent-directory.sqlite');
}
