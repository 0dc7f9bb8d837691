import type { Config } from '../../config';
import type { Store } from '../../db/store';
import type { Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { AuditService } from '../audit/audit.service';
import type { EventsService } from '../events/events.service';
import { createEndpoints } from './webhooks.endpoints';
import { createDeliveryLog } from './webhooks.log';
import { createDeliveryQueue } from './webhooks.queue';
import { sendWebhook, type WebhookSender } from './webhooks.sender';
import { createTestSends } from './webhooks.test-sends';

export type { ActorOptions, VersionedActorOptions, WebhookEndpointSummary } from './webhooks.rows';
export { toWebhookEndpoint } from './webhooks.rows';

export interface WebhooksServiceDeps {
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

/**
 * Webhook endpoints (who gets what: webhooks.endpoints.ts), the delivery log
 * (what was sent, what came back) and redelivery (webhooks.log.ts), test sends
 * and payload previews (webhooks.test-sends.ts), all through the store.
 * Deliveries are queued by an events listener, in the transaction that records
 * the event (webhooks.fan-out.ts); the dispatcher (webhooks.dispatcher.ts) sends them.
 */
export function createWebhooksService({
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
  const queue = createDeliveryQueue({ store, clock, ids, audit, config, random });

  // Fan-out inside the recording transaction: an event and its deliveries commit (or vanish) together.
  eventsService.addListener(async (event) => void (await queue.fanOutInTransaction(event)));

  const endpoints = createEndpoints({ store, clock, ids, audit, queue, secretBytes });
  const log = createDeliveryLog({ store, audit, queue, endpoints });
  const testSends = createTestSends({ store, clock, audit, config, queue, endpoints, send });
  const { find: _find, require: _require, ...endpointMethods } = endpoints;

  return {
    /** The queue the dispatcher works on (shared, so this process's events wake it at once). */
    queue,
    ...endpointMethods,
    ...log,
    ...testSends,
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
