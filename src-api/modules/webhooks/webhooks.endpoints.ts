import { asc, count, eq, inArray } from 'drizzle-orm';
import type { Store } from '../../db/store';
import { requireTransaction } from '../../db/store';
import { NotFoundError, StaleVersionError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { AuditService } from '../audit/audit.service';
import { generateWebhookSecret, SECRET_OVERLAP_MS } from './webhooks.payload';
import type { DeliveryQueue } from './webhooks.queue';
import { parseOrThrow, toWebhookEndpoint, type ActorOptions, type VersionedActorOptions } from './webhooks.rows';
import {
  endpointInputSchema,
  endpointPatchSchema,
  type EndpointInput,
  type EndpointPatch,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
} from './webhooks.schemas';
import type { WebhookEndpointRow } from './webhooks.table';

export interface EndpointsDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  audit: AuditService;
  queue: DeliveryQueue;
  /** Source of endpoint secrets. */
  secretBytes?: (bytes: number) => Buffer;
}

/**
 * Webhook endpoints (who gets what) through the store: add, read, change,
 * enable/disable, secrets, remove. Each change is audited in its transaction;
 * the row to change is read FOR UPDATE (PostgreSQL: two changes of one endpoint
 * apply one after the other, and the version check sees the other's).
 */
export function createEndpoints({ store, clock, ids, audit, queue, secretBytes }: EndpointsDeps) {
  const find = (id: string): Promise<WebhookEndpointRow | undefined> =>
    store.first(store.db.select().from(store.t.webhookEndpoints).where(eq(store.t.webhookEndpoints.id, id)));

  const require = async (id: string): Promise<WebhookEndpointRow> => {
    const row = await find(id);
    if (!row) throw new NotFoundError('Webhook endpoint', id);
    return row;
  };

  /** The row to change, locked until the transaction ends. */
  const lock = async (id: string, expectedVersion?: number): Promise<WebhookEndpointRow> => {
    const { webhookEndpoints: endpoints } = store.t;
    const row = await store.first(store.forUpdate(store.db.select().from(endpoints).where(eq(endpoints.id, id))));
    if (!row) throw new NotFoundError('Webhook endpoint', id);
    if (expectedVersion !== undefined && expectedVersion !== row.version) throw new StaleVersionError('Webhook endpoint', row.id);
    return row;
  };

  /** Writes changes, bumping version and updated_at; returns the new row. In the caller's transaction. */
  const write = async (current: WebhookEndpointRow, changes: Partial<WebhookEndpointRow>): Promise<WebhookEndpointRow> => {
    const next: WebhookEndpointRow = { ...current, ...changes, version: current.version + 1, updatedAt: isoNow(clock) };
    await store.run(store.db.update(store.t.webhookEndpoints).set(next).where(eq(store.t.webhookEndpoints.id, current.id)));
    return next;
  };

  /** Removes a locked endpoint with its delivery log (attempts, deliveries, the endpoint), audited; in the caller's transaction. */
  const removeRow = async (row: WebhookEndpointRow, actor: string): Promise<void> => {
    const { webhookAttempts: attempts, webhookDeliveries: deliveries, webhookEndpoints: endpoints } = store.t;
    const logOf = store.db.select({ id: deliveries.id }).from(deliveries).where(eq(deliveries.endpointId, row.id));
    // PostgreSQL: the deliveries locked first, so a dispatcher's claim under way (it holds its deliveries and
    // adds their attempts) commits before the attempts are deleted, and later claims skip them: else an attempt
    // it added after that delete kept its delivery from being deleted (a foreign key violation).
    await store.rows(store.forUpdate(store.db.select({ id: deliveries.id }).from(deliveries).where(eq(deliveries.endpointId, row.id))));
    await store.run(store.db.delete(attempts).where(inArray(attempts.deliveryId, logOf)));
    await store.run(store.db.delete(deliveries).where(eq(deliveries.endpointId, row.id)));
    await store.run(store.db.delete(endpoints).where(eq(endpoints.id, row.id)));
    await audit.recordInTransaction({
      actor,
      action: 'webhook.delete',
      entityType: 'webhook_endpoint',
      entityId: row.id,
      before: toWebhookEndpoint(row),
    });
  };

  const endpoints = {
    find,
    require,

    /** Adds an endpoint; `ownerAccountId` when an account adds it from its dashboard. */
    async add(input: EndpointInput, options: ActorOptions & { ownerAccountId?: string }): Promise<WebhookEndpointWithSecret> {
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
      await store.transaction(async () => {
        await store.run(store.db.insert(store.t.webhookEndpoints).values(row));
        await audit.recordInTransaction({
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
    async list(): Promise<WebhookEndpoint[]> {
      const { webhookEndpoints: table } = store.t;
      const rows = await store.rows(store.db.select().from(table).orderBy(asc(table.createdAt), asc(table.id)));
      return rows.map(toWebhookEndpoint);
    },

    async get(id: string): Promise<WebhookEndpoint> {
      return toWebhookEndpoint(await require(id));
    },

    /** The endpoint if the account owns it; anyone else's (or none) is a 404, as if it did not exist. */
    async getOwned(accountId: string, id: string): Promise<WebhookEndpoint> {
      const row = await find(id);
      if (!row || row.ownerAccountId !== accountId) throw new NotFoundError('Webhook endpoint', id);
      return toWebhookEndpoint(row);
    },

    async countForAccount(accountId: string): Promise<number> {
      const { webhookEndpoints: table } = store.t;
      const row = await store.first(store.db.select({ n: count() }).from(table).where(eq(table.ownerAccountId, accountId)));
      return row?.n ?? 0;
    },

    /** Removes every endpoint of an account (closing it), with their delivery logs, audited; in the caller's store transaction. */
    async removeAllOfAccount(accountId: string, actor: string): Promise<void> {
      requireTransaction(store, 'webhooks.removeAllOfAccount');
      const { webhookEndpoints: table } = store.t;
      const owned = await store.rows(store.forUpdate(store.db.select().from(table).where(eq(table.ownerAccountId, accountId))));
      for (const row of owned) await removeRow(row, actor);
    },

    /** The secret, on demand (audited: someone saw it). */
    async revealSecret(id: string, options: ActorOptions): Promise<WebhookEndpointWithSecret> {
      const row = await store.transaction(async () => {
        const found = await require(id);
        await audit.recordInTransaction({
          actor: options.actor,
          action: 'webhook.reveal_secret',
          entityType: 'webhook_endpoint',
          entityId: id,
        });
        return found;
      });
      return { ...toWebhookEndpoint(row), secret: row.secret };
    },

    /** Changes URL, subscribed kinds or description. Deliveries still waiting go to the new URL. */
    async update(id: string, patch: EndpointPatch, options: VersionedActorOptions): Promise<WebhookEndpoint> {
      const parsed = parseOrThrow(endpointPatchSchema, patch, 'webhook endpoint change');
      return store.transaction(async () => {
        const current = await lock(id, options.expectedVersion);
        const changes: Partial<WebhookEndpointRow> = {};
        if (parsed.url !== undefined && parsed.url !== current.url) changes.url = parsed.url;
        if (parsed.events !== undefined && JSON.stringify(parsed.events) !== JSON.stringify(current.events)) changes.events = parsed.events;
        if (parsed.description !== undefined && parsed.description !== current.description) changes.description = parsed.description;
        if (parsed.scope !== undefined && parsed.scope !== current.scope) changes.scope = parsed.scope;
        if (Object.keys(changes).length === 0) return toWebhookEndpoint(current);
        const next = await write(current, changes);
        await audit.recordInTransaction({
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
    async setActive(id: string, active: boolean, options: VersionedActorOptions & { reason?: string }): Promise<WebhookEndpoint> {
      return store.transaction(async () => {
        const current = await lock(id, options.expectedVersion);
        if (current.active === active) return toWebhookEndpoint(current);
        const reason = options.reason?.trim() || `disabled by ${options.actor}`;
        const next = await write(
          current,
          active ? { active: true, disabledReason: null, consecutiveFailures: 0 } : { active: false, disabledReason: reason },
        );
        if (!active) await queue.cancelPendingOf(id, `cancelled: endpoint disabled (${reason})`);
        await audit.recordInTransaction({
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
    async rotateSecret(id: string, options: VersionedActorOptions): Promise<WebhookEndpointWithSecret> {
      return store.transaction(async () => {
        const current = await lock(id, options.expectedVersion);
        const previousSecretExpiresAt = new Date(clock.now().getTime() + SECRET_OVERLAP_MS).toISOString();
        const next = await write(current, {
          secret: generateWebhookSecret(secretBytes),
          previousSecret: current.secret,
          previousSecretExpiresAt,
        });
        await audit.recordInTransaction({
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
    async remove(id: string, options: ActorOptions): Promise<WebhookEndpoint> {
      return store.transaction(async () => {
        const current = await lock(id);
        await removeRow(current, options.actor);
        return toWebhookEndpoint(current);
      });
    },
  };
  return endpoints;
}

export type Endpoints = ReturnType<typeof createEndpoints>;
