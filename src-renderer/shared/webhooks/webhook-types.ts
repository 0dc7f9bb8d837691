import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../../src-api/trpc/root';

/**
 * The shapes the webhook tools (delivery log, test send, payload preview)
 * show: the webhooks service's own, as the console gets them over tRPC, less
 * what REST /me/webhooks leaves out (the dashboard's log keeps no request
 * bytes per attempt), so both apps speak them.
 */
type Outputs = inferRouterOutputs<AppRouter>['webhooks'];
type Inputs = inferRouterInputs<AppRouter>['webhooks'];

export type EventKind = Outputs['list']['eventKinds'][number];
type FullDelivery = Outputs['deliveries']['deliveries'][number];
type FullAttempt = Outputs['delivery']['attempts'][number];
type FullTestResult = Outputs['sendTest'];

export type WebhookDelivery = Omit<FullDelivery, 'endpoint_id' | 'endpoint_url' | 'updated_at'> & { updated_at?: string };
export interface WebhookDeliveryPage {
  deliveries: WebhookDelivery[];
  page: number;
  limit: number;
  total: number;
}
export type DeliveryStatus = WebhookDelivery['status'];
export type WebhookAttempt = Omit<FullAttempt, 'id' | 'request_headers' | 'request_body'> &
  Partial<Pick<FullAttempt, 'id' | 'request_headers' | 'request_body'>>;
export type WebhookDeliveryDetail = WebhookDelivery & { attempts: WebhookAttempt[] };
export type WebhookTestResult = Omit<FullTestResult, 'request'> & Partial<Pick<FullTestResult, 'request'>>;
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
