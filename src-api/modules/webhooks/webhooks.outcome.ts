import { eq, sql } from 'drizzle-orm';
import type { Config } from '../../config';
import type { Store } from '../../db/store';
import { isoNow, type Clock } from '../../lib/clock';
import type { AuditService } from '../audit/audit.service';
import type { AttemptOutcome } from './webhooks.sender';
import { param, statement } from './webhooks.statement';
import type { DeliveryStatus, WebhookEndpointRow } from './webhooks.table';
import type { ClaimedAttempt } from './webhooks.queue';

/** The audit actor of what the dispatcher decides on its own (disabling a failing endpoint). */
export const SYSTEM_ACTOR = 'system:webhooks';

export interface OutcomeDeps {
  store: Store;
  clock: Clock;
  audit: AuditService;
  config: Pick<Config, 'webhooks'>;
  /** Source of the retry jitter, in [0, 1). */
  random: () => number;
  /** Cancels what still waits for an endpoint (in the caller's transaction). */
  cancelPendingOf: (endpointId: string, reason: string) => Promise<number>;
}

/**
 * What an attempt came to, recorded through the store (webhooks.queue.ts
 * claims, this decides): the attempt row's result, then the delivery's next
 * state: success; a retry after the schedule's delay (± jitter); failed after
 * the last attempt; 410 Gone or too many consecutive failures disable the
 * endpoint and cancel what was waiting for it. Test sends never change the endpoint.
 */
export function createOutcomes({ store, clock, audit, config, random, cancelPendingOf }: OutcomeDeps) {
  const settings = config.webhooks;
  const isoIn = (ms: number): string => new Date(clock.now().getTime() + ms).toISOString();

  const retryDelayAfter = (attemptNumber: number): number | undefined => {
    const base = settings.retryDelaysMs[attemptNumber - 1];
    if (base === undefined) return undefined;
    const spread = base * settings.jitter * (2 * random() - 1);
    return Math.max(0, Math.round(base + spread));
  };

  const finishAttempt = statement(
    store,
    (
      db,
      { webhookAttempts },
      v: { id: string; statusCode: number | null; latencyMs: number; responseExcerpt: string | null; error: string | null },
    ) =>
      db
        .update(webhookAttempts)
        .set({
          statusCode: param(v.statusCode),
          latencyMs: param(v.latencyMs),
          responseExcerpt: param(v.responseExcerpt),
          error: param(v.error),
        })
        .where(eq(webhookAttempts.id, v.id)),
  );
  // Delivery and endpoint rows locked until the outcome is written (PostgreSQL): two outcomes of
  // one endpoint count its failures one after the other, and a taken-over lease is seen as such.
  const deliveryWithEndpoint = statement(store, (db, { webhookDeliveries, webhookEndpoints }, v: { id: string }) =>
    store.forUpdate(
      db
        .select({ delivery: webhookDeliveries, endpoint: webhookEndpoints })
        .from(webhookDeliveries)
        .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
        .where(eq(webhookDeliveries.id, v.id)),
    ),
  );
  const settleDelivery = statement(
    store,
    (
      db,
      { webhookDeliveries },
      v: {
        id: string;
        status: DeliveryStatus;
        nextAttemptAt: string | null;
        lastStatusCode: number | null;
        lastError: string | null;
        now: string;
      },
    ) =>
      db
        .update(webhookDeliveries)
        .set({
          status: param(v.status),
          nextAttemptAt: param(v.nextAttemptAt),
          leaseOwner: null,
          leaseExpiresAt: null,
          lastStatusCode: param(v.lastStatusCode),
          lastError: param(v.lastError),
          updatedAt: param(v.now),
        })
        .where(eq(webhookDeliveries.id, v.id)),
  );
  // PostgreSQL: the endpoint's row first, as removing an endpoint (or closing its account) takes it
  // before deleting the endpoint's attempts and deliveries: in the other order an outcome holding its
  // attempt's row and a removal holding the endpoint's each waited for the other (a deadlock).
  const lockEndpoint = statement(store, (db, { webhookEndpoints }, v: { id: string }) =>
    store.forUpdate(db.select({ id: webhookEndpoints.id }).from(webhookEndpoints).where(eq(webhookEndpoints.id, v.id))),
  );
  const resetFailures = statement(store, (db, { webhookEndpoints }, v: { id: string }) =>
    db.update(webhookEndpoints).set({ consecutiveFailures: 0 }).where(eq(webhookEndpoints.id, v.id)),
  );
  const countFailure = statement(store, (db, { webhookEndpoints }, v: { id: string }) =>
    db
      .update(webhookEndpoints)
      .set({ consecutiveFailures: sql`${webhookEndpoints.consecutiveFailures} + 1` })
      .where(eq(webhookEndpoints.id, v.id)),
  );

  /** Disables an endpoint the dispatcher has given up on, in the outcome's transaction. */
  const disableEndpoint = async (endpoint: WebhookEndpointRow, reason: string, failures: number): Promise<void> => {
    const { webhookEndpoints } = store.t;
    await store.run(
      store.db
        .update(webhookEndpoints)
        .set({
          active: false,
          disabledReason: reason,
          consecutiveFailures: failures,
          version: endpoint.version + 1,
          updatedAt: isoNow(clock),
        })
        .where(eq(webhookEndpoints.id, endpoint.id)),
    );
    await cancelPendingOf(endpoint.id, `cancelled: endpoint disabled (${reason})`);
    await audit.recordInTransaction({
      actor: SYSTEM_ACTOR,
      action: 'webhook.disable',
      entityType: 'webhook_endpoint',
      entityId: endpoint.id,
      before: { active: true },
      after: { active: false, disabled_reason: reason },
    });
  };

  return {
    /**
     * Writes what an attempt came to and decides what happens next. Resolves to
     * the delivery's new status, or null when `owner` no longer held the lease
     * (the result is logged but decides nothing).
     */
    recordOutcome(claimed: ClaimedAttempt, outcome: AttemptOutcome, owner: string): Promise<DeliveryStatus | null> {
      return store.transaction(async () => {
        if (store.dialect === 'postgres') await lockEndpoint.first({ id: claimed.endpointId });
        await finishAttempt.run({
          id: claimed.attemptId,
          statusCode: outcome.statusCode,
          latencyMs: outcome.latencyMs,
          responseExcerpt: outcome.responseExcerpt,
          error: outcome.error,
        });
        const found = await deliveryWithEndpoint.first({ id: claimed.deliveryId });
        // Removed, cancelled, or taken over after our lease ran out: not ours to decide any more.
        if (!found || found.delivery.status !== 'in_flight' || found.delivery.leaseOwner !== owner) return null;
        const { delivery, endpoint } = found;

        let status: DeliveryStatus;
        let nextAttemptAt: string | null = null;
        if (outcome.ok) {
          status = 'succeeded';
          if (!delivery.isTest && endpoint.consecutiveFailures !== 0) await resetFailures.run({ id: endpoint.id });
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
          if (disableReason) await disableEndpoint(endpoint, disableReason, failures);
          else if (counted) await countFailure.run({ id: endpoint.id });
        }

        await settleDelivery.run({
          id: delivery.id,
          status,
          nextAttemptAt,
          lastStatusCode: outcome.statusCode,
          lastError: outcome.error,
          now: isoNow(clock),
        });
        return status;
      });
    },
  };
}
