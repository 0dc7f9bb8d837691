import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../../src-api/trpc/root';

/**
 * The shapes the webhook tools (delivery log, test send, payload preview)
 * show. They are the webhooks service's own, reached by the console over tRPC
 * and by the dashboard over REST (/me/webhooks), so both speak them.
 */
type Outputs = inferRouterOutputs<AppRouter>['webhooks'];
type Inputs = inferRouterInputs<AppRouter>['webhooks'];

export type EventKind = Outputs['list']['eventKinds'][number];
export type WebhookDelivery = Outputs['deliveries']['deliveries'][number];
export type WebhookDeliveryPage = Outputs['deliveries'];
export type DeliveryStatus = WebhookDelivery['status'];
export type WebhookDeliveryDetail = Outputs['delivery'];
export type WebhookAttempt = WebhookDeliveryDetail['attempts'][number];
export type WebhookTestResult = Outputs['sendTest'];
export type WebhookPreview = Outputs['preview'];
export type DeliveriesQuery = Exclude<Inputs['deliveries'], void>;

/** What the tools need to know of an endpoint; the console's and the dashboard's endpoints both have it. */
export interface ToolEndpoint {
  id: string;
  url: string;
  events: readonly EventKind[];
  active: boolean;
  /** Changes with every change of the endpoint (a new secret changes the preview's signature). */
  version: number | string;
}
