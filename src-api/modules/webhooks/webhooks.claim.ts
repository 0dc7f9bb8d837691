import { and, asc, count, eq, isNull, lte, ne, sql } from 'drizzle-orm';
import type { Config } from '../../config';
import type { Store } from '../../db/store';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { dealSlots, slotRule } from './webhooks.fair-share';
import { buildWebhookRequest, type WebhookEventSource } from './webhooks.payload';
import type { ClaimedAttempt } from './webhooks.queue';
import { param, statement } from './webhooks.statement';
import type { WebhookDeliveryRow, WebhookEndpointRow } from './webhooks.table';

/** Written into the log of an attempt whose process stopped before it learned the answer. */
export const INTERRUPTED_ERROR = 'interrupted: the sending process stopped before the result was recorded';

/**
 * PostgreSQL: the advisory lock a claim transaction takes first, a 64-bit hash of a name in our
 * namespace (as runExclusive's job keys). Nothing else takes it, and a claim holds no other lock
 * when it asks: it cannot be part of a deadlock.
 */
const CLAIM_LOCK = sql`pg_advisory_xact_lock(hashtextextended('agentdir lock: webhook claims', 0))`;

export interface ClaimsDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  config: Pick<Config, 'webhooks'>;
  /** How long a claim holds a delivery: the send deadline and a margin. */
  leaseMs: number;
}

/**
 * Claiming due deliveries under a lease, through the store. A claim is one
 * transaction: in-flight deliveries whose lease ran out (their process died)
 * first, then pending ones whose time has come, dealt fairly across endpoints.
 * Each becomes in_flight under the claimer's lease with its attempt row
 * written, before anything is sent.
 *
 * Two claimers never take one delivery: on SQLite the claim holds the only
 * write lock; on PostgreSQL the delivery rows a claim reads are locked FOR
 * UPDATE SKIP LOCKED (only the deliveries: the endpoints and events are read
 * apart), so a second claimer running at the same moment passes over them and
 * takes others, and a row another claimer has just taken no longer matches.
 * The per-endpoint cap counts every process's in-flight deliveries. So that
 * two PostgreSQL claimers at the same moment do not each count before the
 * other commits (each then took a whole cap), a claim first takes a
 * transaction-scoped advisory lock (CLAIM_LOCK): claims commit one after
 * another, and each counts what the one before it took.
 */
