import type { Config } from '../../config';
import type { Store } from '../../db/store';
import type { Clock } from '../../lib/clock';
import type { AuditService } from '../audit/audit.service';
import type { EventType } from '../events/events.table';
import type { Endpoints } from './webhooks.endpoints';
import {
  ALL_SAMPLE_EVENTS,
  buildWebhookRequest,
  NODE_VERIFY_SNIPPET,
  PYTHON_VERIFY_SNIPPET,
  sampleEvent,
  WEBHOOK_HEADERS,
} from './webhooks.payload';
import { newLeaseOwner, type DeliveryQueue } from './webhooks.queue';
import { parseOrThrow, type ActorOptions } from './webhooks.rows';
import { eventTypeSchema, type WebhookPreview, type WebhookTestResult } from './webhooks.schemas';
import type { WebhookSender } from './webhooks.sender';

export interface TestSendsDeps {
  store: Store;
  clock: Clock;
  audit: AuditService;
  config: Pick<Config, 'webhooks' | 'allowPrivateUrls'>;
  queue: DeliveryQueue;
  endpoints: Endpoints;
  send: WebhookSender;
}

/** Payload previews and test sends: what an endpoint would get, and sending it now. */
export function createTestSends({ store, clock, audit, config, queue, endpoints, send }: TestSendsDeps) {
  return {
    /**
     * For each event kind (or just `kind`): the exact body, signature and
     * headers a delivery of the kind's sample event to this endpoint carries,
     * and receiver code that verifies them. A test send of the same kind sends
     * the same body and signature.
     */
    async preview(endpointId: string, kind?: EventType): Promise<WebhookPreview> {
      const samples = kind === undefined ? ALL_SAMPLE_EVENTS : [sampleEvent(parseOrThrow(eventTypeSchema, kind, 'event kind'))];
      const endpoint = await endpoints.require(endpointId);
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
     * The delivery, its attempt and the audit entry commit before the request
     * goes out (no network I/O in a transaction); the answer is recorded after.
     */
    async sendTest(endpointId: string, kind: EventType, options: ActorOptions): Promise<WebhookTestResult> {
      const type = parseOrThrow(eventTypeSchema, kind, 'event kind');
      const owner = newLeaseOwner('test');
      const claimed = await store.transaction(async () => {
        const endpoint = await endpoints.require(endpointId);
        const started = await queue.startTestAttempt(endpoint, sampleEvent(type), owner);
        await audit.recordInTransaction({
          actor: options.actor,
          action: 'webhook.test',
          entityType: 'webhook_endpoint',
          entityId: endpointId,
          after: { delivery_id: started.deliveryId, event: type },
        });
        return started;
      });
      const outcome = await send(claimed.request, { timeoutMs: config.webhooks.timeoutMs, allowPrivateUrls: config.allowPrivateUrls });
      await queue.recordOutcome(claimed, outcome, owner);
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
}
