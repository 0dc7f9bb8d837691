import { randomBytes } from 'node:crypto';
import { and, asc, count, eq, isNull, lte, ne, sql } from 'drizzle-orm';
import type { Config } from '../../config';
import { inTransaction, type Db } from '../../db/client';
import type { Store } from '../../db/store';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { AuditService } from '../audit/audit.service';
import { events, type EventType } from '../events/events.table';
import { createFanOut } from './webhooks.fan-out';
import { createOutcomes } from './webhooks.outcome';
import { buildWebhookRequest, type WebhookEventSource, type WebhookRequest } from './webhooks.payload';
import { param, statement } from './webhooks.statement';
import { webhookAttempts, webhookDeliveries, webhookEndpoints, type DeliveryStatus, type WebhookEndpointRow } from './webhooks.table';

/**
 * The delivery queue in SQLite: fan-out of events into deliveries, atomic
 * claiming under a lease, and recording what each attempt came to (retry
 * schedule, 410 and failure-count disabling). Every process that opens the
 * data dir works on the same rows; leases keep two of them from sending one
 * delivery at the same time, and let a restarted process take over the
 * deliveries a crashed one was sending.
 */

/** Added to the send deadline to get the lease: room for a slow event loop before another process may take over. */
export const LEASE_MARGIN_MS = 5_000;

/** Written into the log of an attempt whose process stopped before it learned the answer. */
export const INTERRUPTED_ERROR = 'interrupted: the sending process stopped before the result was recorded';

export { SYSTEM_ACTOR } from './webhooks.outcome';

/** One attempt of one delivery, claimed and ready to send. */
export interface ClaimedAttempt {
  deliveryId: string;
  attemptId: string;
  attemptNumber: number;
  endpointId: string;
  eventId: string;
  eventType: EventType;
  isTest: boolean;
  request: WebhookRequest;
}

export interface DeliveryQueueDeps {
  db: Db;
  /** Everything but the claim (claimDue, nextDueAt: still sync on db) runs through it. */
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  audit: AuditService;
  config: Pick<Config, 'webhooks'>;
  /** Source of the retry jitter, in [0, 1). */
  random?: () => number;
}

/** A lease owner id, random per process (and per test send), so a restarted process never mistakes old leases for its own. */
export function newLeaseOwner(kind = 'dispatcher'): string {
  return `${kind}-${process.pid}-${randomBytes(6).toString('hex')}`;
}

