/**
 * @agent-directory/client: a typed client of the Agent Directory REST API, built on openapi-fetch
 * with types generated from the server's OpenAPI document (./schema.d.ts).
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, paths } from './schema.js';
export { SIGNATURE_HEADER, signWebhook, verifyWebhook } from './webhooks.js';

// ---------------------------------------------------------------- types

type Schemas = components['schemas'];
type Method = 'get' | 'post';
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Operation<P extends keyof paths, M extends Method> = paths[P][M];
/** The JSON body of the 200/201 response of an operation. */
export type ResponseOf<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { responses: infer R } ? JsonOf<R[(200 | 201) & keyof R]> : never;
/** The query parameters of an operation. */
export type QueryOf<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
/** The JSON request body of an operation. */
export type BodyOf<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { requestBody?: infer B } ? JsonOf<NonNullable<B>> : never;

export type Agent = Schemas['Agent'];
export type AgentType = Agent['type'];
export type SearchHit = Schemas['SearchHit'];
export type Review = Schemas['Review'];
export type Submission = Schemas['Submission'];
/** A claim as `GET /claims/{id}` and `POST /claims/{id}/verify` return it (no token). */
export type Claim = Schemas['Claim'];
/** A claim just made: carries `verification.token`, shown only once. */
export type NewClaim = Schemas['NewClaim'];
export type Connection = Schemas['Connection'];
/** The answer to a sign-up, the same for every valid address: `{ email, status: 'confirmation_sent' }`. */
export type NewsletterSignUp = Schemas['NewsletterSignUp'];
/** An address after following a confirmation or unsubscribe link: `{ email, status: 'subscribed' | 'unsubscribed' }`. */
export type NewsletterSubscription = Schemas['NewsletterSubscription'];
export type MarketingPost = Schemas['MarketingPost'];
export type AbTest = Schemas['AbTest'];
export type MarketingMetrics = Schemas['MarketingMetrics'];
export type DirectoryStats = Schemas['DirectoryStats'];
export type Problem = Schemas['Problem'];

export type Health = ResponseOf<'/api/v1/health', 'get'>;
export type SearchResult = ResponseOf<'/api/v1/agents/search', 'get'>;
export type AgentPage = ResponseOf<'/api/v1/agents', 'get'>;
export type ReviewPage = ResponseOf<'/api/v1/agents/{id}/reviews', 'get'>;
export type ConnectionsResult = ResponseOf<'/api/v1/agents/{id}/connections', 'get'>;
export type MarketingPostPage = ResponseOf<'/api/v1/marketing/posts', 'get'>;
export type AbTestPage = ResponseOf<'/api/v1/marketing/ab-tests', 'get'>;

export type ListAgentsQuery = QueryOf<'/api/v1/agents', 'get'>;
export type ChangesQuery = QueryOf<'/api/v1/agents/changes', 'get'>;
export type AgentChanges = ResponseOf<'/api/v1/agents/changes', 'get'>;
export type AgentChange = Schemas['AgentChange'];
export type PageQuery = QueryOf<'/api/v1/agents/{id}/reviews', 'get'>;
export type MarketingPostsQuery = QueryOf<'/api/v1/marketing/posts', 'get'>;
export type AbTestsQuery = QueryOf<'/api/v1/marketing/ab-tests', 'get'>;
export type SearchBody = BodyOf<'/api/v1/agents/search', 'post'>;
export type SearchOptions = Omit<SearchBody, 'query'>;
export type SubmissionInput = BodyOf<'/api/v1/submit', 'post'>;
export type ReviewInput = BodyOf<'/api/v1/agents/{id}/reviews', 'post'>;
export type ClaimInput = BodyOf<'/api/v1/claims', 'post'>;

export interface BulkResult {
  /** Found agents, in request order (each id once). */
  agents: Agent[];
  /** Requested ids that are not listed, in request order. */
  missing: string[];
}

// ---------------------------------------------------------------- errors

export interface FieldError {
  pointer: string;
  detail: string;
}

/**
 * An error response of the API (RFC 9457 problem details), or `code: "transport_error"` with
 * `status: 0` when no response came back (network failure).
 */
