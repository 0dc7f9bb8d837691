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
  /**
   * Connections the kernel may hold for us before we accept them (listen's backlog; Linux caps it at
   * net.core.somaxconn). Node's 511 overflows in a burst of new connections while the event loop is
   * busy, and an overflowed connection waits for the kernel's SYN-ACK retries: seconds to a minute.
   */
  listenBacklog: z.number().int().positive(),
  /** Search answers written together at the end of the event loop's turn (`installAnswerBatching`); off only for A/B measurements. */
  batchAnswers: z.boolean(),
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
  /** How many of them one endpoint may hold (every process counted), so a slow or failing endpoint cannot take every slot. */
  perEndpointConcurrency: z.number().int().positive(),
  /** How often the dispatcher looks for due deliveries when idle. */
  pollIntervalMs: z.number().int().positive(),
  /** Consecutive failed deliveries after which an endpoint is disabled. */
  disableAfterFailures: z.number().int().positive(),
});

export const METRICS_ACCESS = ['local', 'token', 'off'] as const;
export type MetricsAccess = (typeof METRICS_ACCESS)[number];
export const mailConfigSchema = z.object({
  /** smtp://user:pass@host:port (smtps:// for TLS); undefined writes every mail as an .eml file into <dataDir>/mail/. */
  smtpUrl: z.string().min(1).optional(),
  /** The From address of every mail. */
  from: z.string().min(3),
  /** Delays before each retry of a mail that could not be handed over, in milliseconds. */
  retryDelaysMs: z.array(z.number().int().nonnegative()),
  /** How often the mail worker looks for due mail when idle (it also wakes when mail is queued here). */
  pollIntervalMs: z.number().int().positive(),
  /** Deadline of one SMTP hand-over (connect, greeting and each command). */
  timeoutMs: z.number().int().positive(),
});