export function createDeliveryQueue({ db, store, clock, ids, audit, config, random = Math.random }: DeliveryQueueDeps) {
  const settings = config.webhooks;
  const maxAttempts = 1 + settings.retryDelaysMs.length;
  const leaseMs = settings.timeoutMs + LEASE_MARGIN_MS;
  const queuedListeners = new Set<() => void>();
  // The claim's statements, prepared on first use (a PostgreSQL store has no Db; its claims are not ported yet).
  let prepared: ReturnType<typeof prepareStatements> | undefined;
  const statements = () => (prepared ??= prepareStatements(db));
  const fanOut = createFanOut({ db, store, clock, ids, announce: () => announceQueued() });

  const isoIn = (ms: number): string => new Date(clock.now().getTime() + ms).toISOString();

  /**
   * Listeners run on the next turn of the event loop: after the enqueueing
   * transaction has committed (better-sqlite3 transactions are synchronous).
   * A burst of events in one transaction makes one announcement.
   */
  let announcing = false;
  const announceQueued = (): void => {
    if (announcing || queuedListeners.size === 0) return;
    announcing = true;
    setImmediate(() => {
      announcing = false;
      for (const listener of queuedListeners) listener();
    });
  };

  const insertAttempt = (claimed: Omit<ClaimedAttempt, 'attemptId'>, startedAt: string): ClaimedAttempt => {
    const attemptId = ids.next('att');
    statements().insertAttempt.run({
      id: attemptId,
      deliveryId: claimed.deliveryId,
      attemptNumber: claimed.attemptNumber,
      requestHeaders: claimed.request.headers,
      requestBody: claimed.request.body,
      startedAt,
    });
    return { ...claimed, attemptId };
  };

  /** The attempt a crashed process started but never finished gets an explicit "interrupted" in the log. */
  const markUnfinishedAttemptsInterrupted = (deliveryId: string): void => {
    db.update(webhookAttempts)
      .set({ error: INTERRUPTED_ERROR })
      .where(and(eq(webhookAttempts.deliveryId, deliveryId), isNull(webhookAttempts.statusCode), isNull(webhookAttempts.error)))
      .run();
  };

  /** Cancels what is still waiting for an endpoint that no longer takes deliveries, in the caller's transaction. */
  const cancelPendingOf = statement(
    store,
    (on, { webhookDeliveries: deliveries }, v: { endpointId: string; reason: string; now: string }) =>
      on
        .update(deliveries)
        .set({ status: 'cancelled', nextAttemptAt: null, lastError: param(v.reason), updatedAt: param(v.now) })
        .where(and(eq(deliveries.endpointId, v.endpointId), eq(deliveries.status, 'pending'))),
  );
  const cancelPending = (endpointId: string, reason: string): Promise<number> =>
    cancelPendingOf.run({ endpointId, reason, now: isoNow(clock) });
  const outcomes = createOutcomes({ store, clock, audit, config, random, cancelPendingOf: cancelPending });
  const insertTestAttempt = statement(
    store,
    (
      on,
      { webhookAttempts: attempts },
      v: {
        id: string;
        deliveryId: string;
        attemptNumber: number;
        requestHeaders: Record<string, string>;
        requestBody: string;
        startedAt: string;
      },
    ) =>
      on.insert(attempts).values({
        id: v.id,
        deliveryId: v.deliveryId,
        attemptNumber: v.attemptNumber,
        requestHeaders: v.requestHeaders,
        requestBody: v.requestBody,
        startedAt: v.startedAt,
      }),
  );

  /** In-flight deliveries per endpoint, in every process (leases included): what the per-endpoint cap counts. */
  const inFlightByEndpoint = (): Map<string, number> =>
    new Map(
      statements()
        .inFlightByEndpoint.all()
        .map((row) => [row.endpointId, row.n] as const),
    );

  /** Active endpoints in a rotating order: each claim starts one further, so no endpoint is always served first. */
  let roundRobinStart = 0;
  const endpointsInTurn = (): string[] => {
    const ids = statements()
      .activeEndpointIds.all()
      .map((row) => row.id);
    if (ids.length === 0) return ids;
    const start = roundRobinStart++ % ids.length;
    return [...ids.slice(start), ...ids.slice(0, start)];
  };

  /**
   * Slots one endpoint may hold while `busy` endpoints have work: an even share
   * of this process's slots (rounded up, so no slot idles for rounding), never
   * more than `perEndpointConcurrency`. With a fixed cap alone, two slow
   * endpoints at 4 each took all 8 slots and a third, fast one waited behind
   * them (the soak saw 8,735 deliveries still queued after 10 minutes).
   */
  const shareOf = (busy: number): number =>
    busy <= 1
      ? settings.perEndpointConcurrency // alone, nobody waits for its slots
      : Math.min(settings.perEndpointConcurrency, Math.ceil(settings.concurrency / busy));

  /**
   * Due pending deliveries, fair across endpoints (max-min): each free slot goes
   * to the endpoint with work that holds the fewest in flight (counting every
   * process; ties in rotating order), and none goes past its share (`shareOf`).
   * A fast endpoint, whose slots come back in milliseconds, then wins them back
   * before slow or failing endpoints with long backlogs can pile onto them.
   */
  const fairDuePending = (now: string, limit: number) => {
    const inFlight = inFlightByEndpoint();
    const candidates = [];
    for (const endpointId of endpointsInTurn()) {
      const held = inFlight.get(endpointId) ?? 0;
      const room = Math.min(limit, settings.perEndpointConcurrency - held);
      const due = room > 0 ? statements().dueOfEndpoint.all({ endpointId, now, limit: room }) : [];
      candidates.push({ held, due, next: 0 });
    }
    const share = shareOf(candidates.filter(({ held, due }) => held > 0 || due.length > 0).length);
    const dealt = [];
    while (dealt.length < limit) {
      let pick: (typeof candidates)[number] | undefined;
      for (const candidate of candidates) {
        if (candidate.next >= candidate.due.length || candidate.held >= share) continue;
        if (!pick || candidate.held < pick.held) pick = candidate;
      }
      if (!pick) break;
      dealt.push(pick.due[pick.next++]!);
      pick.held++;
    }
    return dealt;
  };

  /**
   * The earliest next_attempt_at of a pending delivery of an active endpoint
   * with a free slot, or lease end of another owner (ISO). Endpoints at their
   * cap are left out: a send finishing here wakes the dispatcher, one
   * finishing elsewhere is seen at the next poll.
   */
  const earliestClaimable = (owner: string): string | null => {
    const inFlight = inFlightByEndpoint();
    const now = isoNow(clock);
    const endpoints = statements()
      .activeEndpointIds.all()
      .map(({ id }) => ({
        held: inFlight.get(id) ?? 0,
        at: statements().earliestPendingOfEndpoint.get({ endpointId: id })?.at,
      }));
    // The same share as fairDuePending: waking for a delivery it would not take would spin.
    const share = shareOf(endpoints.filter(({ held, at }) => held > 0 || (typeof at === 'string' && at <= now)).length);
    const candidates: string[] = [];
    for (const { held, at } of endpoints) {
      if (held >= share) continue;
      if (typeof at === 'string') candidates.push(at);
    }
    const lease = statements().earliestForeignLease.get({ owner })?.at;
    if (typeof lease === 'string') candidates.push(lease);
    return candidates.sort()[0] ?? null;
  };

  /** The earliest next_attempt_at of a pending delivery of an active endpoint, or lease end of another owner (ISO). */
  const earliestDue = (owner: string): string | null => {
    const pending = statements().earliestPending.get()?.at;
    const lease = statements().earliestForeignLease.get({ owner })?.at;
    const candidates = [pending, lease].filter((at): at is string => typeof at === 'string').sort();
    return candidates[0] ?? null;
  };

  const queue = {
    maxAttempts,
    leaseMs,

    /** Called with no arguments after deliveries were queued by this process (and committed). */
    onQueued(listener: () => void): () => void {
      queuedListeners.add(listener);
      return () => queuedListeners.delete(listener);
    },

    /**
     * One pending delivery per active endpoint subscribed to the event's kind,
     * inside the transaction that records the event (an events listener), so the
     * change, the event and its deliveries commit together (webhooks.fan-out.ts).
     * `fanOut` is events.record's sync form; `fanOutInTransaction` joins the caller's store transaction.
     */
    fanOut: fanOut.sync,
    fanOutInTransaction: fanOut.inTransaction,

    /** A new pending delivery of an existing event to an endpoint (redelivery), through the fan-out's insert. */
    enqueue: fanOut.enqueue,

    /** Cancels the pending deliveries of an endpoint (disabled), in the caller's store transaction. */
    cancelPendingOf: cancelPending,

    /**
     * Takes up to `limit` deliveries that are due, in one BEGIN IMMEDIATE
     * transaction: pending ones whose time has come, and in-flight ones whose
     * lease ran out (their process died). Each becomes in_flight under
     * `owner`'s lease, with its attempt row written before anything is sent.
     */
    claimDue(owner: string, limit: number): ClaimedAttempt[] {
      if (limit <= 0) return [];
      // A plain read first (WAL: never waits for a writer). Idle polls then take no write lock, so
      // they never stall this process's event loop behind a long write of another one (cli import).
      const earliest = earliestDue(owner);
      if (earliest === null || earliest > isoNow(clock)) return [];
      return inTransaction(db, () => {
        const now = isoNow(clock);
        const leaseExpiresAt = isoIn(leaseMs);
        const claimed: ClaimedAttempt[] = [];

        const take = (
          delivery: typeof webhookDeliveries.$inferSelect,
          endpoint: WebhookEndpointRow,
          event: WebhookEventSource,
          attemptNumber: number,
        ): void => {
          statements().markInFlight.run({ id: delivery.id, attemptNumber, owner, leaseExpiresAt, now });
          const request = buildWebhookRequest(endpoint, event, { id: delivery.id, attemptNumber, isTest: delivery.isTest }, clock.now());
          claimed.push(
            insertAttempt(
              {
                deliveryId: delivery.id,
                attemptNumber,
                endpointId: endpoint.id,
                eventId: event.id,
                eventType: event.type,
                isTest: delivery.isTest,
                request,
              },
              now,
            ),
          );
        };

        // Leases that ran out first: those deliveries have waited longest.
        const expired = statements().expiredLeases.all({ now, owner, limit });
        for (const { delivery, endpoint, event } of expired) {
          markUnfinishedAttemptsInterrupted(delivery.id);
          if (delivery.isTest || !endpoint.active) {
            // A test send is one attempt, made while someone waits; a disabled endpoint takes nothing more.
            db.update(webhookDeliveries)
              .set({
                status: delivery.isTest ? 'failed' : 'cancelled',
                leaseOwner: null,
                leaseExpiresAt: null,
                nextAttemptAt: null,
                lastError: delivery.isTest ? INTERRUPTED_ERROR : 'cancelled: endpoint disabled',
                updatedAt: now,
              })
              .where(eq(webhookDeliveries.id, delivery.id))
              .run();
            continue;
          }
          // The interrupted attempt may never have reached the receiver: send it again under the
          // same number, without spending the retry budget.
          take(delivery, endpoint, event, Math.max(1, delivery.attemptCount));
        }

        const room = limit - claimed.length;
        if (room > 0) {
          for (const { delivery, endpoint, event } of fairDuePending(now, room)) take(delivery, endpoint, event, delivery.attemptCount + 1);
        }
        return claimed;
      });
    },

    /** A test send: a delivery row (is_test) already in flight under `owner`, with its attempt row (a transaction of its own, or the caller's). */
    startTestAttempt(endpoint: WebhookEndpointRow, sample: WebhookEventSource, owner: string): Promise<ClaimedAttempt> {
      return store.transaction(async () => {
        const { events: eventsTable, webhookDeliveries: deliveries } = store.t;
        const now = isoNow(clock);
        // The delivery row references an event row; samples get one (fixed id, never fanned out).
        await store.run(
          store.db
            .insert(eventsTable)
            .values({ id: sample.id, type: sample.type, data: sample.data, createdAt: sample.createdAt })
            .onConflictDoUpdate({ target: eventsTable.id, set: { type: sample.type, data: sample.data, createdAt: sample.createdAt } }),
        );
        const deliveryId = ids.next('dlv');
        await store.run(
          store.db.insert(deliveries).values({
            id: deliveryId,
            eventId: sample.id,
            endpointId: endpoint.id,
            status: 'in_flight',
            attemptCount: 1,
            leaseOwner: owner,
            leaseExpiresAt: isoIn(leaseMs),
            isTest: true,
            createdAt: now,
            updatedAt: now,
          }),
        );
        const request = buildWebhookRequest(endpoint, sample, { id: deliveryId, attemptNumber: 1, isTest: true }, clock.now());
        const attemptId = ids.next('att');
        await insertTestAttempt.run({
          id: attemptId,
          deliveryId,
          attemptNumber: 1,
          requestHeaders: request.headers,
          requestBody: request.body,
          startedAt: now,
        });
        return {
          deliveryId,
          attemptId,
          attemptNumber: 1,
          endpointId: endpoint.id,
          eventId: sample.id,
          eventType: sample.type,
          isTest: true,
          request,
        };
      });
    },

    /**
     * Writes what an attempt came to and decides what happens next (webhooks.outcome.ts).
     * Resolves to the delivery's new status, or null when `owner` no longer held the lease.
     */
    recordOutcome: outcomes.recordOutcome,

    /**
     * When something next becomes claimable: the earliest pending delivery of an
     * active endpoint below its share of the slots, or the earliest lease of another
     * process that may run out.
     */
    nextDueAt(owner: string): Date | null {
      const earliest = earliestClaimable(owner);
      return earliest === null ? null : new Date(earliest);
    },

    /** How many deliveries are in each state: for the console's overview, /metrics, tests and the benchmark. */
    async countByStatus(): Promise<Record<DeliveryStatus, number>> {
      const { webhookDeliveries: deliveries } = store.t;
      const rows = await store.rows(store.db.select({ status: deliveries.status, n: count() }).from(deliveries).groupBy(deliveries.status));
      const counts: Record<DeliveryStatus, number> = { pending: 0, in_flight: 0, succeeded: 0, failed: 0, cancelled: 0 };
      for (const row of rows) counts[row.status] = row.n;
      return counts;
    },
  };
  return queue;
}

