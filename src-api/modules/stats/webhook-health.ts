import type { WebhookEndpoint } from '../webhooks/webhooks.schemas';

/** Webhook endpoints that need a moderator's look, for the overview's queue cards. */
export interface WebhookHealth {
  /** Endpoints in use whose last delivery attempts failed (consecutive_failures > 0). */
  failing: number;
  /** Endpoints switched off: by a 410, after too many failures, or by a moderator. */
  disabled: number;
  /** Every endpoint. */
  total: number;
}

/** Counts from the endpoints' own state (the webhooks service's list), so nothing here reads the delivery log. */
export function summarizeWebhookHealth(endpoints: ReadonlyArray<Pick<WebhookEndpoint, 'active' | 'consecutive_failures'>>): WebhookHealth {
  let failing = 0;
  let disabled = 0;
  for (const endpoint of endpoints) {
    if (!endpoint.active) disabled++;
    else if (endpoint.consecutive_failures > 0) failing++;
  }
  return { failing, disabled, total: endpoints.length };
}
