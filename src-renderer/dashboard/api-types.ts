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
  /** The first characters of the key, to tell keys apart. */
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
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
  description: string;
  status: 'active' | 'disabled';
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface AccountWebhookWithSecret extends AccountWebhook {
  secret: string;
  /** After a rotation: until when the old secret still signs. */
  previous_secret_expires_at?: string;
}

export interface WebhookInput {
  url: string;
  events?: EventKind[];
  scope?: WebhookScope;
  description?: string;
}

export type WebhookPatch = Partial<WebhookInput> & { status?: 'active' | 'disabled' };

/** One attempt of a delivery as /me/webhooks/{id}/deliveries lists it (the request itself is not kept there). */
export interface RestAttempt {
  attempt_number: number;
  status_code: number | null;
  latency_ms: number | null;
  response_excerpt: string | null;
  error: string | null;
  started_at: string;
}

export interface RestDelivery {
  id: string;
  event_id: string;
  event_type: EventKind;
  status: 'pending' | 'in_flight' | 'succeeded' | 'failed' | 'cancelled';
  attempt_count: number;
  next_attempt_at: string | null;
  is_test: boolean;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  attempts?: RestAttempt[];
}

export interface RestTestResult {
  ok: boolean;
  delivery_id: string;
  event_id: string;
  event: EventKind;
  status_code: number | null;
  latency_ms: number | null;
  response_excerpt: string | null;
  error: string | null;
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
  description: string;
  source_url: string;
  type: string;
  trust_score: number;
  verified: boolean;
  rating: { average: number | null; count: number };
  status?: 'active' | 'deprecated';
  status_message?: string | null;
  updated_at: string;
}

/** What an owner may change at once (PATCH /me/agents/{id}); a new name or source_url waits for a moderator. */
export interface OwnedAgentPatch {
  tagline?: string;
  description?: string;
  name?: string;
  source_url?: string;
}

/** PATCH /me/agents/{id} when the change waits for a moderator (202). */
export interface EditRequestReceipt {
  id: string;
  status: 'pending';
}

/** A review of an agent as GET /agents/{id}/reviews lists it, with the owner's reply. */
export interface AgentReview {
  id: string;
  agent_id: string;
  rating: number;
  comment: string | null;
  reviewer_name: string | null;
  verified_reviewer: boolean;
  created_at: string;
  reply: { body: string; created_at: string; updated_at: string } | null;
}

/** A rename or source move the account asked for (GET /me/edit-requests). */
export interface OwnEditRequest {
  id: string;
  agent_id: string;
  agent_name: string | null;
  changes: { name?: string; source_url?: string };
  before: { name?: string; source_url?: string };
  status: 'pending' | 'approved' | 'rejected';
  /** The moderator's reason, once rejected. */
  reason: string | null;
  decided_at: string | null;
  created_at: string;
}

/** A page of a list endpoint, whatever its items are called on the wire. */
export interface ListPage<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
}

/** A newsletter address after its confirmation or unsubscribe link (POST /newsletter/confirm, /newsletter/unsubscribe). */
export interface NewsletterSubscription {
  email: string;
  status: 'subscribed' | 'unsubscribed';
}