export class AgentDirectoryError extends Error {
  override name = 'AgentDirectoryError';
  /** HTTP status; 0 when the request never got a response. */
  readonly status: number;
  /** Stable snake_case code: not_found, validation_failed, rate_limited, conflict, invalid_api_key, … */
  readonly code: string;
  readonly title: string;
  readonly detail: string;
  /** Problem type URI. */
  readonly type: string | undefined;
  /** Field errors of a validation failure. */
  readonly errors: FieldError[];
  /** Seconds to wait before retrying (429 `Retry-After`). */
  readonly retryAfter: number | undefined;
  /** The HTTP response, when there was one. */
  readonly response: Response | undefined;

  constructor(
    init: {
      status: number;
      code: string;
      title: string;
      detail: string;
      type?: string;
      errors?: FieldError[];
      retryAfter?: number;
      response?: Response;
    },
    options?: { cause?: unknown },
  ) {
    super(`${init.status ? `HTTP ${init.status} ` : ''}${init.code}: ${init.detail}`, options);
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.detail = init.detail;
    this.type = init.type;
    this.errors = init.errors ?? [];
    this.retryAfter = init.retryAfter;
    this.response = init.response;
  }

  static fromResponse(response: Response, body: unknown): AgentDirectoryError {
    const problem = (typeof body === 'object' && body !== null ? body : {}) as Partial<Problem>;
    const text = typeof body === 'string' ? body.trim().slice(0, 300) : '';
    return new AgentDirectoryError({
      status: response.status,
      code: typeof problem.code === 'string' ? problem.code : `http_${response.status}`,
      title: typeof problem.title === 'string' ? problem.title : response.statusText || `HTTP ${response.status}`,
      detail: typeof problem.detail === 'string' ? problem.detail : text || response.statusText || `HTTP ${response.status}`,
      type: typeof problem.type === 'string' ? problem.type : undefined,
      errors: Array.isArray(problem.errors) ? problem.errors : [],
      retryAfter: retryAfterSeconds(response.headers),
      response,
    });
  }
}

export function isAgentDirectoryError(error: unknown): error is AgentDirectoryError {
  return error instanceof AgentDirectoryError;
}

/** Seconds from `Retry-After` (delta-seconds or HTTP date), else from `RateLimit: …;t=N`. */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (value) {
    if (/^\d+$/.test(value)) return Number(value);
    const date = Date.parse(value);
    if (!Number.isNaN(date)) return Math.max(0, (date - Date.now()) / 1000);
  }
  const reset = /(?:^|;)\s*t\s*=\s*(\d+)/.exec(headers.get('ratelimit') ?? '');
  return reset?.[1] ? Number(reset[1]) : undefined;
}

// ---------------------------------------------------------------- client

export interface AgentDirectoryClientOptions {
  /**
   * The server: its origin (`https://directory.example.com`) or its API base
   * (`https://directory.example.com/api/v1`, the trailing `/api/v1` is dropped).
   */
  baseUrl: string;
  /** An API key (`adk_…`), sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** A fetch implementation (default: the global fetch). Called with a Request. */
  fetch?: (request: Request) => Promise<Response>;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** Retries of a 429 after its `Retry-After` (default 3; 0 turns them off). */
  maxRetries?: number;
  /** The longest `Retry-After` worth waiting for, in seconds (default 60); longer ones are thrown at once. */
  maxRetryWait?: number;
  /** How to wait (default: setTimeout); tests inject their own. */
  sleep?: (milliseconds: number) => Promise<void>;
}

/** Ids per `GET /agents/bulk` call; `bulk()` splits longer lists. */
export const MAX_BULK_IDS = 50;
const API_PREFIX = '/api/v1';

type Result<T> = { data?: T; error?: unknown; response: Response };

async function unwrap<T>(pending: Promise<Result<T>>): Promise<T> {
  let result: Result<T>;
  try {
    result = await pending;
  } catch (cause) {
    if (cause instanceof AgentDirectoryError) throw cause;
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new AgentDirectoryError({ status: 0, code: 'transport_error', title: 'Transport error', detail }, { cause });
  }
  if (!result.response.ok) throw AgentDirectoryError.fromResponse(result.response, result.error);
  return result.data as T;
}

function originOf(baseUrl: string): string {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`baseUrl must be an http(s) URL, got ${baseUrl}`);
  const path = url.pathname.replace(/\/+$/, '');
  const prefix = path.endsWith(API_PREFIX) ? path.slice(0, -API_PREFIX.length) : path;
  return `${url.origin}${prefix}`;
}

