import type { Redis } from 'ioredis';
import type { Config } from './config';
import type { Db } from './db/client';
import type { Store } from './db/store';
import { sqliteDbOf, sqliteStore } from './db/store-sqlite';
import { createRateLimiter, createRedisRateLimiter } from './http/rate-limit';
import { createBackgroundWork } from './lib/background-work';
import { systemClock, type Clock } from './lib/clock';
import { createDnsResolver, dnsResolverOptions } from './lib/dns-resolver';
import { createIdGenerator, type IdGenerator } from './lib/ids';
import { createPublicUrl } from './lib/public-url';
import { createSafeFetch } from './lib/safe-fetch';
import { createAccountRecords } from './modules/accounts/account-records';
import { createAccountsService } from './modules/accounts/accounts.service';
import { createRedisSignInLimiter, createSignInLimiter } from './modules/accounts/sign-in-limiter';
import { createAgentCardRefresher } from './modules/agents/agent-card-refresh';
import { createAgentWrites } from './modules/agents/agent-writes';
import { createAgentsService } from './modules/agents/agents.service';
import { createAuditService } from './modules/audit/audit.service';
import { createBackupService } from './modules/backup/backup.service';
import { createClaimsService } from './modules/claims/claims.service';
import { createReportsService } from './modules/reports/reports.service';
import { createEditRequestsService } from './modules/owners/edit-requests.service';
import { createOwnersService } from './modules/owners/owners.service';
import { createEventsService } from './modules/events/events.service';
import { createKeyUsage } from './modules/keys/key-usage';
import { createKeysService } from './modules/keys/keys.service';
import { createMailService } from './modules/mail/mail.service';
import { createMailWorker } from './modules/mail/mail.worker';
import { createMarketingService } from './modules/marketing/marketing.service';
import { createPostQueue } from './modules/marketing/post-queue';
import { createNewsletterService } from './modules/newsletter/newsletter.service';
import { createReviewsService } from './modules/reviews/reviews.service';
import { createSearchService } from './modules/search/search.service';
import { createStatsService } from './modules/stats/stats.service';
import { createSubmissionsService } from './modules/submissions/submissions.service';
import { createWebhookDispatcher } from './modules/webhooks/webhooks.dispatcher';
import { createWebhookSender } from './modules/webhooks/webhooks.sender';
import { createWebhooksService } from './modules/webhooks/webhooks.service';

export interface ServiceDeps {
  /**
   * The data-access seam every service runs on, SQLite or PostgreSQL (db/open-store.ts opens the one
   * `--database` names). Give this or `db`.
   */
  store?: Store;
  /** A SQLite connection its caller opened (tests, benches): the services run on `sqliteStore(db)`. */
  db?: Db;
  config: Config;
  clock?: Clock;
  ids?: IdGenerator;
  /** The connected Redis of `--redis-url` (startServer connects it): limits shared by every process. */
  redis?: Redis;
}