export function createClaims({ store, clock, ids, config, leaseMs }: ClaimsDeps) {
  const settings = config.webhooks;
  const isoIn = (ms: number): string => new Date(clock.now().getTime() + ms).toISOString();

  const activeEndpoints = statement(store, (db, { webhookEndpoints }) =>
    db.select().from(webhookEndpoints).where(eq(webhookEndpoints.active, true)).orderBy(asc(webhookEndpoints.id)),
  );
  const inFlightByEndpoint = statement(store, (db, { webhookDeliveries }) =>
    db
      .select({ endpointId: webhookDeliveries.endpointId, n: count() })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.status, 'in_flight'))
      .groupBy(webhookDeliveries.endpointId),
  );
  // The two claim reads lock what they return (PostgreSQL; a no-op on SQLite, which holds the write lock).
  const expiredLeases = statement(store, (db, { webhookDeliveries }, v: { now: string; owner: string; limit: number }) =>
    store.forUpdate(
      db
        .select()
        .from(webhookDeliveries)
        .where(
          and(
            eq(webhookDeliveries.status, 'in_flight'),
            lte(webhookDeliveries.leaseExpiresAt, v.now),
            ne(webhookDeliveries.leaseOwner, v.owner),
          ),
        )
        .orderBy(asc(webhookDeliveries.leaseExpiresAt))
        .limit(v.limit),
      { skipLocked: true },
    ),
  );
  // Index order (endpoint_id, status, next_attempt_at): one endpoint's due deliveries, no sort of its backlog.
  const dueOfEndpoint = statement(store, (db, { webhookDeliveries }, v: { endpointId: string; now: string; limit: number }) =>
    store.forUpdate(
      db
        .select()
        .from(webhookDeliveries)
        .where(
          and(
            eq(webhookDeliveries.endpointId, v.endpointId),
            eq(webhookDeliveries.status, 'pending'),
            lte(webhookDeliveries.nextAttemptAt, v.now),
            eq(webhookDeliveries.isTest, false),
          ),
        )
        .orderBy(asc(webhookDeliveries.nextAttemptAt))
        .limit(v.limit),
      { skipLocked: true },
    ),
  );
  const eventById = statement(store, (db, { events }, v: { id: string }) => db.select().from(events).where(eq(events.id, v.id)));
  const earliestPendingOfEndpoint = statement(store, (db, { webhookDeliveries }, v: { endpointId: string }) =>
    db
      .select({ at: webhookDeliveries.nextAttemptAt })
      .from(webhookDeliveries)
      .where(
        and(eq(webhookDeliveries.endpointId, v.endpointId), eq(webhookDeliveries.status, 'pending'), eq(webhookDeliveries.isTest, false)),
      )
      .orderBy(asc(webhookDeliveries.nextAttemptAt))
      .limit(1),
  );
  // ORDER BY … LIMIT 1 walks the (status, next_attempt_at) index and stops at the first hit.
  const earliestPending = statement(store, (db, { webhookDeliveries, webhookEndpoints }) =>
    db
      .select({ at: webhookDeliveries.nextAttemptAt })
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .where(and(eq(webhookDeliveries.status, 'pending'), eq(webhookEndpoints.active, true), eq(webhookDeliveries.isTest, false)))
      .orderBy(asc(webhookDeliveries.nextAttemptAt))
      .limit(1),
  );
  const earliestForeignLease = statement(store, (db, { webhookDeliveries }, v: { owner: string }) =>
    db
      .select({ at: webhookDeliveries.leaseExpiresAt })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.status, 'in_flight'), ne(webhookDeliveries.leaseOwner, v.owner)))
      .orderBy(asc(webhookDeliveries.leaseExpiresAt))
      .limit(1),
  );
  const markInFlight = statement(
    store,
    (db, { webhookDeliveries }, v: { id: string; attemptNumber: number; owner: string; leaseExpiresAt: string; now: string }) =>
      db
        .update(webhookDeliveries)
        .set({
          status: 'in_flight',
          attemptCount: param(v.attemptNumber),
          leaseOwner: param(v.owner),
          leaseExpiresAt: param(v.leaseExpiresAt),
          updatedAt: param(v.now),
        })
        .where(eq(webhookDeliveries.id, v.id)),
  );
  const insertAttempt = statement(
    store,
    (
      db,
      { webhookAttempts },
      v: {
        id: string;
        deliveryId: string;
        attemptNumber: number;
        requestHeaders: Record<string, string>;
        requestBody: string;
        startedAt: string;
      },
    ) =>
      db.insert(webhookAttempts).values({
        id: v.id,
        deliveryId: v.deliveryId,
        attemptNumber: v.attemptNumber,
        requestHeaders: v.requestHeaders,
        requestBody: v.requestBody,
        startedAt: v.startedAt,
      }),
  );
  /** The attempt a crashed process started but never finished gets an explicit "interrupted" in the log. */
  const markInterrupted = statement(store, (db, { webhookAttempts }, v: { deliveryId: string; error: string }) =>
    db
      .update(webhookAttempts)
      .set({ error: param(v.error) })
      .where(and(eq(webhookAttempts.deliveryId, v.deliveryId), isNull(webhookAttempts.statusCode), isNull(webhookAttempts.error))),
  );
  /** A taken-over delivery that is not sent again: a test send (failed) or one of a disabled endpoint (cancelled). */
  const abandon = statement(store, (db, { webhookDeliveries }, v: { id: string; status: string; lastError: string; now: string }) =>
    db
      .update(webhookDeliveries)
      .set({
        status: param(v.status),
        leaseOwner: null,
        leaseExpiresAt: null,
        nextAttemptAt: null,
        lastError: param(v.lastError),
        updatedAt: param(v.now),
      })
      .where(eq(webhookDeliveries.id, v.id)),
  );

  /** In-flight deliveries per endpoint, in every process (leases included): what the per-endpoint cap counts. */
  const inFlightCounts = async (): Promise<Map<string, number>> =>
    new Map((await inFlightByEndpoint.rows({})).map((row) => [row.endpointId, row.n] as const));

  /** Active endpoints in a rotating order: each claim starts one further, so no endpoint is always served first. */
  let roundRobinStart = 0;
  const inTurn = <T>(rows: T[]): T[] => {
    if (rows.length === 0) return rows;
    const start = roundRobinStart++ % rows.length;
    return [...rows.slice(start), ...rows.slice(0, start)];
  };

  /**
   * Due pending deliveries, fair across endpoints (`dealSlots` within `slotRule`,
   * webhooks.fair-share.ts), counting every process's in-flight deliveries.
   */
  const fairDuePending = async (endpoints: WebhookEndpointRow[], now: string, free: number) => {
    const inFlight = await inFlightCounts();
    const candidates = [];
    for (const endpoint of inTurn(endpoints)) {
      const held = inFlight.get(endpoint.id) ?? 0;
      const room = Math.min(free, settings.perEndpointConcurrency - held);
      const due = room > 0 ? await dueOfEndpoint.rows({ endpointId: endpoint.id, now, limit: room }) : [];
      candidates.push({ endpoint, held, due });
    }
    const { share, limit } = slotRule(
      settings,
      candidates.map(({ held, due }) => ({ held, hasWork: due.length > 0 })),
      free,
    );
    const taken = dealSlots(
      candidates.map(({ held, due }) => ({ held, due: due.length })),
      share,
      limit,
    );
    return candidates.flatMap(({ endpoint, due }, i) => due.slice(0, taken[i]).map((delivery) => ({ delivery, endpoint })));
  };

  /** The earliest next_attempt_at of a pending delivery of an active endpoint, or lease end of another owner (ISO). */
  const earliestDue = async (owner: string): Promise<string | null> => {
    const pending = (await earliestPending.first({}))?.at;
    const lease = (await earliestForeignLease.first({ owner }))?.at;
    const candidates = [pending, lease].filter((at): at is string => typeof at === 'string').sort();
    return candidates[0] ?? null;
  };

  /** The attempt row, written before the request goes out (the claim's and a test send's). */
  const startAttempt = async (
    delivery: Pick<WebhookDeliveryRow, 'id' | 'isTest'>,
    endpoint: WebhookEndpointRow,
    event: WebhookEventSource,
    attemptNumber: number,
    now: string,
  ): Promise<ClaimedAttempt> => {
    const request = buildWebhookRequest(endpoint, event, { id: delivery.id, attemptNumber, isTest: delivery.isTest }, clock.now());
    const attemptId = ids.next('att');
    await insertAttempt.run({
      id: attemptId,
      deliveryId: delivery.id,
      attemptNumber,
      requestHeaders: request.headers,
      requestBody: request.body,
      startedAt: now,
    });
    return {
      deliveryId: delivery.id,
      attemptId,
      attemptNumber,
      endpointId: endpoint.id,
      eventId: event.id,
      eventType: event.type,
      isTest: delivery.isTest,
      request,
    };
  };

  return {
    /**
     * Takes up to `limit` deliveries that are due, in one transaction: pending
     * ones whose time has come, and in-flight ones whose lease ran out (their
     * process died). Each becomes in_flight under `owner`'s lease, with its
     * attempt row written before anything is sent.
     */
    async claimDue(owner: string, limit: number): Promise<ClaimedAttempt[]> {
      if (limit <= 0) return [];
      // A plain read first (SQLite WAL: never waits for a writer). Idle polls then take no write lock, so
      // they never stall this process's event loop behind a long write of another one (cli import).
      const earliest = await earliestDue(owner);
      if (earliest === null || earliest > isoNow(clock)) return [];
      return store.transaction(async () => {
        if (store.dialect === 'postgres') await store.all(sql`SELECT ${CLAIM_LOCK}`);
        const now = isoNow(clock);
        const leaseExpiresAt = isoIn(leaseMs);
        const claimed: ClaimedAttempt[] = [];
        const endpoints = await activeEndpoints.rows({});
        const activeById = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint]));

        const take = async (delivery: WebhookDeliveryRow, endpoint: WebhookEndpointRow, attemptNumber: number): Promise<void> => {
          const event = await eventById.first({ id: delivery.eventId });
          if (!event) return; // events are never deleted; a delivery without one has nothing to send
          await markInFlight.run({ id: delivery.id, attemptNumber, owner, leaseExpiresAt, now });
          claimed.push(await startAttempt(delivery, endpoint, event, attemptNumber, now));
        };

        // Leases that ran out first: those deliveries have waited longest.
        for (const delivery of await expiredLeases.rows({ now, owner, limit })) {
          await markInterrupted.run({ deliveryId: delivery.id, error: INTERRUPTED_ERROR });
          const endpoint = activeById.get(delivery.endpointId);
          if (delivery.isTest || !endpoint) {
            // A test send is one attempt, made while someone waits; a disabled endpoint takes nothing more.
            await abandon.run({
              id: delivery.id,
              status: delivery.isTest ? 'failed' : 'cancelled',
              lastError: delivery.isTest ? INTERRUPTED_ERROR : 'cancelled: endpoint disabled',
              now,
            });
            continue;
          }
          // The interrupted attempt may never have reached the receiver: send it again under the
          // same number, without spending the retry budget.
          await take(delivery, endpoint, Math.max(1, delivery.attemptCount));
        }

        const room = limit - claimed.length;
        if (room > 0) {
          for (const { delivery, endpoint } of await fairDuePending(endpoints, now, room)) {
            await take(delivery, endpoint, delivery.attemptCount + 1);
          }
        }
        return claimed;
      });
    },

    /**
     * A test send: a delivery row (is_test) already in flight under `owner`, with its attempt
     * row, in a transaction of its own or the caller's. The sample event gets an event row
     * (the delivery references one; fixed id, never fanned out).
     */
    startTestAttempt(endpoint: WebhookEndpointRow, sample: WebhookEventSource, owner: string): Promise<ClaimedAttempt> {
      return store.transaction(async () => {
        const { events, webhookDeliveries } = store.t;
        const now = isoNow(clock);
        await store.run(
          store.db
            .insert(events)
            .values({ id: sample.id, type: sample.type, data: sample.data, createdAt: sample.createdAt })
            .onConflictDoUpdate({ target: events.id, set: { type: sample.type, data: sample.data, createdAt: sample.createdAt } }),
        );
        const delivery = { id: ids.next('dlv'), isTest: true };
        await store.run(
          store.db.insert(webhookDeliveries).values({
            id: delivery.id,
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
        return startAttempt(delivery, endpoint, sample, 1, now);
      });
    },

    /**
     * When something next becomes claimable by a process with `free` slots left:
     * the earliest pending delivery of an active endpoint that `slotRule` would
     * give a slot, or the earliest lease of another process that may run out.
     * Deliveries held back by the rule are left out (waking for one the claim
     * would not take would spin): a send finishing here wakes the dispatcher,
     * one finishing elsewhere is seen at the next poll.
     */
    async nextDueAt(owner: string, free: number): Promise<Date | null> {
      const inFlight = await inFlightCounts();
      const now = isoNow(clock);
      const endpoints = [];
      for (const { id } of await activeEndpoints.rows({})) {
        const at = (await earliestPendingOfEndpoint.first({ endpointId: id }))?.at;
        endpoints.push({ held: inFlight.get(id) ?? 0, at, hasWork: typeof at === 'string' && at <= now });
      }
      const { share, limit } = slotRule(settings, endpoints, free);
      const candidates: string[] = [];
      for (const { held, at, hasWork } of endpoints) {
        if (held >= share || (hasWork && limit === 0)) continue;
        if (typeof at === 'string') candidates.push(at);
      }
      const lease = (await earliestForeignLease.first({ owner }))?.at;
      if (typeof lease === 'string') candidates.push(lease);
      const earliest = candidates.sort()[0];
      return earliest === undefined ? null : new Date(earliest);
    },
  };
}