export const accountsConfigSchema = z.object({
  /** A session ends after this long without a request. */
  sessionIdleMs: z.number().int().positive(),
  /** …and this long after sign-in, whatever happens. */
  sessionAbsoluteMs: z.number().int().positive(),
  /** Failed sign-ins per account or per IP within `signInWindowMs` before 429. */
  signInMaxFailures: z.number().int().positive(),
  signInWindowMs: z.number().int().positive(),
  /** One review per agent per account (or per IP without one) within this window. */
  reviewQuotaMs: z.number().int().positive(),
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
  /**
   * Redis (`redis://…` or `rediss://…`) holding the rate-limit and sign-in counters, shared by every process
   * on it (contract section 8); undefined: counted in this process's memory.
   */
  redisUrl: z.string().optional(),
  /**
   * `--database URL` (contract section 8): `sqlite:<path>` or `postgres://…`; undefined: SQLite in the data dir
   * (`databaseTarget`).
   */
  databaseUrl: z.string().optional(),
  transport: transportConfigSchema,
  webhooks: webhookConfigSchema,
  /** Bearer token for the admin tRPC API; undefined means "read or create <dataDir>/admin-token". */
  adminToken: z.string().min(16).optional(),
  /** Log requests (pino) to stdout. */
  logRequests: z.boolean(),
  /** Deadline of one fetch of a claim's well-known file. */
  claimCheckTimeoutMs: z.number().int().positive(),
  /** Fetches of user-given URLs (claim proofs, Agent Cards) in flight at once (services.safeFetch); more wait for a slot within their deadline, so hostile targets cannot pile up sockets. */
  claimCheckConcurrency: z.number().int().positive(),
  /** Longest time /stats may serve a cached answer while nothing changed (the change cursor invalidates it at once). */
  statsCacheTtlMs: z.number().int().nonnegative(),
  /**
   * Keep the answers to repeated searches (up to 1,000) until the next change to any agent: the change
   * cursor empties the cache, so a write is never answered from it. Off: every search is computed.
   */
  searchCache: z.boolean(),
  /**
   * Listed agents whose serialized profiles are kept in memory (about 0.85 KB each, outside the JS heap); past it, the
   * oldest go and reads fall back to SQLite. The default holds a directory of 1,000,000 agents whole (~0.9 GB): at that
   * size a cap of 150,000 sent most reads by id, bulk reads and search hits to SQLite (~20 µs a row to read, ~6 to
   * serialize): the bench's by-id reads ran at 4,882 req/s, against 16,286 with every profile in memory.
   */
  profileCacheEntries: z.number().int().positive(),
  /** Who may read GET /metrics: loopback clients or the admin token (`local`), the admin token only (`token`), nobody (`off`). */
  metrics: z.enum(METRICS_ACCESS),
  /** DNS servers (`ip:port` or `ip`) for our own lookups (claim TXT records); empty: the system's servers. */
  dnsServers: z.array(z.string().min(1)),
  /** Deadline of one DNS query to those servers. */
  dnsTimeoutMs: z.number().int().positive(),
  /** Raw-file origins of the code forges by source host, e.g. {"github.com":"http://127.0.0.1:9000/gh"} (tests); empty: the real ones. */
  forgeRawBases: z.record(z.string(), z.url({ protocol: /^https?$/ })),
  /** How often verified ownership is re-checked. */
  ownershipRecheckIntervalMs: z.number().int().positive(),
  /** Failed re-checks in a row after which the agent loses its verified mark. */
  ownershipRecheckStrikes: z.number().int().positive(),
  mail: mailConfigSchema,
  /** Origin (and optional path) of links in mails; undefined means http://<host>:<port> as listened on. */
  publicUrl: z
    .string()
    .url()
    .refine((value) => /^https?:\/\//.test(value), 'must be an http or https URL')
    .optional(),
  accounts: accountsConfigSchema,
});

export type Config = z.infer<typeof configSchema>;
export type RateLimitConfig = z.infer<typeof rateLimitConfigSchema>;
export type TransportConfig = z.infer<typeof transportConfigSchema>;
export type TrustProxy = z.infer<typeof trustProxySchema>;
export type WebhookConfig = z.infer<typeof webhookConfigSchema>;
export type MailConfig = z.infer<typeof mailConfigSchema>;
export type AccountsConfig = z.infer<typeof accountsConfigSchema>;

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
    listenBacklog: 4096,
    batchAnswers: true,
  },
  webhooks: {
    retryDelaysMs: DEFAULT_RETRY_DELAYS_MS,
    jitter: 0.2,
    timeoutMs: 10_000,
    concurrency: 8,
    perEndpointConcurrency: 4,
    pollIntervalMs: 1_000,
    disableAfterFailures: 50,
  },
  adminToken: undefined,
  logRequests: false,
  claimCheckTimeoutMs: 5_000,
  claimCheckConcurrency: 8,
  statsCacheTtlMs: 60_000,
  searchCache: true,
  profileCacheEntries: 1_100_000,
  metrics: 'local',
  dnsServers: [],
  dnsTimeoutMs: 3_000,
  forgeRawBases: {},
  ownershipRecheckIntervalMs: 7 * 24 * HOUR,
  ownershipRecheckStrikes: 3,
  mail: {
    smtpUrl: undefined,
    from: 'Agent Directory <no-reply@agent-directory.localhost>',
    retryDelaysMs: [1 * MINUTE, 5 * MINUTE, 15 * MINUTE, 1 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR],
    pollIntervalMs: 2_000,
    timeoutMs: 15_000,
  },
  publicUrl: undefined,
  accounts: {
    sessionIdleMs: 7 * 24 * HOUR,
    sessionAbsoluteMs: 30 * 24 * HOUR,
    signInMaxFailures: 10,
    signInWindowMs: 15 * MINUTE,
    reviewQuotaMs: 24 * HOUR,
  },
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
    mail: { ...defaultConfig.mail, ...overrides.mail },
    accounts: { ...defaultConfig.accounts, ...overrides.accounts },
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
  if (env.AGENTDIR_BATCH_ANSWERS) {
    overrides.transport = { batchAnswers: parseOnOff(env.AGENTDIR_BATCH_ANSWERS, 'AGENTDIR_BATCH_ANSWERS') };
  }
  if (env.AGENTDIR_SEARCH_CACHE) overrides.searchCache = parseOnOff(env.AGENTDIR_SEARCH_CACHE, 'AGENTDIR_SEARCH_CACHE');
  if (env.AGENTDIR_METRICS) overrides.metrics = parseMetricsAccess(env.AGENTDIR_METRICS, 'AGENTDIR_METRICS');
  if (env.AGENTDIR_DNS_SERVERS) overrides.dnsServers = parseDnsServers(env.AGENTDIR_DNS_SERVERS, 'AGENTDIR_DNS_SERVERS');
  if (env.AGENTDIR_FORGE_RAW_BASES) overrides.forgeRawBases = parseForgeRawBases(env.AGENTDIR_FORGE_RAW_BASES, 'AGENTDIR_FORGE_RAW_BASES');
  if (env.AGENTDIR_OWNERSHIP_RECHECK_INTERVAL_MS) {
    overrides.ownershipRecheckIntervalMs = parsePositiveInt(
      env.AGENTDIR_OWNERSHIP_RECHECK_INTERVAL_MS,
      'AGENTDIR_OWNERSHIP_RECHECK_INTERVAL_MS',
    );
  }
  if (env.AGENTDIR_SMTP_URL || env.AGENTDIR_MAIL_FROM) {
    overrides.mail = {
      ...(env.AGENTDIR_SMTP_URL && { smtpUrl: env.AGENTDIR_SMTP_URL }),
      ...(env.AGENTDIR_MAIL_FROM && { from: env.AGENTDIR_MAIL_FROM }),
    };
  }
  if (env.AGENTDIR_PUBLIC_URL) overrides.publicUrl = parsePublicUrl(env.AGENTDIR_PUBLIC_URL, 'AGENTDIR_PUBLIC_URL');
  if (env.AGENTDIR_REDIS_URL) overrides.redisUrl = parseRedisUrl(env.AGENTDIR_REDIS_URL, 'AGENTDIR_REDIS_URL');
  if (env.AGENTDIR_DATABASE_URL) overrides.databaseUrl = parseDatabaseUrl(env.AGENTDIR_DATABASE_URL, 'AGENTDIR_DATABASE_URL');
  return overrides;
}

