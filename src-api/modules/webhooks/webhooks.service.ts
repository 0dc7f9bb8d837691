import { and, asc, count, desc, eq, gte, inArray, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { Config } from '../../config';
import { inTransaction, type Db } from '../../db/client';
import type { Store } from '../../db/store';
import { ConflictError, NotFoundError, StaleVersionError, ValidationError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { Page } from '../../lib/schemas';
import type { AuditService } from '../audit/audit.service';
import type { EventsService } from '../events/events.service';
import { events, type EventType } from '../events/events.table';
import {
  ALL_SAMPLE_EVENTS,
  buildWebhookRequest,
  generateWebhookSecret,
  NODE_VERIFY_SNIPPET,
  PYTHON_VERIFY_SNIPPET,
  sampleEvent,
  SECRET_OVERLAP_MS,
  WEBHOOK_HEADERS,
} from './webhooks.payload';
import { createDeliveryQueue, newLeaseOwner } from './webhooks.queue';
import {
  endpointInputSchema,
  endpointPatchSchema,
  eventTypeSchema,
  listDeliveriesQuerySchema,
  redeliverFailedInputSchema,
  type EndpointInput,
  type EndpointPatch,
  type ListDeliveriesQuery,
  type RedeliverFailedInput,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookDeliveryDetail,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
  type WebhookPreview,
  type WebhookTestResult,
} from './webhooks.schemas';
import { sendWebhook, type WebhookSender } from './webhooks.sender';
import {
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
} from './webhooks.table';

export interface WebhooksServiceDeps {
  db: Db;
  /** The fan-out's in-transaction form (events.recordInTransaction) runs through it. */
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  events: EventsService;
  audit: AuditService;
  config: Pick<Config, 'webhooks' | 'allowPrivateUrls'>;
  /** How test sends go out; the dispatcher is given the same one. */
  send?: WebhookSender;
  /** Source of the retry jitter, in [0, 1). */
  random?: () => number;
  /** Source of endpoint secrets. */
  secretBytes?: (bytes: number) => Buffer;
}

/** An endpoint as the console lists it: with its latest delivery, or null before the first one. */
export interface WebhookEndpointSummary extends WebhookEndpoint {
  last_delivery: WebhookDelivery | null;
}

/** Who did it, for the audit log ("cli", a moderator's name, …). */
export interface ActorOptions {
  actor: string;
}

export interface VersionedActorOptions extends ActorOptions {
  /** The version the caller last saw; a different current version is a conflict. */
  expectedVersion?: number;
}

export function toWebhookEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    active: row.active,
    disabled_reason: row.disabledReason,
    consecutive_failures: row.consecutiveFailures,
    version: row.version,
    scope: row.scope,
    owner_account_id: row.ownerAccountId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

function toWebhookAttempt(row: WebhookAttemptRow): WebhookAttempt {
  return {
    id: row.id,
    attempt_number: row.attemptNumber,
    request_headers: row.requestHeaders,
    request_body: row.requestBody,
    status_code: row.statusCode,
    latency_ms: row.latencyMs,
    response_excerpt: row.responseExcerpt,
    error: row.error,
    started_at: row.startedAt,
  };
}

function toWebhookDelivery(row: WebhookDeliveryRow, eventType: EventType, endpointUrl: string): WebhookDelivery {
  return {
    id: row.id,
    event_id: row.eventId,
    event_type: eventType,
    endpoint_id: row.endpointId,
    endpoint_url: endpointUrl,
    status: row.status,
    attempt_count: row.attemptCount,
    next_attempt_at: row.nextAttemptAt,
    is_test: row.isTest,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const errors = result.error.issues.map((issue) => ({ pointer: `/${issue.path.join('/')}`, detail: issue.message }));
  throw new ValidationError(`The ${what} is not valid: ${errors.map((e) => `${e.pointer} ${e.detail}`).join('; ')}`, errors);
}

/**
 * Webhook endpoints (who gets what), the delivery log (what was sent, what
 * came back), redelivery, test sends and payload previews. Deliveries are
 * queued by an events listener, in the transaction that records the event;
 * the dispatcher (webhooks.dispatcher.ts) sends them.
 */
export function createWebhooksService({
  db,
  store,
  clock,
  ids,
  events: eventsService,
  audit,
  config,
  send = sendWebhook,
  random,
  secretBytes,
}: WebhooksServiceDeps) {
  const queue = createDeliveryQueue({ db, store, clock, ids, audit, config, random });

  // Fan-out inside the recording transaction: an event and its deliveries commit (or vanish) together.
  eventsService.addListener({
    sync: (event) => void queue.fanOut(event),
    inTransaction: async (event) => void (await queue.fanOutInTransaction(event)),
  });

  const findEndpoint = (id: string): WebhookEndpointRow | undefined =>
    db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get();

  const requireEndpoint = (id: string): WebhookEndpointRow => {
    const row = findEndpoint(id);
    if (!row) throw new NotFoundError('Webhook endpoint', id);
    return row;
  };

  const checkVersion = (row: WebhookEndpointRow, expectedVersion: number | undefined): void => {
    if (expectedVersion !== undefined && expectedVersion !== row.version) throw new StaleVersionError('Webhook endpoint', row.id);
  };

  /** Writes changes, bumping version and updated_at; returns the new row. Call inside a transaction. */
  const writeEndpoint = (current: WebhookEndpointRow, changes: Partial<WebhookEndpointRow>): WebhookEndpointRow => {
    const next: WebhookEndpointRow = { ...current, ...changes, version: current.version + 1, updatedAt: isoNow(clock) };
    db.update(webhookEndpoints).set(next).where(eq(webhookEndpoints.id, current.id)).run();
    return next;
  };

  const deliveryQuery = () =>
    db
      .select({ delivery: webhookDeliveries, eventType: events.type, endpointUrl: webhookEndpoints.url })
      .from(webhookDeliveries)
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId));

  const requireDelivery = (id: string): WebhookDelivery => {
    const found = deliveryQuery().where(eq(webhookDeliveries.id, id)).get();
    if (!found) throw new NotFoundError('Webhook delivery', id);
    return toWebhookDelivery(found.delivery, found.eventType, found.endpointUrl);
  };

  const service = {
    /** The queue the dispatcher works on (shared, so this process's events wake it at once). */
    queue,

    /** Adds an endpoint; `ownerAccountId` when an account adds it from its dashboard. */
    add(input: EndpointInput, options: ActorOptions & { ownerAccountId?: string }): WebhookEndpointWithSecret {
      const parsed = parseOrThrow(endpointInputSchema, input, 'webhook endpoint');
      const now = isoNow(clock);
      const row: WebhookEndpointRow = {
        id: ids.next('whk'),
        url: parsed.url,
        events: parsed.events,
        secret: generateWebhookSecret(secretBytes),
        previousSecret: null,
        previousSecretExpiresAt: null,
        description: parsed.description,
        active: true,
        disabledReason: null,
        consecutiveFailures: 0,
        version: 1,
        ownerAccountId: options.ownerAccountId ?? null,
        scope: parsed.scope,
        createdAt: now,
        updatedAt: now,
      };
      inTransaction(db, () => {
        db.insert(webhookEndpoints).values(row).run();
        audit.record({
          actor: options.actor,
          action: 'webhook.create',
          entityType: 'webhook_endpoint',
          entityId: row.id,
          after: toWebhookEndpoint(row),
        });
      });
      return { ...toWebhookEndpoint(row), secret: row.secret };
    },

    /** Every endpoint, oldest first; secrets are never listed. */
    list(): WebhookEndpoint[] {
      return db
        .select()
        .from(webhookEndpoints)
        .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id))
        .all()
        .map(toWebhookEndpoint);
    },

    get(id: string): WebhookEndpoint {
      return toWebhookEndpoint(requireEndpoint(id));
    },

    /** An account's endpoints, oldest first, each with its latest delivery. */
    listForAccount(accountId: string): WebhookEndpointSummary[] {
      return service.listWithLastDelivery().filter((endpoint) => endpoint.owner_account_id === accountId);
    },

    /** The endpoint if the account owns it; anyone else's (or none) is a 404, as if it did not exist. */
    getOwned(accountId: string, id: string): WebhookEndpoint {
      const row = findEndpoint(id);
      if (!row || row.ownerAccountId !== accountId) throw new NotFoundError('Webhook endpoint', id);
      return toWebhookEndpoint(row);
    },

    /** A delivery if it went to an endpoint the account owns; otherwise a 404. */
    getOwnedDelivery(accountId: string, deliveryId: string): WebhookDeliveryDetail {
      const detail = service.getDelivery(deliveryId);
      const endpoint = findEndpoint(detail.endpoint_id);
      if (!endpoint || endpoint.ownerAccountId !== accountId) throw new NotFoundError('Webhook delivery', deliveryId);
      return detail;
    },

    countForAccount(accountId: string): number {
      return db.select({ n: count() }).from(webhookEndpoints).where(eq(webhookEndpoints.ownerAccountId, accountId)).get()?.n ?? 0;
    },

    /** Removes every endpoint of an account (closing it); call inside the closing transaction. */
    removeAllOfAccount(accountId: string, actor: string): void {
      const owned = db
        .select({ id: webhookEndpoints.id })
        .from(webhookEndpoints)
        .where(eq(webhookEndpoints.ownerAccountId, accountId))
        .all();
      for (const { id } of owned) service.remove(id, { actor });
    },

    /**
     * Every endpoint (oldest first, no secrets) with its latest delivery, test
     * sends included: what the console's endpoint list shows beside each one.
     */
    listWithLastDelivery(): WebhookEndpointSummary[] {
      return service.list().map((endpoint) => {
        const latest = deliveryQuery()
          .where(eq(webhookDeliveries.endpointId, endpoint.id))
          .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
          .limit(1)
          .get();
        return { ...endpoint, last_delivery: latest ? toWebhookDelivery(latest.delivery, latest.eventType, latest.endpointUrl) : null };
      });
    },

    /** The secret, on demand (audited: someone saw it). */
    revealSecret(id: string, options: ActorOptions): WebhookEndpointWithSecret {
      const row = requireEndpoint(id);
      audit.record({ actor: options.actor, action: 'webhook.reveal_secret', entityType: 'webhook_endpoint', entityId: id });
      return { ...toWebhookEndpoint(row), secret: row.secret };
    },

    /** Changes URL, subscribed kinds or description. Deliveries still waiting go to the new URL. */
    update(id: string, patch: EndpointPatch, options: VersionedActorOptions): WebhookEndpoint {
      const parsed = parseOrThrow(endpointPatchSchema, patch, 'webhook endpoint change');
      return inTransaction(db, () => {
        const current = requireEndpoint(id);
        checkVersion(current, options.expectedVersion);
        const changes: Partial<WebhookEndpointRow> = {};
        if (parsed.url !== undefined && parsed.url !== current.url) changes.url = parsed.url;
        if (parsed.events !== undefined && JSON.stringify(parsed.events) !== JSON.stringify(current.events)) changes.events = parsed.events;
        if (parsed.description !== undefined && parsed.description !== current.description) changes.description = parsed.description;
        if (parsed.scope !== undefined && parsed.scope !== current.scope) changes.scope = parsed.scope;
        if (Object.keys(changes).length === 0) return toWebhookEndpoint(current);
        const next = writeEndpoint(current, changes);
        audit.record({
          actor: options.actor,
          action: 'webhook.update',
          entityType: 'webhook_endpoint',
          entityId: id,
          before: toWebhookEndpoint(current),
          after: toWebhookEndpoint(next),
        });
        return toWebhookEndpoint(next);
      });
    },

    /**
     * Enables or disables an endpoint. Disabling cancels the deliveries still
     * waiting for it; enabling clears the failure count and the reason
     * (cancelled deliveries can be sent again with redeliverFailed).
     */
    setActive(id: string, active: boolean, options: VersionedActorOptions & { reason?: string }): WebhookEndpoint {
      return inTransaction(db, () => {
        const current = requireEndpoint(id);
        checkVersion(current, options.expectedVersion);
        if (current.active === active) return toWebhookEndpoint(current);
        const reason = options.reason?.trim() || `disabled by ${options.actor}`;
        const next = writeEndpoint(
          current,
          active ? { active: true, disabledReason: null, consecutiveFailures: 0 } : { active: false, disabledReason: reason },
        );
        if (!active) queue.cancelPendingOf(id, `cancelled: endpoint disabled (${reason})`);
        audit.record({
          actor: options.actor,
          action: active ? 'webhook.enable' : 'webhook.disable',
          entityType: 'webhook_endpoint',
          entityId: id,
          before: { active: current.active, disabled_reason: current.disabledReason },
          after: { active: next.active, disabled_reason: next.disabledReason },
        });
        return toWebhookEndpoint(next);
      });
    },

    /**
     * A new secret, signing every attempt from now on (retries too). The old one
     * stays valid for SECRET_OVERLAP_MS: meanwhile `webhook-signature` carries
     * both signatures, so receivers switch without losing a delivery. A second
     * rotation within the overlap drops the oldest secret.
     */
    rotateSecret(id: string, options: VersionedActorOptions): WebhookEndpointWithSecret {
      return inTransaction(db, () => {
        const current = requireEndpoint(id);
        checkVersion(current, options.expectedVersion);
        const previousSecretExpiresAt = new Date(clock.now().getTime() + SECRET_OVERLAP_MS).toISOString();
        const next = writeEndpoint(current, {
          secret: generateWebhookSecret(secretBytes),
          previousSecret: current.secret,
          previousSecretExpiresAt,
        });
        audit.record({
          actor: options.actor,
          action: 'webhook.rotate_secret',
          entityType: 'webhook_endpoint',
          entityId: id,
          after: { previous_secret_valid_until: previousSecretExpiresAt },
        });
        return { ...toWebhookEndpoint(next), secret: next.secret, previous_secret_expires_at: previousSecretExpiresAt };
      });
    },

    /**
     * Deletes the endpoint and its delivery log (the events stay; the audit log
     * keeps the endpoint as it was). To keep the log, disable it instead. A
     * send in flight in another process finishes, and its result is dropped.
     */
    remove(id: string, options: ActorOptions): WebhookEndpoint {
      return inTransaction(db, () => {
        const current = requireEndpoint(id);
        queue.deleteDeliveriesOf(id);
        db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id)).run();
        audit.record({
          actor: options.actor,
          action: 'webhook.delete',
          entityType: 'webhook_endpoint',
          entityId: id,
          before: toWebhookEndpoint(current),
        });
        return toWebhookEndpoint(current);
      });
    },

    /** Deliveries, newest first, filtered for the console. */
    listDeliveries(query: ListDeliveriesQuery = {}): Page<WebhookDelivery> {
      const parsed = parseOrThrow(listDeliveriesQuerySchema, query, 'delivery filter');
      const filters: SQL[] = [];
      if (parsed.endpointId) filters.push(eq(webhookDeliveries.endpointId, parsed.endpointId));
      if (parsed.status) filters.push(eq(webhookDeliveries.status, parsed.status));
      if (parsed.eventType) filters.push(eq(events.type, parsed.eventType));
      if (parsed.since) filters.push(gte(webhookDeliveries.createdAt, parsed.since));
      if (parsed.isTest !== undefined) filters.push(eq(webhookDeliveries.isTest, parsed.isTest));
      const where = filters.length > 0 ? and(...filters) : undefined;
      const rows = deliveryQuery()
        .where(where)
        .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
        .limit(parsed.limit)
        .offset((parsed.page - 1) * parsed.limit)
        .all();
      const total =
        db.select({ n: count() }).from(webhookDeliveries).innerJoin(events, eq(events.id, webhookDeliveries.eventId)).where(where).get()
          ?.n ?? 0;
      return {
        items: rows.map((row) => toWebhookDelivery(row.delivery, row.eventType, row.endpointUrl)),
        page: parsed.page,
        limit: parsed.limit,
        total,
      };
    },

    /** One delivery with every attempt, in order: what was sent and what came back. */
    getDelivery(id: string): WebhookDeliveryDetail {
      const delivery = requireDelivery(id);
      const attempts = db
        .select()
        .from(webhookAttempts)
        .where(eq(webhookAttempts.deliveryId, id))
        .orderBy(asc(webhookAttempts.startedAt), asc(webhookAttempts.attemptNumber))
        .all()
        .map(toWebhookAttempt);
      return { ...delivery, attempts };
    },

    /**
     * Sends a delivery's event to its endpoint again, as a new delivery: same
     * event id and body (receivers drop duplicates by id), new delivery id.
     */
    redeliver(deliveryId: string, options: ActorOptions): WebhookDelivery {
      const newId = inTransaction(db, () => {
        const original = requireDelivery(deliveryId);
        if (original.is_test) throw new ConflictError('A test delivery cannot be redelivered; send a new test event instead');
        const endpoint = requireEndpoint(original.endpoint_id);
        if (!endpoint.active) throw new ConflictError(`Webhook endpoint "${endpoint.id}" is disabled; enable it before redelivering`);
        const id = queue.enqueue(original.event_id, original.endpoint_id);
        audit.record({
          actor: options.actor,
          action: 'webhook.redeliver',
          entityType: 'webhook_delivery',
          entityId: id,
          before: { delivery_id: deliveryId },
          after: { delivery_id: id, event_id: original.event_id },
        });
        return id;
      });
      return requireDelivery(newId);
    },

    /**
     * Redelivers every delivery that ended failed (and, if asked, cancelled)
     * at or after `since`, optionally for one endpoint. Deliveries of disabled
     * endpoints are skipped and counted.
     */
    redeliverFailed(input: RedeliverFailedInput, options: ActorOptions): { redelivered: string[]; skipped: number } {
      const parsed = parseOrThrow(redeliverFailedInputSchema, input, 'redelivery request');
      return inTransaction(db, () => {
        const statuses: Array<'failed' | 'cancelled'> = parsed.includeCancelled ? ['failed', 'cancelled'] : ['failed'];
        const filters: SQL[] = [
          inArray(webhookDeliveries.status, statuses),
          eq(webhookDeliveries.isTest, false),
          gte(webhookDeliveries.updatedAt, parsed.since),
        ];
        if (parsed.endpointId) {
          requireEndpoint(parsed.endpointId);
          filters.push(eq(webhookDeliveries.endpointId, parsed.endpointId));
        }
        const candidates = db
          .select({ eventId: webhookDeliveries.eventId, endpointId: webhookDeliveries.endpointId, active: webhookEndpoints.active })
          .from(webhookDeliveries)
          .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
          .where(and(...filters))
          .orderBy(asc(webhookDeliveries.createdAt))
          .all();
        const redelivered: string[] = [];
        const seen = new Set<string>();
        let skipped = 0;
        for (const candidate of candidates) {
          if (!candidate.active) {
            skipped++;
            continue;
          }
          // One event failed twice for one endpoint (say, redelivered and failed again) is sent once.
          const key = `${candidate.eventId}\u0000${candidate.endpointId}`;
          if (seen.has(key)) continue;
          seen.add(key);
          redelivered.push(queue.enqueue(candidate.eventId, candidate.endpointId));
        }
        audit.record({
          actor: options.actor,
          action: 'webhook.redeliver_failed',
          entityType: 'webhook_endpoint',
          entityId: parsed.endpointId ?? '*',
          after: { since: parsed.since, include_cancelled: parsed.includeCancelled, redelivered: redelivered.length, skipped },
        });
        return { redelivered, skipped };
      });
    },

    /**
     * For each event kind (or just `kind`): the exact body, signature and
     * headers a delivery of the kind's sample event to this endpoint carries,
     * and receiver code that verifies them. A test send of the same kind sends
     * the same body and signature.
     */
    preview(endpointId: string, kind?: EventType): WebhookPreview {
      const endpoint = requireEndpoint(endpointId);
      const samples = kind === undefined ? ALL_SAMPLE_EVENTS : [sampleEvent(parseOrThrow(eventTypeSchema, kind, 'event kind'))];
      return {
        endpoint_id: endpoint.id,
        url: endpoint.url,
        previews: samples.map((sample) => {
          const { body, headers } = buildWebhookRequest(
            endpoint,
            sample,
            { id: 'dlv_preview', attemptNumber: 1, isTest: true },
            clock.now(),
          );
          return { event: sample.type, body, signature: headers[WEBHOOK_HEADERS.signature]!, headers };
        }),
        verification: { node: NODE_VERIFY_SNIPPET, python: PYTHON_VERIFY_SNIPPET },
      };
    },

    /**
     * Sends the sample event of `kind` to the endpoint now (even a disabled
     * one: that is how one checks it before enabling it) and reports the
     * receiver's answer. Logged as a delivery with is_test; one attempt, no
     * retries, and it never changes the endpoint's failure count or state.
     */
    async sendTest(endpointId: string, kind: EventType, options: ActorOptions): Promise<WebhookTestResult> {
      const type = parseOrThrow(eventTypeSchema, kind, 'event kind');
      const endpoint = requireEndpoint(endpointId);
      const owner = newLeaseOwner('test');
      const claimed = queue.startTestAttempt(endpoint, sampleEvent(type), owner);
      audit.record({
        actor: options.actor,
        action: 'webhook.test',
        entityType: 'webhook_endpoint',
        entityId: endpointId,
        after: { delivery_id: claimed.deliveryId, event: type },
      });
      const outcome = await send(claimed.request, { timeoutMs: config.webhooks.timeoutMs, allowPrivateUrls: config.allowPrivateUrls });
      queue.recordOutcome(claimed, outcome, owner);
      return {
        ok: outcome.ok,
        delivery_id: claimed.deliveryId,
        event_id: claimed.eventId,
        event: type,
        status_code: outcome.statusCode,
        latency_ms: outcome.latencyMs,
        response_excerpt: outcome.responseExcerpt,
        error: outcome.error,
        request: claimed.request,
      };
    },
  };
  return service;
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
