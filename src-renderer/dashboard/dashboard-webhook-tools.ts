import type { WebhookTools } from '../shared/webhooks/webhook-tools';
import type { WebhookDeliveryDetail } from '../shared/webhooks/webhook-types';
import { api, toApiError } from './api';

/**
 * The shared webhook tools over REST /me/webhooks: the account's own
 * endpoints. The log lists deliveries with their attempts, so opening a row
 * reads the attempts from the last page seen (and asks again when missing).
 */
export function createDashboardWebhookTools(): WebhookTools {
  const seen = new Map<string, WebhookDeliveryDetail>();

  const remember = (deliveries: readonly WebhookDeliveryDetail[]) => {
    for (const delivery of deliveries) seen.set(delivery.id, delivery);
  };

  const page = async (endpointId: string, query: { page?: number; limit?: number }) => {
    const result = await api.webhooks.deliveries(endpointId, query);
    const deliveries = result.items.map((delivery) => ({ ...delivery, attempts: delivery.attempts ?? [] }));
    remember(deliveries);
    return { deliveries, page: result.page, limit: result.limit, total: result.total };
  };

  return {
    deliveries: (query) =>
      page(query.endpointId, {
        page: typeof query.page === 'number' ? query.page : undefined,
        limit: typeof query.limit === 'number' ? query.limit : undefined,
      }),
    async delivery(endpointId, deliveryId) {
      const known = seen.get(deliveryId);
      if (known) return known;
      await page(endpointId, { limit: 100 });
      const found = seen.get(deliveryId);
      if (!found) throw toApiError(new Error('This delivery is no longer in the log'));
      return found;
    },
    redeliver: (endpointId, deliveryId) => api.webhooks.redeliver(endpointId, deliveryId),
    sendTest: (endpointId, event) => api.webhooks.test(endpointId, event),
    preview: (endpointId) => api.webhooks.preview(endpointId),
    filters: false,
    toError: toApiError,
  };
}