/** Every service, wired once; both transports (REST and tRPC) and the CLI use this one object. */
export function createServices({ db: givenDb, store: givenStore, config, clock = systemClock, ids = createIdGenerator(), redis }: ServiceDeps) {
  if (!givenStore && !givenDb) throw new Error('createServices needs a store (or a SQLite db)');
  const store = givenStore ?? sqliteStore(givenDb!);
  // The SQLite connection under the store (SQLite's fast paths, backups): undefined on PostgreSQL.
  const sqliteDb = givenDb ?? sqliteDbOf(store);
  const base = { clock, ids };
  // One resolver for every DNS question the service asks itself (AGENTDIR_DNS_SERVERS).
  const dnsResolver = createDnsResolver(dnsResolverOptions(config));
  // The one fetch of user-given URLs (claim proofs, Agent Cards): public addresses only, resolved
  // by dnsResolver, at most config.claimCheckConcurrency in flight.
  const safeFetch = createSafeFetch({
    resolver: dnsResolver,
    allowPrivate: config.allowPrivateUrls,
    maxConcurrent: config.claimCheckConcurrency,
  });
  const audit = createAuditService({ ...base, store });
  const publicUrl = createPublicUrl(config);
  // Mail: queued in the causing transaction; the worker sends it, and only startServer starts it.
  const mail = createMailService({ ...base, store, config });
  const mailWorker = createMailWorker({ mail, clock, config });
  const events = createEventsService({ ...base, store });
  const keys = createKeysService({ ...base, store, audit });
  const keyUsage = createKeyUsage({ store, clock });
  // Limits (contract section 3): the request windows and failed sign-ins, counted in Redis when there is one, else here.
  const rateLimits = redis ? createRedisRateLimiter(config.rateLimit, redis) : createRateLimiter(config.rateLimit);
  const signInOptions = {
    maxFailures: config.accounts.signInMaxFailures,
    windowMs: config.accounts.signInWindowMs,
    enabled: config.rateLimit.enabled,
  };
  const signInLimits = redis ? createRedisSignInLimiter(signInOptions, redis) : createSignInLimiter(signInOptions);
  const accounts = createAccountsService({ ...base, store, config, mail, publicUrl, audit, signInLimits });
  const accountRecords = createAccountRecords({ store });
  // Closing an account revokes its keys, detaches its records (they stay, without an owner) and removes its endpoints (below).
  accounts.onClose((accountId, actor) => keys.revokeAllOfAccountInTransaction(accountId, actor));
  accounts.onClose((accountId) => accountRecords.detach(accountId));
  // The one write path of agents (the service, `cli import` and the demo seeder): rules, change cursor, events.
  // onCommitted: this process's agent writes reach its readers (the PostgreSQL change cursor) once committed.
  const agentWrites = createAgentWrites({ db: sqliteDb, store, clock, events, onCommitted: () => agents.changed() });
  const agents = createAgentsService({ ...base, store, writes: agentWrites, audit, profileCacheEntries: config.profileCacheEntries });
  // Owned agents show their owner's name: a rename reaches their profiles, a closed owner leaves them ownerless.
  accounts.onRename((accountId, name) => agents.edits.renameOwner(accountId, name));
  accounts.onClose((accountId) => agents.edits.detachOwner(accountId));
  const search = createSearchService({ store, agents, cache: config.searchCache });
  const reviews = createReviewsService({
    ...base,
    store,
    agents,
    events,
    audit,
    quota: { enabled: config.rateLimit.enabled, windowMs: config.accounts.reviewQuotaMs },
  });
  const submissions = createSubmissionsService({ ...base, store, agents, audit, quotas: config.rateLimit.enabled, safeFetch });
  const agentCards = createAgentCardRefresher({ agents, safeFetch, clock });
  const claims = createClaimsService({
    ...base,
    store,
    agents,
    audit,
    events,
    fetch: safeFetch,
    verifyTimeoutMs: config.claimCheckTimeoutMs,
    resolver: dnsResolver,
    forgeRawBases: config.forgeRawBases,
    recheckIntervalMs: config.ownershipRecheckIntervalMs,
    recheckStrikes: config.ownershipRecheckStrikes,
    accountOf: (accountId) => accounts.find(accountId),
    queueMail: (message) => mail.queueInTransaction(message),
    quotas: config.rateLimit.enabled,
  });
  // What owners do to their agents (all through the agents write path), and the queue of their renames.
  const owners = createOwnersService({ ...base, store, agents, audit });
  const editRequests = createEditRequestsService({ store, clock, agents, audit, accountOf: (accountId) => accounts.find(accountId) });
  const reports = createReportsService({ ...base, store, agents, audit, quotas: config.rateLimit.enabled });
  const newsletter = createNewsletterService({ ...base, store, mail, publicUrl, audit });
  const marketing = createMarketingService({ ...base, store, events, audit });
  const postQueue = createPostQueue({ store, marketing });
  // A hidden review is not promoted: the posts generated from it are archived in the hiding transaction.
  reviews.onHidden((review, actor) => marketing.archivePostsOfReviewInTransaction(review.id, { actor }));
  const stats = createStatsService({ store, clock, agents, cacheTtlMs: config.statsCacheTtlMs });
  // Webhooks: endpoints and the delivery log; deliveries are queued by an events listener in the
  // recording transaction. The dispatcher sends them; only startServer starts it (CLI commands never do).
  // Deliveries resolve receivers' names with dnsResolver too (never dns.lookup's thread pool).
  const sendWebhook = createWebhookSender(dnsResolver);
  const webhooks = createWebhooksService({ ...base, store, events, audit, config, send: sendWebhook });
  // In the closing store transaction: the endpoints, their delivery logs and the audit entries go with the account.
  accounts.onClose((accountId, actor) => webhooks.removeAllOfAccount(accountId, actor));
  const webhookDispatcher = createWebhookDispatcher({ queue: webhooks.queue, clock, config, send: sendWebhook });
  const backups = createBackupService({ db: sqliteDb, store, config, clock, audit });
  // Start-up warm-ups and the trust refresh in progress (startServer marks them), for /health's `idle`.
  const background = createBackgroundWork();

  return {
    /** The SQLite connection, for tests and benches that read SQLite directly; on PostgreSQL any use throws "SQLite only". */
    db: sqliteDb ?? sqliteOnlyDb(),
    store,
    config,
    clock,
    ids,
    dnsResolver,
    safeFetch,
    redis,
    rateLimits,
    audit,
    events,
    keys,
    keyUsage,
    accounts,
    accountRecords,
    agentWrites,
    agents,
    search,
    reviews,
    submissions,
    agentCards,
    claims,
    owners,
    editRequests,
    reports,
    newsletter,
    marketing,
    postQueue,
    stats,
    webhooks,
    webhookDispatcher,
    backups,
    publicUrl,
    mail,
    mailWorker,
    background,
  };
}

export type Services = ReturnType<typeof createServices>;

/** A Db whose every use throws: services.db on PostgreSQL, where only SQLite-only tests would reach for it. */
function sqliteOnlyDb(): Db {
  return new Proxy({} as Db, {
    get(_target, key) {
      // Not a thenable, and printable (util.inspect asks for symbols).
      if (typeof key === 'symbol' || key === 'then') return undefined;
      throw new Error(`db.${key}: the synchronous SQLite connection is SQLite only, and this directory is on PostgreSQL; use services.store`);
    },
  });
}

