import { inject, type InjectionKey } from 'vue';
import type { ConsoleError } from '../errors';
import type {
  DeliveriesQuery,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookDeliveryPage,
  WebhookPreview,
  WebhookTestResult,
  EventKind,
} from './webhook-types';

/**
 * How the shared webhook tools reach the server. The console provides one
 * over its tRPC client (any endpoint, as a moderator), the dashboard one over
 * REST /me/webhooks (the account's own endpoints). The components stay the same.
 */
export interface WebhookTools {
  deliveries(query: DeliveriesQuery & { endpointId: string }): Promise<WebhookDeliveryPage>;
  delivery(endpointId: string, deliveryId: string): Promise<WebhookDeliveryDetail>;
  redeliver(endpointId: string, deliveryId: string): Promise<WebhookDelivery>;
  /** Absent where the server offers no bulk redelivery (the dashboard). */
  redeliverFailed?: (input: {
    endpointId: string;
    since: string;
    includeCancelled: boolean;
  }) => Promise<{ redelivered: string[]; skipped: number }>;
  sendTest(endpointId: string, event: EventKind): Promise<WebhookTestResult>;
  preview(endpointId: string): Promise<WebhookPreview>;
  /** Whether the delivery log offers its filters (status, kind, since, origin). */
  filters: boolean;
  toError(cause: unknown): ConsoleError;
}

export const WEBHOOK_TOOLS: InjectionKey<WebhookTools> = Symbol('webhook-tools');

export function useWebhookTools(): WebhookTools {
  const tools = inject(WEBHOOK_TOOLS);
  if (!tools) throw new Error('No WebhookTools provided: the app provides WEBHOOK_TOOLS at its root');
  return tools;
}
