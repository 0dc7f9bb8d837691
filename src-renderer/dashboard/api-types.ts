import type { EventKind } from '../shared/webhooks/webhook-types';

/**
 * The REST shapes the dashboard reads and writes (CONTRACT.md section 6:
 * /accounts, /sessions, /me/*). Snake_case, times as ISO 8601 UTC strings.
 */

export type Role = 'moderator' | 'admin';

export interface Account {
  id: string;
  email: string;
  name: string;
  email_verified: boolean;
  roles: Role[];
  created_at: string;
}

export interface ApiKey {
  id: string;
  name: string;
  created_at: string;
  /** Only in the answer that issued the key. */
  key?: string;
  last_used_at?: string | null;
  revoked_at?: string | null;
  prefix?: string;
}

export interface IssuedKey extends ApiKey {
  key: string;
}

export interface UsageDay {
  date: string;
  requests: number;
  rate_limited: number;
}

export type WebhookScope = 'all' | 'owned';

export interface AccountWebhook {
  id: string;
  url: string;
  events: EventKind[];
  scope: WebhookScope;
  status: string;
  description?: string | null;
  created_at: string;
  updated_at?: string;
  version?: number;
}

export interface AccountWebhookWithSecret extends AccountWebhook {
  secret: string;
}

export interface WebhookInput {
  url: string;
  events?: EventKind[];
  scope?: WebhookScope;
  description?: string;
}

export interface ClaimVerificationMethod {
  method: string;
  url?: string;
  name?: string;
  value?: string;
}

export interface AccountClaim {
  id: string;
  agent_id: string;
  status: 'pending' | 'verified' | 'rejected' | string;
  claimant_name?: string;
  claimant_email?: string;
  reason?: string | null;
  verification: {
    method: string;
    url: string;
    token: string;
    methods?: ClaimVerificationMethod[];
    verified_by?: string;
  };
  created_at: string;
  updated_at?: string;
}

export interface OwnedAgent {
  id: string;
  name: string;
  tagline: string;
  type: string;
  trust_score: number;
  verified: boolean;
  rating: { average: number | null; count: number };
  status?: string;
  updated_at: string;
}

/** A page of a list endpoint, whatever its items are called on the wire. */
export interface ListPage<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
}
