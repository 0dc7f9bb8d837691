import type { ConsoleError } from '../shared/errors';
import type { EventKind, WebhookPreview } from '../shared/webhooks/webhook-types';
import type {
  Account,
  AccountClaim,
  AccountWebhook,
  AccountWebhookWithSecret,
  ApiKey,
  IssuedKey,
  NewsletterSubscription,
  ListPage,
  AgentReview,
  OwnedAgent,
  OwnedAgentPatch,
  OwnEditRequest,
  EditRequestReceipt,
  RestDelivery,
  RestTestResult,
  UsageDay,
  WebhookInput,
  WebhookPatch,
} from './api-types';

/**
 * The dashboard's one way to the server: the public REST API under /api/v1,
 * same origin, with the session cookie (HttpOnly, so never read here). Every
 * answer that is not a 2xx becomes an ApiError carrying the problem's `code`.
 */
const BASE = '/api/v1';

export class ApiError extends Error implements ConsoleError {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
    readonly pointers: { pointer: string; detail: string }[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let onSessionEnded: (() => void) | undefined;

/** Called when /me refuses the session (expired, or ended elsewhere): the app sends the visitor to sign in. */
export function whenSessionEnds(handler: () => void): void {
  onSessionEnded = handler;
}

type Query = Record<string, string | number | boolean | undefined>;

async function request<T>(method: string, path: string, options: { body?: unknown; query?: Query } = {}): Promise<T> {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) search.set(key, String(value));
  const url = `${BASE}${path}${search.size > 0 ? `?${search}` : ''}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      credentials: 'same-origin',
      headers:
        options.body === undefined ? { Accept: 'application/json' } : { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch {
    throw new ApiError('network_error', 'The server cannot be reached. Is it running?');
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let body: unknown = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: described below by its status.
  }
  if (!response.ok) {
    if (response.status === 401 && path.startsWith('/me/')) onSessionEnded?.();
    throw problemError(response.status, body);
  }
  return body as T;
}

function problemError(status: number, body: unknown): ApiError {
  const problem = (body ?? {}) as { code?: unknown; detail?: unknown; title?: unknown; errors?: unknown };
  const code = typeof problem.code === 'string' ? problem.code : `http_${status}`;
  const message =
    typeof problem.detail === 'string'
      ? problem.detail
      : typeof problem.title === 'string'
        ? problem.title
        : `The server answered ${status}`;
  const pointers = Array.isArray(problem.errors) ? (problem.errors as { pointer: string; detail: string }[]) : [];
  return new ApiError(code, message, status, pointers);
}

/** Lists answer `{"<items>": […], page, limit, total}`; this takes the items out under one name. */
async function list<T>(path: string, key: string, query: Query = {}): Promise<ListPage<T>> {
  const body = await request<Record<string, unknown>>('GET', path, { query });
  return {
    items: (body[key] as T[] | undefined) ?? [],
    page: Number(body.page ?? 1),
    limit: Number(body.limit ?? 20),
    total: Number(body.total ?? 0),
  };
}

const id = encodeURIComponent;

export const api = {
  accounts: {
    signUp: (input: { email: string; password: string; name: string }) =>
      request<{ status: 'verification_sent' }>('POST', '/accounts', { body: input }),
    verifyEmail: (token: string) => request<Account>('POST', '/accounts/verify-email', { body: { token } }),
    requestPasswordReset: (email: string) => request<{ status: string }>('POST', '/accounts/password-reset', { body: { email } }),
    confirmPasswordReset: (token: string, password: string) =>
      request<unknown>('POST', '/accounts/password-reset/confirm', { body: { token, password } }),
  },
  /** The pages behind the links in newsletter mails (no account needed). */
  newsletter: {
    confirm: (token: string) => request<NewsletterSubscription>('POST', '/newsletter/confirm', { body: { token } }),
    unsubscribe: (token: string) => request<NewsletterSubscription>('POST', '/newsletter/unsubscribe', { body: { token } }),
  },
  sessions: {
    signIn: (email: string, password: string) => request<{ account: Account }>('POST', '/sessions', { body: { email, password } }),
    signOut: () => request<void>('DELETE', '/sessions/current'),
  },
  me: {
    get: () => request<Account>('GET', '/me'),
    update: (patch: { name: string }) => request<Account>('PATCH', '/me', { body: patch }),
    close: () => request<void>('DELETE', '/me'),
    usage: (days: number) => request<{ days: UsageDay[] }>('GET', '/me/usage', { query: { days } }),
  },
  keys: {
    list: () => list<ApiKey>('/me/keys', 'keys'),
    create: (name: string) => request<IssuedKey>('POST', '/me/keys', { body: { name } }),
    revoke: (keyId: string) => request<void>('DELETE', `/me/keys/${id(keyId)}`),
  },
  webhooks: {
    list: () => list<AccountWebhook>('/me/webhooks', 'webhooks'),
    get: (endpointId: string) => request<AccountWebhook>('GET', `/me/webhooks/${id(endpointId)}`),
    create: (input: WebhookInput) => request<AccountWebhookWithSecret>('POST', '/me/webhooks', { body: input }),
    update: (endpointId: string, patch: WebhookPatch) =>
      request<AccountWebhook>('PATCH', `/me/webhooks/${id(endpointId)}`, { body: patch }),
    remove: (endpointId: string) => request<void>('DELETE', `/me/webhooks/${id(endpointId)}`),
    rotateSecret: (endpointId: string) => request<AccountWebhookWithSecret>('POST', `/me/webhooks/${id(endpointId)}/rotate-secret`),
    test: (endpointId: string, event: EventKind) =>
      request<RestTestResult>('POST', `/me/webhooks/${id(endpointId)}/test`, { body: { event } }),
    deliveries: (endpointId: string, query: { page?: number; limit?: number }) =>
      list<RestDelivery>(`/me/webhooks/${id(endpointId)}/deliveries`, 'deliveries', query),
    redeliver: (endpointId: string, deliveryId: string) =>
      request<RestDelivery>('POST', `/me/webhooks/${id(endpointId)}/deliveries/${id(deliveryId)}/redeliver`),
    preview: (endpointId: string) => request<WebhookPreview>('GET', `/me/webhooks/${id(endpointId)}/preview`),
  },
  claims: {
    list: (query: { page?: number; limit?: number } = {}) => list<AccountClaim>('/me/claims', 'claims', query),
    verify: (claimId: string) => request<AccountClaim>('POST', `/claims/${id(claimId)}/verify`),
    /** A claim made signed in belongs to the account: once verified, the account owns the agent. */
    create: (input: { agent_id: string; claimant_name: string; claimant_email: string }) =>
      request<AccountClaim>('POST', '/claims', { body: input }),
  },
  agents: {
    list: (query: { page?: number; limit?: number } = {}) => list<OwnedAgent>('/me/agents', 'agents', query),
    /** 200 with the profile, or 202 with an edit request when the patch renames the agent or moves its source. */
    update: (agentId: string, patch: OwnedAgentPatch) =>
      request<OwnedAgent | EditRequestReceipt>('PATCH', `/me/agents/${id(agentId)}`, { body: patch }),
    setStatus: (agentId: string, status: 'active' | 'deprecated', message?: string) =>
      request<OwnedAgent>('POST', `/me/agents/${id(agentId)}/status`, { body: { status, ...(message ? { message } : {}) } }),
    /** The public reviews of the agent, newest first, each with the owner's reply. */
    reviews: (agentId: string, query: { page?: number; limit?: number } = {}) =>
      list<AgentReview>(`/agents/${id(agentId)}/reviews`, 'reviews', query),
    /** The renames and source moves the account asked for, newest first, with the moderators' reasons. */
    editRequests: (query: { page?: number; limit?: number; status?: OwnEditRequest['status'] } = {}) =>
      list<OwnEditRequest>('/me/edit-requests', 'edit_requests', query),
    /** 201 with the review and its reply; replying again replaces the reply. */
    reply: (agentId: string, reviewId: string, body: string) =>
      request<AgentReview>('POST', `/me/agents/${id(agentId)}/reviews/${id(reviewId)}/reply`, { body: { body } }),
  },
};

/** Any thrown value as the screens show it. */
export function toApiError(cause: unknown): ApiError {
  if (cause instanceof ApiError) return cause;
  return new ApiError('client_error', cause instanceof Error ? cause.message : String(cause));
}
