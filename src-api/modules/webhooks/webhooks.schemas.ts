import { z } from 'zod';
import { httpUrlSchema, idParamSchema, pageQuerySchema } from '../../lib/schemas';
import { EVENT_TYPES, type EventType } from '../events/events.table';
import type { DeliveryStatus } from './webhooks.table';

/** Validated inputs of the webhooks service; the CLI and the console's router both go through these. */

export const DELIVERY_STATUSES = ['pending', 'in_flight', 'succeeded', 'failed', 'cancelled'] as const satisfies readonly DeliveryStatus[];

export const eventTypeSchema = z.enum(EVENT_TYPES);

/** Subscribed kinds; empty means every kind. Duplicates are dropped, order kept. */
export const subscribedEventsSchema = z
  .array(eventTypeSchema)
  .max(EVENT_TYPES.length * 2)
  .transform((kinds) => [...new Set(kinds)]);

export const MAX_ENDPOINT_DESCRIPTION_LENGTH = 500;

export const ENDPOINT_SCOPES = ['all', 'owned'] as const;
export const endpointScopeSchema = z
  .enum(ENDPOINT_SCOPES)
  .describe('"owned": only events about agents the account owns; "all": every event of the directory');

export const endpointInputSchema = z.strictObject({
  url: httpUrlSchema.describe('Where deliveries are POSTed: an absolute http or https URL'),
  events: subscribedEventsSchema.default([]).describe('Event kinds to receive; empty or omitted means all'),
  description: z.string().trim().max(MAX_ENDPOINT_DESCRIPTION_LENGTH).default(''),
  scope: endpointScopeSchema.default('all'),
});
export type EndpointInput = z.input<typeof endpointInputSchema>;

export const endpointPatchSchema = z.strictObject({
  url: httpUrlSchema.optional(),
  events: subscribedEventsSchema.optional(),
  description: z.string().trim().max(MAX_ENDPOINT_DESCRIPTION_LENGTH).optional(),
  scope: endpointScopeSchema.optional(),
});
export type EndpointPatch = z.input<typeof endpointPatchSchema>;

const isoInstantSchema = z
  .string()
  .refine((value) => !Number.isNaN(Date.parse(value)), 'must be an ISO 8601 date-time')
  .transform((value) => new Date(value).toISOString());

export const listDeliveriesQuerySchema = pageQuerySchema.extend({
  endpointId: idParamSchema.optional(),
  status: z.enum(DELIVERY_STATUSES).optional(),
  eventType: eventTypeSchema.optional(),
  /** Deliveries created at or after this instant. */
  since: isoInstantSchema.optional(),
  /** true: only test sends; false: only real events; omitted: both. */
  isTest: z.boolean().optional(),
});
export type ListDeliveriesQuery = z.input<typeof listDeliveriesQuerySchema>;

export const redeliverFailedInputSchema = z.strictObject({
  /** Deliveries that reached their final failed state at or after this instant. */
  since: isoInstantSchema,
  endpointId: idParamSchema.optional(),
  /** Also deliveries cancelled because their endpoint was disabled. */
  includeCancelled: z.boolean().default(false),
});
export type RedeliverFailedInput = z.input<typeof redeliverFailedInputSchema>;

// ---------------------------------------------------------------------------
// What the service returns (snake_case, like every other API object).

export interface WebhookEndpoint {
  id: string;
  url: string;
  /** Subscribed kinds; empty means all. */
  events: EventType[];
  description: string;
  active: boolean;
  /** Why the endpoint was disabled (410 Gone, too many failures, a moderator), when it was. */
  disabled_reason: string | null;
  consecutive_failures: number;
  version: number;
  /** "owned" sends only events about agents the owner account owns. */
  scope: 'all' | 'owned';
  /** The account that owns the endpoint; null for endpoints of the CLI and the console. */
  owner_account_id: string | null;
  created_at: string;
  updated_at: string;
}

/** Only on creation, rotation and an explicit reveal. */
export interface WebhookEndpointWithSecret extends WebhookEndpoint {
  secret: string;
  /** After a rotation: until when the replaced secret still signs deliveries (beside the new one). */
  previous_secret_expires_at?: string;
}

export interface WebhookDelivery {
  id: string;
  event_id: string;
  event_type: EventType;
  endpoint_id: string;
  endpoint_url: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: string | null;
  is_test: boolean;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookAttempt {
  id: string;
  attempt_number: number;
  request_headers: Record<string, string>;
  request_body: string;
  /** null when no HTTP response came back (refused, timed out, interrupted). */
  status_code: number | null;
  latency_ms: number | null;
  /** The first 1 KiB of the response body. */
  response_excerpt: string | null;
  error: string | null;
  started_at: string;
}

export interface WebhookDeliveryDetail extends WebhookDelivery {
  attempts: WebhookAttempt[];
}

/** What a test send reports: the receiver's answer, and what was sent. */
export interface WebhookTestResult {
  ok: boolean;
  delivery_id: string;
  event_id: string;
  event: EventType;
  status_code: number | null;
  latency_ms: number | null;
  response_excerpt: string | null;
  error: string | null;
  request: { url: string; headers: Record<string, string>; body: string };
}

export interface WebhookPayloadPreview {
  event: EventType;
  body: string;
  signature: string;
  /** As a real delivery sends them; X-Service-Delivery is a placeholder. A test send adds `X-Service-Test: true`. */
  headers: Record<string, string>;
}

export interface WebhookPreview {
  endpoint_id: string;
  url: string;
  previews: WebhookPayloadPreview[];
  verification: { node: string; python: string };
}
