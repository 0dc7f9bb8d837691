import { randomBytes } from 'node:crypto';
import { and, asc, eq, inArray, isNull, lte, ne, sql } from 'drizzle-orm';
import type { Config } from '../../config';
import { inTransaction, type Db } from '../../db/client';
import type { Store } from '../../db/store';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { AuditService } from '../audit/audit.service';
import { events, type EventType } from '../events/events.table';
import { createFanOut } from './webhooks.fan-out';
import { buildWebhookRequest, type WebhookEventSource, type WebhookRequest } from './webhooks.payload';
import type { AttemptOutcome } from './webhooks.sender';
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

/** The audit actor of what the dispatcher decides on its own (disabling a failing endpoint). */
export const SYSTEM_ACTOR = 'system:webhooks';

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
  /** The fan-out's in-transaction form runs through it (the rest of the queue is not ported yet). */
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
  const statements = prepareStatements(db);
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

  const retryDelayAfter = (attemptNumber: number): number | undefined => {
    const base = settings.retryDelaysMs[attemptNumber - 1];
    if (base === undefined) return undefined;
    const spread = base * settings.jitter * (2 * random() - 1);
    return Math.max(0, Math.round(base + spread));
  };

  const insertAttempt = (claimed: Omit<ClaimedAttempt, 'attemptId'>, startedAt: string): ClaimedAttempt => {
    const attemptId = ids.next('att');
    statements.insertAttempt.run({
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

  /** Cancels what is still waiting for an endpoint that no longer takes deliveries. Call inside a transaction. */
  const cancelPendingOf = (endpointId: string, reason: string): number => {
    const result = db
      .update(webhookDeliveries)
      .set({ status: 'cancelled', nextAttemptAt: null, lastError: reason, updatedAt: isoNow(clock) })
      .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, 'pending')))
      .run();
    return result.changes;
  };

  /** Disables an endpoint the dispatcher has given up on. Call inside a transaction. */
  const disableEndpoint = (endpoint: WebhookEndpointRow, reason: string, failures: number): void => {
    const now = isoNow(clock);
    db.update(webhookEndpoints)
      .set({ active: false, disabledReason: reason, consecutiveFailures: failures, version: endpoint.version + 1, updatedAt: now })
      .where(eq(webhookEndpoints.id, endpoint.id))
      .run();
    cancelPendingOf(endpoint.id, `cancelled: endpoint disabled (${reason})`);
    audit.record({
      actor: SYSTEM_ACTOR,
      action: 'webhook.disable',
      entityType: 'webhook_endpoint',
      entityId: endpoint.id,
      before: { active: true },
      after: { active: false, disabled_reason: reason },
    });
  };

  /** In-flight deliveries per endpoint, in every process (leases included): what the per-endpoint cap counts. */
  const inFlightByEndpoint = (): Map<string, number> =>
    new Map(statements.inFlightByEndpoint.all().map((row) => [row.endpointId, row.n] as const));

  /** Active endpoints in a rotating order: each claim starts one further, so no endpoint is always served first. */
  let roundRobinStart = 0;
  const endpointsInTurn = (): string[] => {
    const ids = statements.activeEndpointIds.all().map((row) => row.id);
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
      const due = room > 0 ? statements.dueOfEndpoint.all({ endpointId, now, limit: room }) : [];
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
    const endpoints = statements.activeEndpointIds.all().map(({ id }) => ({
      held: inFlight.get(id) ?? 0,
      at: statements.earliestPendingOfEndpoint.get({ endpointId: id })?.at,
    }));
    // The same share as fairDuePending: waking for a delivery it would not take would spin.
    const share = shareOf(endpoints.filter(({ held, at }) => held > 0 || (typeof at === 'string' && at <= now)).length);
    const candidates: string[] = [];
    for (const { held, at } of endpoints) {
      if (held >= share) continue;
      if (typeof at === 'string') candidates.push(at);
    }
    const lease = statements.earliestForeignLease.get({ owner })?.at;
    if (typeof lease === 'string') candidates.push(lease);
    return candidates.sort()[0] ?? null;
  };

  /** The earliest next_attempt_at of a pending delivery of an active endpoint, or lease end of another owner (ISO). */
  const earliestDue = (owner: string): string | null => {
    const pending = statements.earliestPending.get()?.at;
    const lease = statements.earliestForeignLease.get({ owner })?.at;
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

    /** A new pending delivery of an existing event to an endpoint (redelivery). Call inside a transaction. */
    enqueue(eventId: string, endpointId: string): string {
      const id = ids.next('dlv');
      statements.insertPending.run({ id, eventId, endpointId, now: isoNow(clock) });
      announceQueued();
      return id;
    },

    cancelPendingOf,

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
          statements.markInFlight.run({ id: delivery.id, attemptNumber, owner, leaseExpiresAt, now });
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
        const expired = statements.expiredLeases.all({ now, owner, limit });
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

    /** A test send: a delivery row (is_test) already in flight under `owner`, with its attempt row. */
    startTestAttempt(endpoint: WebhookEndpointRow, sample: WebhookEventSource, owner: string): ClaimedAttempt {
      return inTransaction(db, () => {
        const now = isoNow(clock);
        // The delivery row references an event row; samples get one (fixed id, never fanned out).
        db.insert(events)
          .values({ id: sample.id, type: sample.type, data: sample.data, createdAt: sample.createdAt })
          .onConflictDoUpdate({ target: events.id, set: { type: sample.type, data: sample.data, createdAt: sample.createdAt } })
          .run();
        const deliveryId = ids.next('dlv');
        db.insert(webhookDeliveries)
          .values({
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
          })
          .run();
        const request = buildWebhookRequest(endpoint, sample, { id: deliveryId, attemptNumber: 1, isTest: true }, clock.now());
        return insertAttempt(
          { deliveryId, attemptNumber: 1, endpointId: endpoint.id, eventId: sample.id, eventType: sample.type, isTest: true, request },
          now,
        );
      });
    },

    /**
     * Writes what an attempt came to and decides what happens next: success;
     * a retry after the schedule's delay (± jitter); failed after the last
     * attempt; 410 Gone or too many consecutive failures disable the endpoint
     * and cancel what was waiting for it. Test sends never change the endpoint.
     * Returns the delivery's new status, or null when this process no longer
     * held the lease (the result is logged but decides nothing).
     */
    recordOutcome(claimed: ClaimedAttempt, outcome: AttemptOutcome, owner: string): DeliveryStatus | null {
      return inTransaction(db, () => {
        statements.finishAttempt.run({
          id: claimed.attemptId,
          statusCode: outcome.statusCode,
          latencyMs: outcome.latencyMs,
          responseExcerpt: outcome.responseExcerpt,
          error: outcome.error,
        });
        const found = statements.deliveryWithEndpoint.get({ id: claimed.deliveryId });
        // Removed, cancelled, or taken over after our lease ran out: not ours to decide any more.
        if (!found || found.delivery.status !== 'in_flight' || found.delivery.leaseOwner !== owner) return null;
        const { delivery, endpoint } = found;

        const now = isoNow(clock);
        let status: DeliveryStatus;
        let nextAttemptAt: string | null = null;
        if (outcome.ok) {
          status = 'succeeded';
          if (!delivery.isTest && endpoint.consecutiveFailures !== 0) statements.resetFailures.run({ id: endpoint.id });
        } else if (delivery.isTest) {
          status = 'failed';
        } else {
          const gone = outcome.statusCode === 410;
          // A name that did not resolve says nothing about the receiver: retried, not counted.
          const counted = outcome.countsTowardDisabling !== false;
          const failures = endpoint.consecutiveFailures + (counted ? 1 : 0);
          const disableReason =
            !endpoint.active || !counted
              ? null
              : gone
                ? 'the receiver answered 410 Gone'
                : failures >= settings.disableAfterFailures
                  ? `${failures} consecutive failed attempts`
                  : null;
          const delay = retryDelayAfter(claimed.attemptNumber);
          if (gone || delay === undefined) status = 'failed';
          else if (!endpoint.active || disableReason) status = 'cancelled';
          else {
            status = 'pending';
            nextAttemptAt = isoIn(delay);
          }
          if (disableReason) disableEndpoint(endpoint, disableReason, failures);
          else if (counted) statements.countFailure.run({ id: endpoint.id });
        }

        statements.settleDelivery.run({
          id: delivery.id,
          status,
          nextAttemptAt,
          lastStatusCode: outcome.statusCode,
          lastError: outcome.error,
          now,
        });
        return status;
      });
    },

    /**
     * When something next becomes claimable: the earliest pending delivery of an
     * active endpoint below its share of the slots, or the earliest lease of another
     * process that may run out.
     */
    nextDueAt(owner: string): Date | null {
      const earliest = earliestClaimable(owner);
      return earliest === null ? null : new Date(earliest);
    },

    /** How many deliveries are in each state: for the console's overview, tests and the benchmark. */
    countByStatus(): Record<DeliveryStatus, number> {
      const rows = db
        .select({ status: webhookDeliveries.status, n: sql<number>`count(*)` })
        .from(webhookDeliveries)
        .groupBy(webhookDeliveries.status)
        .all();
      const counts: Record<DeliveryStatus, number> = { pending: 0, in_flight: 0, succeeded: 0, failed: 0, cancelled: 0 };
      for (const row of rows) counts[row.status] = row.n;
      return counts;
    },

    /** Deletes the delivery log of an endpoint (attempts, then deliveries). Call inside a transaction. */
    deleteDeliveriesOf(endpointId: string): void {
      const deliveryIds = db
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.endpointId, endpointId))
        .all()
        .map((row) => row.id);
      for (let i = 0; i < deliveryIds.length; i += 500) {
        db.delete(webhookAttempts)
          .where(inArray(webhookAttempts.deliveryId, deliveryIds.slice(i, i + 500)))
          .run();
      }
      db.delete(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId)).run();
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
    insertPending: db
      .insert(webhookDeliveries)
      .values({
        id: p('id'),
        eventId: p('eventId'),
        endpointId: p('endpointId'),
        status: 'pending',
        nextAttemptAt: p('now'),
        createdAt: p('now'),
        updatedAt: p('now'),
      })
      .prepare(),
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
    finishAttempt: db
      .update(webhookAttempts)
      .set({
        statusCode: value('statusCode'),
        latencyMs: value('latencyMs'),
        responseExcerpt: value('responseExcerpt'),
        error: value('error'),
      })
      .where(eq(webhookAttempts.id, p('id')))
      .prepare(),
    deliveryWithEndpoint: db
      .select({ delivery: webhookDeliveries, endpoint: webhookEndpoints })
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .where(eq(webhookDeliveries.id, p('id')))
      .prepare(),
    settleDelivery: db
      .update(webhookDeliveries)
      .set({
        status: value('status'),
        nextAttemptAt: value('nextAttemptAt'),
        leaseOwner: null,
        leaseExpiresAt: null,
        lastStatusCode: value('lastStatusCode'),
        lastError: value('lastError'),
        updatedAt: value('now'),
      })
      .where(eq(webhookDeliveries.id, p('id')))
      .prepare(),
    resetFailures: db
      .update(webhookEndpoints)
      .set({ consecutiveFailures: 0 })
      .where(eq(webhookEndpoints.id, p('id')))
      .prepare(),
    countFailure: db
      .update(webhookEndpoints)
      .set({ consecutiveFailures: sql`${webhookEndpoints.consecutiveFailures} + 1` })
      .where(eq(webhookEndpoints.id, p('id')))
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
