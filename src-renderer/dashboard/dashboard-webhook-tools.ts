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

  const remember = (deliveries: readonly (WebhookDeliveryDetail | object)[]) => {
    for (const delivery of deliveries) if ('attempts' in delivery && Array.isArray(delivery.attempts)) seen.set(delivery.id, delivery);
  };

  return {
    async deliveries(query) {
      const page = typeof query.page === 'number' ? query.page : undefined;
      const limit = typeof query.limit === 'number' ? query.limit : undefined;
      const result = await api.webhooks.deliveries(query.endpointId, { page, limit });
      remember(result.items as WebhookDeliveryDetail[]);
      return { deliveries: result.items, page: result.page, limit: result.limit, total: result.total };
    },
    async delivery(endpointId, deliveryId) {
      const known = seen.get(deliveryId);
      if (known) return known;
      const result = await api.webhooks.deliveries(endpointId, { limit: 100 });
      remember(result.items as WebhookDeliveryDetail[]);
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
