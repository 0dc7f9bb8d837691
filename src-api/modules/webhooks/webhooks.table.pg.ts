import { bigint, boolean, index, json, pgTable, text } from 'drizzle-orm/pg-core';
import { events } from '../events/events.table.pg';
import type { EventType } from '../events/events.table';
import type { DeliveryStatus } from './webhooks.table';

/** PostgreSQL twin of webhooks.table.ts: same names, same values (see src-api/db/schema-pg.ts). */
export const webhookEndpoints = pgTable('webhook_endpoints', {
  id: text('id').primaryKey(),
  url: text('url').notNull(),
  events: json('events').$type<EventType[]>().notNull().default([]),
  secret: text('secret').notNull(),
  previousSecret: text('previous_secret'),
  previousSecretExpiresAt: text('previous_secret_expires_at'),
  description: text('description').notNull().default(''),
  active: boolean('active').notNull().default(true),
  disabledReason: text('disabled_reason'),
  consecutiveFailures: bigint('consecutive_failures', { mode: 'number' }).notNull().default(0),
  version: bigint('version', { mode: 'number' }).notNull().default(1),
  ownerAccountId: text('owner_account_id'),
  scope: text('scope').$type<'all' | 'owned'>().notNull().default('all'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});

export const webhookDeliveries = pgTable(
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
    attemptCount: bigint('attempt_count', { mode: 'number' }).notNull().default(0),
    nextAttemptAt: text('next_attempt_at'),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: text('lease_expires_at'),
    isTest: boolean('is_test').notNull().default(false),
    lastStatusCode: bigint('last_status_code', { mode: 'number' }),
    lastError: text('last_error'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (table) => [
    index('webhook_deliveries_due_idx').on(table.status, table.nextAttemptAt),
    index('webhook_deliveries_endpoint_idx').on(table.endpointId, table.createdAt),
    index('webhook_deliveries_endpoint_due_idx').on(table.endpointId, table.status, table.nextAttemptAt),
    index('webhook_deliveries_event_idx').on(table.eventId),
  ],
);

export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: text('id').primaryKey(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id),
    attemptNumber: bigint('attempt_number', { mode: 'number' }).notNull(),
    requestHeaders: json('request_headers').$type<Record<string, string>>().notNull(),
    requestBody: text('request_body').notNull(),
    statusCode: bigint('status_code', { mode: 'number' }),
    latencyMs: bigint('latency_ms', { mode: 'number' }),
    responseExcerpt: text('response_excerpt'),
    error: text('error'),
    startedAt: text('started_at').notNull(),
  },
  (table) => [index('webhook_attempts_delivery_idx').on(table.deliveryId, table.attemptNumber)],
);
