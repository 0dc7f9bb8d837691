import type { AccountWebhook } from './api-types';

/** An endpoint's status as a tag: active, or disabled (by its owner, a 410, or failures). */
export function endpointTone(endpoint: AccountWebhook): 'success' | 'error' | 'default' {
  return endpoint.status === 'active' ? 'success' : endpoint.status === 'disabled' ? 'error' : 'default';
}

export function endpointStatusLabel(endpoint: AccountWebhook): string {
  return endpoint.status.charAt(0).toUpperCase() + endpoint.status.slice(1);
}

export const SCOPE_LABELS = { all: 'All agents', owned: 'My agents' } as const;
