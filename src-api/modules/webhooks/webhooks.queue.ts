import { randomBytes } from 'node:crypto';
import { and, count, eq } from 'drizzle-orm';
import type { Config } from '../../config';
import type { Store } from '../../db/store';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { AuditService } from '../audit/audit.service';
import type { EventType } from '../events/events.table';
import { createClaims } from './webhooks.claim';
import { createFanOut } from './webhooks.fan-out';
import { createOutcomes } from './webhooks.outcome';
import type { WebhookRequest } from './webhooks.payload';
import { param, statement } from './webhooks.statement';
import type { DeliveryStatus } from './webhooks.table';

/**
 * The delivery queue, through the store: fan-out of events into deliveries
 * (webhooks.fan-out.ts), claiming under a lease (webhooks.claim.ts), and
 * recording what each attempt came to (webhooks.outcome.ts: retry schedule,
 * 410 and failure-count disabling). Every process on the database works on the
 * same rows; leases keep two of them from sending one delivery at the same
 * time, and let a restarted process take over the deliveries a crashed one was sending.
 */

/** Added to the send deadline to get the lease: room for a slow event loop before another process may take over. */
export const LEASE_MARGIN_MS = 5_000;

export { INTERRUPTED_ERROR } from './webhooks.claim';
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

export function createDeliveryQueue({ store, clock, ids, audit, config, random = Math.random }: DeliveryQueueDeps) {
  const settings = config.webhooks;
  const maxAttempts = 1 + settings.retryDelaysMs.length;
  const leaseMs = settings.timeoutMs + LEASE_MARGIN_MS;
  const queuedListeners = new Set<() => void>();
  const fanOut = createFanOut({ store, clock, ids, announce: () => announceQueued() });
  const claims = createClaims({ store, clock, ids, config, leaseMs });

  /**
   * Listeners run on the next turn of the event loop, after the enqueueing
   * transaction has committed (the fan-out announces after commit). A burst of
   * events makes one announcement.
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

  return {
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
     * change, the event and its deliveries commit together (webhooks.fan-out.ts): in the
     * caller's store transaction.
     */
    fanOutInTransaction: fanOut.inTransaction,

    /** A new pending delivery of an existing event to an endpoint (redelivery), through the fan-out's insert. */
    enqueue: fanOut.enqueue,

    /** Cancels the pending deliveries of an endpoint (disabled), in the caller's store transaction. */
    cancelPendingOf: cancelPending,

    /** Takes up to `limit` due deliveries under `owner`'s lease (webhooks.claim.ts). */
    claimDue: claims.claimDue,

    /** When something next becomes claimable for `owner` with its free slots (webhooks.claim.ts). */
    nextDueAt: claims.nextDueAt,

    /**
     * Writes what an attempt came to and decides what happens next (webhooks.outcome.ts).
     * Resolves to the delivery's new status, or null when `owner` no longer held the lease.
     */
    recordOutcome: outcomes.recordOutcome,

    /** A test send: a delivery row (is_test) already in flight under `owner`, with its attempt row (webhooks.claim.ts). */
    startTestAttempt: claims.startTestAttempt,

    /** How many deliveries are in each state: for the console's overview, /metrics, tests and the benchmark. */
    async countByStatus(): Promise<Record<DeliveryStatus, number>> {
      const { webhookDeliveries: deliveries } = store.t;
      const rows = await store.rows(store.db.select({ status: deliveries.status, n: count() }).from(deliveries).groupBy(deliveries.status));
      const counts: Record<DeliveryStatus, number> = { pending: 0, in_flight: 0, succeeded: 0, failed: 0, cancelled: 0 };
      for (const row of rows) counts[row.status] = row.n;
      return counts;
    },
  };
}

export type DeliveryQueue = ReturnType<typeof createDeliveryQueue>;
