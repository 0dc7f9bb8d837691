import { Command, InvalidArgumentError, Option } from 'commander';
import {
  configFromEnv,
  createConfig,
  parseMetricsAccess,
  parseOnOff,
  parsePort,
  parseDatabaseUrl,
  parsePublicUrl,
  parseRedisUrl,
  parseTrustProxy,
  type ConfigOverrides,
  type MetricsAccess,
  type TrustProxy,
} from './config';
import { consoleExtensions } from './console/console.extensions';
import { capHeapGrowth } from './lib/heap-growth';
import { startServer } from './server';
import path from 'node:path';

/** `npm run serve`: the REST API and the console's web build, without Electron. */
async function main(argv: string[]): Promise<void> {
  const program = new Command('serve')
    .description('Serve the Agent Directory REST API (and the console) over HTTP')
    .option('--host <host>', 'interface to listen on (default 127.0.0.1, env AGENTDIR_HOST)')
    .option('--port <port>', 'port to listen on (default 8787, env AGENTDIR_PORT)', (value) => wrap(() => parsePort(value, '--port')))
    .option('--data-dir <dir>', 'folder of the SQLite database (default ./data, env AGENTDIR_DATA_DIR)')
    .option(
      '--database <url>',
      "the database: sqlite:<path> (default: the data dir's file) or postgres://… (env AGENTDIR_DATABASE_URL)",
      (value) => wrap(() => parseDatabaseUrl(value, '--database')),
    )
    .option('--no-demo-data', 'do not seed the demo directory into an empty database')
    .option(
      '--trust-proxy [n|cidr,…]',
      'take the client IP from X-Forwarded-For behind N proxies (default 1) or behind proxies at these addresses/CIDR ranges',
      (value) => wrap(() => parseTrustProxy(value, '--trust-proxy')),
    )
    .option('--allow-private-urls', 'let claim checks and webhooks reach private and loopback addresses (local testing)')
    .addOption(
      new Option('--rate-limit <on|off>', 'turn the rate limits off, e.g. for benchmarks (env AGENTDIR_RATE_LIMIT)').argParser((value) =>
        wrap(() => parseOnOff(value, '--rate-limit')),
      ),
    )
    .addOption(
      new Option(
        '--search-cache <on|off>',
        'keep answers to repeated searches until the next change (default on, env AGENTDIR_SEARCH_CACHE)',
      ).argParser((value) => wrap(() => parseOnOff(value, '--search-cache'))),
    )
    .addOption(
      new Option(
        '--batch-answers <on|off>',
        'write search answers to the requests read in one turn of the event loop together, at its end (default on, env AGENTDIR_BATCH_ANSWERS)',
      ).argParser((value) => wrap(() => parseOnOff(value, '--batch-answers'))),
    )
    .option('--log-requests', 'log every request to stdout')
    .addOption(
      new Option(
        '--metrics <local|token|off>',
        'who may read GET /metrics (default local: loopback or the admin token; env AGENTDIR_METRICS)',
      ).argParser((value) => wrap(() => parseMetricsAccess(value, '--metrics'))),
    )
    .option(
      '--smtp-url <url>',
      'send mail through this SMTP server, smtp://user:pass@host:port (env AGENTDIR_SMTP_URL); without it mails are .eml files in <data-dir>/mail/',
    )
    .option(
      '--redis-url <url>',
      'count rate limits and sign-in attempts in this Redis, shared by every process (env AGENTDIR_REDIS_URL)',
      (value) => wrap(() => parseRedisUrl(value, '--redis-url')),
    )
    .option('--mail-from <address>', 'the From address of mails (env AGENTDIR_MAIL_FROM)')
    .option('--public-url <url>', 'base of the links in mails (default http://<host>:<port>, env AGENTDIR_PUBLIC_URL)', (value) =>
      wrap(() => parsePublicUrl(value, '--public-url')),
    )
    .showHelpAfterError()
    .parse(argv, { from: 'user' });

  const flags = program.opts<{
    host?: string;
    port?: number;
    dataDir?: string;
    demoData: boolean;
    trustProxy?: TrustProxy | true;
    allowPrivateUrls?: boolean;
    rateLimit?: boolean;
    searchCache?: boolean;
    batchAnswers?: boolean;
    logRequests?: boolean;
    metrics?: MetricsAccess;
    smtpUrl?: string;
    mailFrom?: string;
    publicUrl?: string;
    redisUrl?: string;
    database?: string;
  }>();

  const fromEnv = configFromEnv(process.env);
  const overrides: ConfigOverrides = {
    ...fromEnv,
    ...(flags.host !== undefined && { host: flags.host }),
    ...(flags.port !== undefined && { port: flags.port }),
    ...(flags.dataDir !== undefined && { dataDir: path.resolve(flags.dataDir) }),
    ...(flags.demoData === false && { demoData: false }),
    ...(flags.trustProxy !== undefined && { trustProxy: flags.trustProxy === true ? 1 : flags.trustProxy }),
    ...(flags.allowPrivateUrls && { allowPrivateUrls: true }),
    ...(flags.logRequests && { logRequests: true }),
    ...(flags.searchCache !== undefined && { searchCache: flags.searchCache }),
    ...(flags.metrics !== undefined && { metrics: flags.metrics }),
    ...(flags.publicUrl !== undefined && { publicUrl: flags.publicUrl }),
    ...(flags.redisUrl !== undefined && { redisUrl: flags.redisUrl }),
    ...(flags.database !== undefined && { databaseUrl: flags.database }),
    rateLimit: { ...fromEnv.rateLimit, ...(flags.rateLimit !== undefined && { enabled: flags.rateLimit }) },
    transport: { ...fromEnv.transport, ...(flags.batchAnswers !== undefined && { batchAnswers: flags.batchAnswers }) },
    mail: {
      ...fromEnv.mail,
      ...(flags.smtpUrl !== undefined && { smtpUrl: flags.smtpUrl }),
      ...(flags.mailFrom !== undefined && { from: flags.mailFrom }),
    },
  };
  const config = createConfig(overrides);
  // Peak memory under load: see heap-growth.ts.
  capHeapGrowth();
  const server = await startServer(config, { extensions: consoleExtensions });

  console.log(`Agent Directory API: ${server.apiBaseUrl}`);
  console.log(`Console: ${server.origin}/console`);
  console.log(
    `Console sign-in token: ${config.adminToken ? 'the value of AGENTDIR_ADMIN_TOKEN' : `in ${path.join(config.dataDir, 'admin-token')}`}`,
  );
  console.log(`API docs: ${server.apiBaseUrl}/docs`);
  console.log(
    `Mail: ${config.mail.smtpUrl ? `through ${redactSmtpUrl(config.mail.smtpUrl)}` : `written as .eml files to ${path.join(config.dataDir, 'mail')}`}`,
  );

  const shutdown = (signal: string) => {
    console.log(`${signal} received, shutting down`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

/** The SMTP URL without its password, for the start-up line. */
function redactSmtpUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'the configured SMTP server';
  }
}

function wrap<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`serve: ${message}`);
  process.exit(1);
});
