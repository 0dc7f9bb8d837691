import type { WebhookTools } from './shared/webhooks/webhook-tools';
import { toConsoleError, trpc } from './trpc';

/** The shared webhook tools over the console's tRPC client: any endpoint, as a moderator. */
export const consoleWebhookTools: WebhookTools = {
  deliveries: (query) => trpc.webhooks.deliveries.query(query),
  delivery: (_endpointId, deliveryId) => trpc.webhooks.delivery.query({ id: deliveryId }),
  redeliver: (_endpointId, deliveryId) => trpc.webhooks.redeliver.mutate({ id: deliveryId }),
  redeliverFailed: (input) => trpc.webhooks.redeliverFailed.mutate(input),
  sendTest: (endpointId, event) => trpc.webhooks.sendTest.mutate({ id: endpointId, event }),
  preview: (endpointId) => trpc.webhooks.preview.query({ id: endpointId }),
  filters: true,
  toError: toConsoleError,
};
