import { and, asc, count, desc, eq, gte, inArray, sql, type SQL } from 'drizzle-orm';
import type { Store } from '../../db/store';
import { byteOrder } from '../../db/dialect-sql';
import { ConflictError, NotFoundError } from '../../errors';
import type { Page } from '../../lib/schemas';
import type { AuditService } from '../audit/audit.service';
import type { Endpoints } from './webhooks.endpoints';
import type { DeliveryQueue } from './webhooks.queue';
import { parseOrThrow, toWebhookAttempt, toWebhookDelivery, type ActorOptions, type WebhookEndpointSummary } from './webhooks.rows';
import {
  listDeliveriesQuerySchema,
  redeliverFailedInputSchema,
  type ListDeliveriesQuery,
  type RedeliverFailedInput,
  type WebhookDelivery,
  type WebhookDeliveryDetail,
} from './webhooks.schemas';

export interface DeliveryLogDeps {
  store: Store;
  audit: AuditService;
  queue: DeliveryQueue;
  endpoints: Endpoints;
}

/**
 * The delivery log through the store (what was sent, what came back) and
 * redelivery: the console's and the dashboard's views of webhook_deliveries
 * and webhook_attempts.
 */
export function createDeliveryLog({ store, audit, queue, endpoints }: DeliveryLogDeps) {
  /** Deliveries with their event kind and endpoint URL; `extra` columns beside them. */
  const deliveryQuery = <Extra extends Record<string, SQL.Aliased | SQL>>(extra: Extra = {} as Extra) => {
    const { webhookDeliveries: deliveries, events, webhookEndpoints: endpointsTable } = store.t;
    return store.db
      .select({ delivery: deliveries, eventType: events.type, endpointUrl: endpointsTable.url, ...extra })
      .from(deliveries)
      .innerJoin(events, eq(events.id, deliveries.eventId))
      .innerJoin(endpointsTable, eq(endpointsTable.id, deliveries.endpointId));
  };

  /** Newest first, then by id (in bytes, as SQLite sorts them, on PostgreSQL too). */
  const newestFirst = () => {
    const { webhookDeliveries: deliveries } = store.t;
    return [desc(deliveries.createdAt), desc(byteOrder(store, deliveries.id))];
  };

  const requireDelivery = async (id: string): Promise<WebhookDelivery> => {
    const found = await store.first(deliveryQuery().where(eq(store.t.webhookDeliveries.id, id)));
    if (!found) throw new NotFoundError('Webhook delivery', id);
    return toWebhookDelivery(found.delivery, found.eventType, found.endpointUrl);
  };

  const log = {
    /**
     * Every endpoint (oldest first, no secrets) with its latest delivery, test
     * sends included: what the console's endpoint list shows beside each one.
     */
    async listWithLastDelivery(): Promise<WebhookEndpointSummary[]> {
      const summaries: WebhookEndpointSummary[] = [];
      for (const endpoint of await endpoints.list()) {
        const latest = await store.first(
          deliveryQuery()
            .where(eq(store.t.webhookDeliveries.endpointId, endpoint.id))
            .orderBy(...newestFirst())
            .limit(1),
        );
        summaries.push({
          ...endpoint,
          last_delivery: latest ? toWebhookDelivery(latest.delivery, latest.eventType, latest.endpointUrl) : null,
        });
      }
      return summaries;
    },

    /** An account's endpoints, oldest first, each with its latest delivery. */
    async listForAccount(accountId: string): Promise<WebhookEndpointSummary[]> {
      return (await log.listWithLastDelivery()).filter((endpoint) => endpoint.owner_account_id === accountId);
    },

    /** Deliveries, newest first, filtered for the console. */
    async listDeliveries(query: ListDeliveriesQuery = {}): Promise<Page<WebhookDelivery>> {
      const parsed = parseOrThrow(listDeliveriesQuerySchema, query, 'delivery filter');
      const { webhookDeliveries: deliveries, events } = store.t;
      const filters: SQL[] = [];
      if (parsed.endpointId) filters.push(eq(deliveries.endpointId, parsed.endpointId));
      if (parsed.status) filters.push(eq(deliveries.status, parsed.status));
      if (parsed.eventType) filters.push(eq(events.type, parsed.eventType));
      if (parsed.since) filters.push(gte(deliveries.createdAt, parsed.since));
      if (parsed.isTest !== undefined) filters.push(eq(deliveries.isTest, parsed.isTest));
      const where = filters.length > 0 ? and(...filters) : undefined;
      // The page and its total in one statement, so from one snapshot: read apart, a delivery that turned
      // succeeded between them answered a status filter with a total of 1 and no row (PostgreSQL).
      const rows = await store.rows(
        deliveryQuery({ total: sql<number | string>`count(*) OVER ()` })
          .where(where)
          .orderBy(...newestFirst())
          .limit(parsed.limit)
          .offset((parsed.page - 1) * parsed.limit),
      );
      // An empty first page says total 0 (its own snapshot). A later page past the end has no row to carry
      // the total: counted apart.
      const total =
        rows.length > 0
          ? Number(rows[0]!.total)
          : parsed.page === 1
            ? 0
            : ((
                await store.first(
                  store.db.select({ n: count() }).from(deliveries).innerJoin(events, eq(events.id, deliveries.eventId)).where(where),
                )
              )?.n ?? 0);
      return {
        items: rows.map((row) => toWebhookDelivery(row.delivery, row.eventType, row.endpointUrl)),
        page: parsed.page,
        limit: parsed.limit,
        total,
      };
    },

    /** One delivery with every attempt, in order: what was sent and what came back. */
    async getDelivery(id: string): Promise<WebhookDeliveryDetail> {
      const delivery = await requireDelivery(id);
      const { webhookAttempts: attempts } = store.t;
      const rows = await store.rows(
        store.db.select().from(attempts).where(eq(attempts.deliveryId, id)).orderBy(asc(attempts.startedAt), asc(attempts.attemptNumber)),
      );
      return { ...delivery, attempts: rows.map(toWebhookAttempt) };
    },

    /** A delivery if it went to an endpoint the account owns; otherwise a 404. */
    async getOwnedDelivery(accountId: string, deliveryId: string): Promise<WebhookDeliveryDetail> {
      const detail = await log.getDelivery(deliveryId);
      const endpoint = await endpoints.find(detail.endpoint_id);
      if (!endpoint || endpoint.ownerAccountId !== accountId) throw new NotFoundError('Webhook delivery', deliveryId);
      return detail;
    },

    /**
     * Sends a delivery's event to its endpoint again, as a new delivery: same
     * event id and body (receivers drop duplicates by id), new delivery id.
     */
    async redeliver(deliveryId: string, options: ActorOptions): Promise<WebhookDelivery> {
      const newId = await store.transaction(async () => {
        const original = await requireDelivery(deliveryId);
        if (original.is_test) throw new ConflictError('A test delivery cannot be redelivered; send a new test event instead');
        const endpoint = await endpoints.require(original.endpoint_id);
        if (!endpoint.active) throw new ConflictError(`Webhook endpoint "${endpoint.id}" is disabled; enable it before redelivering`);
        const id = await queue.enqueue(original.event_id, original.endpoint_id);
        await audit.recordInTransaction({
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
    async redeliverFailed(input: RedeliverFailedInput, options: ActorOptions): Promise<{ redelivered: string[]; skipped: number }> {
      const parsed = parseOrThrow(redeliverFailedInputSchema, input, 'redelivery request');
      return store.transaction(async () => {
        const { webhookDeliveries: deliveries, webhookEndpoints: endpointsTable } = store.t;
        const statuses: Array<'failed' | 'cancelled'> = parsed.includeCancelled ? ['failed', 'cancelled'] : ['failed'];
        const filters: SQL[] = [
          inArray(deliveries.status, statuses),
          eq(deliveries.isTest, false),
          gte(deliveries.updatedAt, parsed.since),
        ];
        if (parsed.endpointId) {
          await endpoints.require(parsed.endpointId);
          filters.push(eq(deliveries.endpointId, parsed.endpointId));
        }
        const candidates = await store.rows(
          store.db
            .select({ eventId: deliveries.eventId, endpointId: deliveries.endpointId, active: endpointsTable.active })
            .from(deliveries)
            .innerJoin(endpointsTable, eq(endpointsTable.id, deliveries.endpointId))
            .where(and(...filters))
            .orderBy(asc(deliveries.createdAt)),
        );
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
          redelivered.push(await queue.enqueue(candidate.eventId, candidate.endpointId));
        }
        await audit.recordInTransaction({
          actor: options.actor,
          action: 'webhook.redeliver_failed',
          entityType: 'webhook_endpoint',
          entityId: parsed.endpointId ?? '*',
          after: { since: parsed.since, include_cancelled: parsed.includeCancelled, redelivered: redelivered.length, skipped },
        });
        return { redelivered, skipped };
      });
    },
  };
  return log;
}