function retryingFetch(options: AgentDirectoryClientOptions): (request: Request) => Promise<Response> {
  const base = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const maxRetries = options.maxRetries ?? 3;
  const maxWait = options.maxRetryWait ?? 60;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const response = await base(attempt < maxRetries ? request.clone() : request);
      if (response.status !== 429 || attempt >= maxRetries) return response;
      const wait = retryAfterSeconds(response.headers) ?? 2 ** attempt;
      if (wait > maxWait) return response;
      await response.body?.cancel();
      await sleep(wait * 1000);
    }
  };
}

/**
 * A client of the Agent Directory REST API.
 *
 * Every helper returns the response body typed from the OpenAPI document and throws
 * {@link AgentDirectoryError} for an error response. `raw` is the underlying openapi-fetch client
 * for anything the helpers do not cover (paths include the `/api/v1` prefix).
 */
export function createAgentDirectoryClient(options: AgentDirectoryClientOptions) {
  const headers: Record<string, string> = { Accept: 'application/json, application/problem+json', ...options.headers };
  if (options.apiKey) headers.Authorization = `Bearer ${options.apiKey}`;
  const raw: Client<paths> = createClient<paths>({ baseUrl: originOf(options.baseUrl), fetch: retryingFetch(options), headers });
  const id = (value: string) => ({ path: { id: value } });

  const client = {
    raw,

    /** `GET /health`: status, number of indexed agents, service version. */
    health: () => unwrap(raw.GET('/api/v1/health')),

    /** `GET /stats`: agent counts (total, verified, by type, by category) and review totals. */
    stats: () => unwrap(raw.GET('/api/v1/stats')),

    /**
     * Typo-tolerant search, best first. Without filters: `GET /agents/search?q=…&limit=…`;
     * with `type`, `min_trust` or `capabilities`: `POST /agents/search` with a JSON body.
     */
    search(query: string, searchOptions: SearchOptions = {}): Promise<SearchResult> {
      const { limit, ...filters } = searchOptions;
      const filtered = Object.values(filters).some((value) => value !== undefined && !(Array.isArray(value) && value.length === 0));
      if (!filtered)
        return unwrap(raw.GET('/api/v1/agents/search', { params: { query: { q: query, ...(limit !== undefined && { limit }) } } }));
      return unwrap(raw.POST('/api/v1/agents/search', { body: { query, ...searchOptions } }));
    },

    /** `GET /agents/{id}`: one agent profile (404 `not_found` when unknown). */
    get: (agentId: string) => unwrap(raw.GET('/api/v1/agents/{id}', { params: id(agentId) })),

    /** `GET /agents`: one page of agents (`page` from 1, `limit` 1–100), with `total`. */
    list: (query: ListAgentsQuery = {}) => unwrap(raw.GET('/api/v1/agents', { params: { query } })),

    /** Every agent, page after page (`limit` is the page size), until `total`. */
    async *listAll(query: Omit<ListAgentsQuery, 'page'> = {}): AsyncGenerator<Agent, void, undefined> {
      yield* pages(
        (page) => client.list({ ...query, page }),
        (body) => body.agents,
      );
    },

    /**
     * `GET /agents/changes`: agents changed after the cursor `since` (from the start without it), oldest
     * first: `created`/`updated` with the profile, `removed` without; poll again with `next_cursor`.
     * `syncMirror` (`@agent-directory/client/sync`) keeps a local file exact with it.
     */
    changes: (query: ChangesQuery = {}) => unwrap(raw.GET('/api/v1/agents/changes', { params: { query } })),

    /** `GET /agents/bulk`, 50 ids per call: found agents and missing ids, in request order. */
    async bulk(ids: readonly string[]): Promise<BulkResult> {
      const unique = [...new Set(ids)];
      const found = new Map<string, Agent>();
      for (let start = 0; start < unique.length; start += MAX_BULK_IDS) {
        const chunk = unique.slice(start, start + MAX_BULK_IDS);
        const body = await unwrap(raw.GET('/api/v1/agents/bulk', { params: { query: { ids: chunk.join(',') } } }));
        for (const agent of body.agents) found.set(agent.id, agent);
      }
      return {
        agents: unique.flatMap((agentId) => found.get(agentId) ?? []),
        missing: unique.filter((agentId) => !found.has(agentId)),
      };
    },

    /** `GET /agents/{id}/connections`: related agents with the reasons, best first. */
    connections: (agentId: string, limit?: number) =>
      unwrap(raw.GET('/api/v1/agents/{id}/connections', { params: { ...id(agentId), query: limit === undefined ? {} : { limit } } })),

    /** `GET /agents/{id}/reviews`: one page of reviews, newest first. */
    reviews: (agentId: string, query: PageQuery = {}) =>
      unwrap(raw.GET('/api/v1/agents/{id}/reviews', { params: { ...id(agentId), query } })),

    /** Every review of an agent, page after page. */
    async *allReviews(agentId: string, query: Omit<PageQuery, 'page'> = {}): AsyncGenerator<Review, void, undefined> {
      yield* pages(
        (page) => client.reviews(agentId, { ...query, page }),
        (body) => body.reviews,
      );
    },

    /** `POST /agents/{id}/reviews`: a 1–5 rating with an optional comment and reviewer name. */
    addReview: (agentId: string, review: ReviewInput) =>
      unwrap(raw.POST('/api/v1/agents/{id}/reviews', { params: id(agentId), body: review })),

    /** `POST /submit`: submits an agent for review (status `pending`; 409 when the source_url is known). */
    register: (submission: SubmissionInput) => unwrap(raw.POST('/api/v1/submit', { body: submission })),

    /** `GET /submissions/{id}`: pending, approved (with `agent_id`) or rejected (with `reason`). */
    submission: (submissionId: string) => unwrap(raw.GET('/api/v1/submissions/{id}', { params: id(submissionId) })),

    /** `POST /claims`: claims a listing; the answer carries `verification.url` and `verification.token`. */
    claim: (claim: ClaimInput) => unwrap(raw.POST('/api/v1/claims', { body: claim })),

    /** `GET /claims/{id}`: status and last check (never the token). */
    getClaim: (claimId: string) => unwrap(raw.GET('/api/v1/claims/{id}', { params: id(claimId) })),

    /** `POST /claims/{id}/verify`: 200 verified, 422 `verification_failed` (stays pending), 409 not pending. */
    verifyClaim: (claimId: string) => unwrap(raw.POST('/api/v1/claims/{id}/verify', { params: id(claimId), body: {} })),

    /**
     * `POST /newsletter`: double opt-in. Mails the address a confirmation link and answers 202
     * `{ email, status: 'confirmation_sent' }` for every valid address, new or known, so the answer says
     * nothing about who is subscribed; the address is subscribed once its owner follows the link.
     */
    subscribe: (email: string): Promise<NewsletterSignUp> => unwrap(raw.POST('/api/v1/newsletter', { body: { email } })),

    /** `POST /newsletter/confirm`: the token of the confirmation link (single-use, 48 h); 400 `invalid_token` otherwise. */
    confirmSubscription: (token: string): Promise<NewsletterSubscription> =>
      unwrap(raw.POST('/api/v1/newsletter/confirm', { body: { token } })),

    /** `POST /newsletter/unsubscribe`: the token of the unsubscribe link every newsletter mail carries (works any number of times). */
    unsubscribe: (token: string): Promise<NewsletterSubscription> =>
      unwrap(raw.POST('/api/v1/newsletter/unsubscribe', { body: { token } })),

    /** `GET /marketing/posts`: one page of generated posts (filters: status, tone, channel, agent_id). */
    marketingPosts: (query: MarketingPostsQuery = {}) => unwrap(raw.GET('/api/v1/marketing/posts', { params: { query } })),

    /** `GET /marketing/ab-tests`: A/B test results with significance. */
    abTests: (query: AbTestsQuery = {}) => unwrap(raw.GET('/api/v1/marketing/ab-tests', { params: { query } })),

    /** `GET /marketing/metrics`: tone distribution and publish counts. */
    marketingMetrics: () => unwrap(raw.GET('/api/v1/marketing/metrics')),
  };
  return client;
}

export type AgentDirectoryClient = ReturnType<typeof createAgentDirectoryClient>;

async function* pages<B extends { page: number; limit: number; total: number }, T>(
  fetchPage: (page: number) => Promise<B>,
  itemsOf: (body: B) => T[],
): AsyncGenerator<T, void, undefined> {
  let seen = 0;
  for (let page = 1; ; page++) {
    const body = await fetchPage(page);
    const items = itemsOf(body);
    yield* items;
    seen += items.length;
    if (items.length === 0 || items.length < body.limit || seen >= body.total) return;
  }
}
