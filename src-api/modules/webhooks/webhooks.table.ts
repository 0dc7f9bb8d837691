import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { events, type EventType } from '../events/events.table';

export const webhookEndpoints = sqliteTable('webhook_endpoints', {
  id: text('id').primaryKey(),
  url: text('url').notNull(),
  /** Subscribed event kinds; empty means all. */
  events: text('events', { mode: 'json' }).$type<EventType[]>().notNull().default([]),
  secret: text('secret').notNull(),
  /** The secret a rotation replaced; it still signs (beside the new one) until previous_secret_expires_at. */
  previousSecret: text('previous_secret'),
  previousSecretExpiresAt: text('previous_secret_expires_at'),
  description: text('description').notNull().default(''),
  active: integer('active', { mode: 'boolean' }).notNull().default(true),
  disabledReason: text('disabled_reason'),
  consecutiveFailures: integer('consecutive_failures').notNull().default(0),
  version: integer('version').notNull().default(1),
  /** The account that owns the endpoint (from its dashboard); null for endpoints of the CLI and the console. */
  ownerAccountId: text('owner_account_id'),
  /** "owned": only events about agents the owner account owns; "all": every event. */
  scope: text('scope').$type<'all' | 'owned'>().notNull().default('all'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});

export type DeliveryStatus = 'pending' | 'in_flight' | 'succeeded' | 'failed' | 'cancelled';

/** One event to one endpoint; fanned out in the transaction that records the event. */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    eventId: text('event_id')
      .notNull()
      .references(() => events.id),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id),
    status: text('status').$type<DeliveryStatus>().notNull().default('pending'),
    attemptCount: integer('attempt_count').notNull().default(0),
    nextAttemptAt: text('next_attempt_at'),
    /** Who holds the delivery while in flight, and until when (a lease, so a crash frees it). */
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: text('lease_expires_at'),
    isTest: integer('is_test', { mode: 'boolean' }).notNull().default(false),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [
    index('webhook_deliveries_due_idx').on(table.status, table.nextAttemptAt),
    index('webhook_deliveries_endpoint_idx').on(table.endpointId, table.createdAt),
    // The fair claim reads each endpoint's due deliveries separately.
    index('webhook_deliveries_endpoint_due_idx').on(table.endpointId, table.status, table.nextAttemptAt),
    index('webhook_deliveries_event_idx').on(table.eventId),
  ],
);

/** Every attempt, with what was sent and what came back. */
export const webhookAttempts = sqliteTable(
  'webhook_attempts',
  {
    id: text('id').primaryKey(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id),
    attemptNumber: integer('attempt_number').notNull(),
    requestHeaders: text('request_headers', { mode: 'json' }).$type<Record<string, string>>().notNull(),
    requestBody: text('request_body').notNull(),
    statusCode: integer('status_code'),
    latencyMs: integer('latency_ms'),
    responseExcerpt: text('response_excerpt'),
    error: text('error'),
    startedAt: text('started_at').notNull(),
  },
  (table) => [index('webhook_attempts_delivery_idx').on(table.deliveryId, table.attemptNumber)],
);

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;