/** An http(s) URL without a trailing slash, so links are `${publicUrl}/dashboard/…`. */
export function parsePublicUrl(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${source} must be an absolute http or https URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`${source} must be an http or https URL, got "${value}"`);
  return url.toString().replace(/\/+$/, '');
}

/** The base of links in mails: the configured public URL, else the address the server listens on. */
export function publicUrlOf(config: Pick<Config, 'publicUrl' | 'host' | 'port'>, listeningPort = config.port): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, '');
  const host = config.host.includes(':') ? `[${config.host}]` : config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
  return `http://${host}:${listeningPort}`;
}

/** `1.2.3.4:53,[::1]:5353,8.8.8.8` → the same list, each checked to be an IP with an optional port. */
export function parseDnsServers(value: string, source: string): string[] {
  const servers = value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  for (const server of servers) {
    const match = /^(?:\[([0-9a-f:.]+)\]|([0-9.]+))(?::(\d{1,5}))?$/i.exec(server) ?? /^([0-9a-f:]+)$/i.exec(server);
    const port = match?.[3] === undefined ? 53 : Number(match[3]);
    if (!match || port < 1 || port > 65535)
      throw new ConfigError(`${source} must list DNS servers as ip or ip:port, comma-separated; got "${server}"`);
  }
  if (servers.length === 0) throw new ConfigError(`${source} is empty`);
  return servers;
}

/** JSON object from a forge host to the base URL that replaces its raw-file origin. */
export function parseForgeRawBases(value: string, source: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new ConfigError(`${source} must be a JSON object like {"github.com":"http://127.0.0.1:9000/gh"}`);
  }
  const result = z.record(z.string(), z.url({ protocol: /^https?$/ })).safeParse(parsed);
  if (!result.success) throw new ConfigError(`${source} must map host names to absolute http(s) base URLs`);
  return Object.fromEntries(Object.entries(result.data).map(([host, base]) => [host.toLowerCase(), base.replace(/\/+$/, '')]));
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** `--redis-url` / AGENTDIR_REDIS_URL: redis://[user:password@]host[:port][/db] or rediss:// (TLS). */
export function parseRedisUrl(value: string, source: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || !url.hostname) {
    throw new ConfigError(`${source} must be a redis://host:port URL (or rediss:// for TLS), got "${value}"`);
  }
  return value;
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

/**
 * `--database` / AGENTDIR_DATABASE_URL: `sqlite:<path>` (a relative path from the working directory; returned
 * absolute) or `postgres://user:password@host:port/database` (`postgresql://` too).
 */
export function parseDatabaseUrl(value: string, source: string): string {
  if (value.startsWith('sqlite:')) {
    const file = value.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, ''); // sqlite:///abs/path too
    if (!file) throw new ConfigError(`${source} sqlite: needs the path of the database file, e.g. sqlite:./data/agent-directory.sqlite`);
    return `sqlite:${path.resolve(file)}`;
  }
  if (isPostgresUrl(value)) return value;
  throw new ConfigError(`${source} must be sqlite:<path> or postgres://user:password@host:port/database, got "${value}"`);
}

function isPostgresUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Where the directory is kept: a SQLite file, or a PostgreSQL database. */
export type DatabaseTarget = { dialect: 'sqlite'; file: string } | { dialect: 'postgres'; url: string };

/** `--database sqlite:<path>` or `postgres://…`, else SQLite: `agent-directory.sqlite` in the data dir. */
export function databaseTarget(config: Pick<Config, 'dataDir' | 'databaseUrl'>): DatabaseTarget {
  const url = config.databaseUrl;
  if (url === undefined) return { dialect: 'sqlite', file: path.join(config.dataDir, 'agent-directory.sqlite') };
  if (url.startsWith('sqlite:')) return { dialect: 'sqlite', file: url.slice('sqlite:'.length) };
  return { dialect: 'postgres', url };
}

/**
 * The SQLite file of the directory, for what only SQLite has (backups copy the file). On a postgres://
 * database it throws a ConfigError that says `what` needs SQLite and `instead` what to use.
 */
export function databasePath(
  config: Pick<Config, 'dataDir' | 'databaseUrl'>,
  { what = 'this', instead }: { what?: string; instead?: string } = {},
): string {
  const target = databaseTarget(config);
  if (target.dialect === 'sqlite') return target.file;
  throw new ConfigError(`${what} works on SQLite only, and --database is PostgreSQL${instead ? `: ${instead}` : ''}`);
}