export type DeliveryQueue = ReturnType<typeof createDeliveryQueue>;

/**
 * The statements of the hot path (fan-out, claim, finish), compiled once per
 * connection: building and preparing them per delivery cost more than running them.
 */
function prepareStatements(db: Db) {
  const p = sql.placeholder;
  /** A placeholder where drizzle's update types want SQL (the value is bound as-is: strings, numbers, null). */
  const value = (name: string) => sql`${sql.placeholder(name)}`;
  const sendable = { delivery: webhookDeliveries, endpoint: webhookEndpoints, event: events };
  return {
    expiredLeases: db
      .select(sendable)
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(
        and(
          eq(webhookDeliveries.status, 'in_flight'),
          lte(webhookDeliveries.leaseExpiresAt, p('now')),
          ne(webhookDeliveries.leaseOwner, p('owner')),
        ),
      )
      .orderBy(asc(webhookDeliveries.leaseExpiresAt))
      .limit(p('limit'))
      .prepare(),
    activeEndpointIds: db
      .select({ id: webhookEndpoints.id })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.active, true))
      .orderBy(asc(webhookEndpoints.id))
      .prepare(),
    inFlightByEndpoint: db
      .select({ endpointId: webhookDeliveries.endpointId, n: sql<number>`count(*)` })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.status, 'in_flight'))
      .groupBy(webhookDeliveries.endpointId)
      .prepare(),
    // Index order (endpoint_id, status, next_attempt_at): one endpoint's due deliveries, no sort of its backlog.
    dueOfEndpoint: db
      .select(sendable)
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(
        and(
          eq(webhookDeliveries.endpointId, p('endpointId')),
          eq(webhookDeliveries.status, 'pending'),
          lte(webhookDeliveries.nextAttemptAt, p('now')),
          eq(webhookEndpoints.active, true),
          eq(webhookDeliveries.isTest, false),
        ),
      )
      .orderBy(asc(webhookDeliveries.nextAttemptAt))
      .limit(p('limit'))
      .prepare(),
    earliestPendingOfEndpoint: db
      .select({ at: webhookDeliveries.nextAttemptAt })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.endpointId, p('endpointId')),
          eq(webhookDeliveries.status, 'pending'),
          eq(webhookDeliveries.isTest, false),
        ),
      )
      .orderBy(asc(webhookDeliveries.nextAttemptAt))
      .limit(1)
      .prepare(),
    markInFlight: db
      .update(webhookDeliveries)
      .set({
        status: 'in_flight',
        attemptCount: value('attemptNumber'),
        leaseOwner: value('owner'),
        leaseExpiresAt: value('leaseExpiresAt'),
        updatedAt: value('now'),
      })
      .where(eq(webhookDeliveries.id, p('id')))
      .prepare(),
    insertAttempt: db
      .insert(webhookAttempts)
      .values({
        id: p('id'),
        deliveryId: p('deliveryId'),
        attemptNumber: p('attemptNumber'),
        requestHeaders: p('requestHeaders'),
        requestBody: p('requestBody'),
        startedAt: p('startedAt'),
      })
      .prepare(),
    // ORDER BY … LIMIT 1 walks the (status, next_attempt_at) index and stops at the first hit.
    earliestPending: db
      .select({ at: webhookDeliveries.nextAttemptAt })
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .where(and(eq(webhookDeliveries.status, 'pending'), eq(webhookEndpoints.active, true), eq(webhookDeliveries.isTest, false)))
      .orderBy(asc(webhookDeliveries.nextAttemptAt))
      .limit(1)
      .prepare(),
    earliestForeignLease: db
      .select({ at: webhookDeliveries.leaseExpiresAt })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.status, 'in_flight'), ne(webhookDeliveries.leaseOwner, p('owner'))))
      .orderBy(asc(webhookDeliveries.leaseExpiresAt))
      .limit(1)
      .prepare(),
  };
}
