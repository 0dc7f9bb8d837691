import createClient from 'openapi-fetch';
import type { paths } from '../../clients/typescript/src/schema';
import type { ConsoleError } from '../shared/errors';
import type { EventKind } from '../shared/webhooks/webhook-types';
import type { ListPage, OwnEditRequest, OwnedAgentPatch, WebhookInput, WebhookPatch } from './api-types';

/**
 * The dashboard's one way to the server: the public REST API under /api/v1, same origin, with the
 * session cookie (HttpOnly, so never read here), typed end to end by the generated OpenAPI paths
 * (openapi-fetch). Every answer that is not a 2xx becomes an ApiError carrying the problem's `code`.
 */
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

/** Called when /me/* refuses the session (expired, or ended elsewhere): the app sends the visitor to sign in. */
export function whenSessionEnds(handler: () => void): void {
  onSessionEnded = handler;
}

const client = createClient<paths>({ credentials: 'same-origin', headers: { Accept: 'application/json' } });
client.use({
  onResponse({ response, schemaPath }) {
    // GET /me itself answers 401 to a visitor who is simply not signed in.
    if (response.status === 401 && schemaPath.startsWith('/api/v1/me/')) onSessionEnded?.();
  },
});

/** The body of a 2xx answer, or the problem thrown as an ApiError. */
async function ok<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let answer: Awaited<typeof pending>;
  try {
    answer = await pending;
  } catch {
    throw new ApiError('network_error', 'The server cannot be reached. Is it running?');
  }
  if (!answer.response.ok) throw problemError(answer.response.status, answer.error);
  return answer.data as T;
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
async function list<K extends string, T>(
  pending: Promise<{ data?: { [key in K]: T[] } & Omit<ListPage<T>, 'items'>; error?: unknown; response: Response }>,
  key: K,
): Promise<ListPage<T>> {
  const body = await ok(pending);
  return { items: body[key], page: body.page, limit: body.limit, total: body.total };
}

type Paging = { page?: number; limit?: number };
const byId = (id: string) => ({ params: { path: { id } } });

export const api = {
  accounts: {
    signUp: (body: { email: string; password: string; name: string }) => ok(client.POST('/api/v1/accounts', { body })),
    verifyEmail: (token: string) => ok(client.POST('/api/v1/accounts/verify-email', { body: { token } })),
    requestPasswordReset: (email: string) => ok(client.POST('/api/v1/accounts/password-reset', { body: { email } })),
    confirmPasswordReset: (token: string, password: string) =>
      ok(client.POST('/api/v1/accounts/password-reset/confirm', { body: { token, password } })),
  },
  /** The pages behind the links in newsletter mails (no account needed). */
  newsletter: {
    confirm: (token: string) => ok(client.POST('/api/v1/newsletter/confirm', { body: { token } })),
    unsubscribe: (token: string) => ok(client.POST('/api/v1/newsletter/unsubscribe', { body: { token } })),
  },
  sessions: {
    signIn: (email: string, password: string) => ok(client.POST('/api/v1/sessions', { body: { email, password } })),
    signOut: () => ok(client.DELETE('/api/v1/sessions/current')),
  },
  me: {
    get: () => ok(client.GET('/api/v1/me')),
    update: (body: { name: string }) => ok(client.PATCH('/api/v1/me', { body })),
    close: () => ok(client.DELETE('/api/v1/me')),
    usage: (days: number) => ok(client.GET('/api/v1/me/usage', { params: { query: { days } } })),
  },
  keys: {
    /** Every key of the account, newest first (not paged). */
    list: async () => (await ok(client.GET('/api/v1/me/keys'))).keys,
    create: (name: string) => ok(client.POST('/api/v1/me/keys', { body: { name } })),
    revoke: (keyId: string) => ok(client.DELETE('/api/v1/me/keys/{id}', byId(keyId))),
  },
  webhooks: {
    /** Every endpoint of the account (not paged). */
    list: async () => (await ok(client.GET('/api/v1/me/webhooks'))).webhooks,
    get: (endpointId: string) => ok(client.GET('/api/v1/me/webhooks/{id}', byId(endpointId))),
    create: (body: WebhookInput) => ok(client.POST('/api/v1/me/webhooks', { body })),
    update: (endpointId: string, body: WebhookPatch) => ok(client.PATCH('/api/v1/me/webhooks/{id}', { ...byId(endpointId), body })),
    remove: (endpointId: string) => ok(client.DELETE('/api/v1/me/webhooks/{id}', byId(endpointId))),
    rotateSecret: (endpointId: string) => ok(client.POST('/api/v1/me/webhooks/{id}/rotate-secret', byId(endpointId))),
    test: (endpointId: string, event: EventKind) =>
      ok(client.POST('/api/v1/me/webhooks/{id}/test', { ...byId(endpointId), body: { event } })),
    deliveries: (endpointId: string, query: Paging) =>
      list(client.GET('/api/v1/me/webhooks/{id}/deliveries', { params: { path: { id: endpointId }, query } }), 'deliveries'),
    redeliver: (endpointId: string, deliveryId: string) =>
      ok(
        client.POST('/api/v1/me/webhooks/{id}/deliveries/{delivery_id}/redeliver', {
          params: { path: { id: endpointId, delivery_id: deliveryId } },
        }),
      ),
    preview: (endpointId: string) => ok(client.GET('/api/v1/me/webhooks/{id}/preview', byId(endpointId))),
  },
  claims: {
    list: (query: Paging = {}) => list(client.GET('/api/v1/me/claims', { params: { query } }), 'claims'),
    verify: (claimId: string) => ok(client.POST('/api/v1/claims/{id}/verify', { ...byId(claimId), body: {} })),
    /** A claim made signed in belongs to the account: once verified, the account owns the agent. */
    create: (body: { agent_id: string; claimant_name: string; claimant_email: string }) => ok(client.POST('/api/v1/claims', { body })),
  },
  agents: {
    list: (query: Paging = {}) => list(client.GET('/api/v1/me/agents', { params: { query } }), 'agents'),
    /** 200 with the profile, or 202 with an edit request when the patch renames the agent or moves its source. */
    update: (agentId: string, body: OwnedAgentPatch) => ok(client.PATCH('/api/v1/me/agents/{id}', { ...byId(agentId), body })),
    setStatus: (agentId: string, status: 'active' | 'deprecated', message?: string) =>
      ok(client.POST('/api/v1/me/agents/{id}/status', { ...byId(agentId), body: { status, ...(message ? { message } : {}) } })),
    /** The public reviews of the agent, newest first, each with the owner's reply. */
    reviews: (agentId: string, query: Paging = {}) =>
      list(client.GET('/api/v1/agents/{id}/reviews', { params: { path: { id: agentId }, query } }), 'reviews'),
    /** The renames and source moves the account asked for, newest first, with the moderators' reasons. */
    editRequests: (query: Paging & { status?: OwnEditRequest['status'] } = {}) =>
      list(client.GET('/api/v1/me/edit-requests', { params: { query } }), 'edit_requests'),
    /** 201 with the review and its reply; replying again replaces the reply. */
    reply: (agentId: string, reviewId: string, body: string) =>
      ok(
        client.POST('/api/v1/me/agents/{id}/reviews/{review_id}/reply', {
          params: { path: { id: agentId, review_id: reviewId } },
          body: { body },
        }),
      ),
  },
};

/** Any thrown value as the screens show it. */
export function toApiError(cause: unknown): ApiError {
  if (cause instanceof ApiError) return cause;
  return new ApiError('client_error', cause instanceof Error ? cause.message : String(cause));
}
