import type { z } from 'zod';
import { ValidationError } from '../../errors';
import type { EventType } from '../events/events.table';
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from './webhooks.schemas';
import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointRow } from './webhooks.table';

/** What the webhooks service answers with, made from rows; its option types; input validation. */

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

export function toWebhookAttempt(row: WebhookAttemptRow): WebhookAttempt {
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

export function toWebhookDelivery(row: WebhookDeliveryRow, eventType: EventType, endpointUrl: string): WebhookDelivery {
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

export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const errors = result.error.issues.map((issue) => ({ pointer: `/${issue.path.join('/')}`, detail: issue.message }));
  throw new ValidationError(`The ${what} is not valid: ${errors.map((e) => `${e.pointer} ${e.detail}`).join('; ')}`, errors);
}
