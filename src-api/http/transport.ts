import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { TransportConfig, TrustProxy } from '../config';
import { AppError } from '../errors';
import { problem, sendProblem } from './problem';
import { isAnsweredWhileDraining } from './unread-body';

/**
 * What the HTTP layer does before any route runs: socket deadlines and header
 * limits (Node's own), a valid Host, 405 with Allow for known paths, and one
 * CORS policy for every public answer, errors and 429s included.
 */

/** Fastify's server options for the deadlines and header limit of contract section 2. */
export function transportServerOptions(transport: TransportConfig): {
  requestTimeout: number;
  connectionTimeout: number;
  http: http.ServerOptions;
} {
  return {
    // Node closes a request whose headers or whole body are late with a 408 (see clientErrorHandler).
    requestTimeout: transport.requestTimeoutMs,
    // A socket that sends nothing (idle before its first request or between requests) is closed too.
    connectionTimeout: transport.requestTimeoutMs,
    http: {
      headersTimeout: transport.headersTimeoutMs,
      requestTimeout: transport.requestTimeoutMs,
      maxHeaderSize: transport.maxHeaderBytes,
      // Node checks the two deadlines on this interval (30 s by default, which would double them).
      connectionsCheckingInterval: transport.timeoutCheckIntervalMs,
    },
  };
}

/**
 * The answers of the routes that ask for it (`config: { batchAnswers: true }`: search) leave at the end of the event
 * loop's turn (`setImmediate`, after the turn's I/O callbacks), not each as soon as it is ready: the requests that
 * arrived together are all handled, then all answered (as Netty's flush consolidation does). Written one by one,
 * each answer wakes a client that went to sleep waiting for it while the server works on the next request;
 * answered together, a client wakes once for several, and the server's CPU a request drops with the wake-ups.
 *
 * Measured at 100,000 agents, 50 connections, two servers on one database loaded in turns, the idle one stopped
 * (`bench/answer-batching.ts`, 2026-11-30 06:40-06:50, medians of 3 rounds, two runs), search's answers batched
 * against none: one common word x1.35-1.38 req/s, two x1.30-1.36 (server CPU 142 -> 102 µs a request, p99 13 -> 9
 * ms), three x1.35-1.44, typo x1.16-1.21, prefix x1.24-1.33, an exact word x1.15-1.17, filtered POST x1.30;
 * `GET /agents/{id}` (not batched) x1.01-1.05. Batching every route measured worse in the same hour: `GET
 * /agents/{id}` x0.67 (server CPU 22 -> 39 µs a request: with quick answers held back, the client and the server
 * work in turns instead of side by side), and, for reasons not found, search's quick classes with it (typo x0.94,
 * an exact word x0.93). Holding back only the answers that took long since their request arrived was worse again
 * (answers of a turn mixed, the client still woken one by one). So it is per route, for search.
 * Releasing them every 4 answers instead was worse (three common words x1.12), every 12 no better than the turn.
 * An answer waits at most for the rest of its turn's work, and no longer than `ANSWER_HOLD` after the turn's first
 * held answer; alone, a turn is one request.
 * `transport.batchAnswers` off (`--batch-answers off`) writes every answer at once, for A/B measurements.
 */
export function installAnswerBatching(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!route.config?.batchAnswers) return;
    route.onSend = [route.onSend ?? []].flat().concat(answerAtEndOfTurn);
  });
}

/**
 * How long answers may be held back, from the first held in a turn: then they leave at once, with the one that
 * found the time up. A turn holds as many searches as arrived together, up to 50 in the bench: at 1,000,000
 * agents, where three common words take ~0.6 ms, uncapped that held a turn's first answer ~30 ms (the class's p99
 * 54 ms in `npm run bench -- --agents 1000000`, 07:41). `bench/answer-batching.ts` (07:44-07:52, medians of 3
 * rounds) with 2 ms: at 100,000 agents three common words x1.47 req/s, two x1.38, an exact word x1.19 (uncapped in
 * the same minutes x1.35, x1.37, x1.23); at 1,000,000 three words x1.18 (p99 352 -> 181 ms in its 2 s loads), two
 * x1.19 (p99 33 -> 31), filtered POST x1.11 (35 -> 33).
 */
export const ANSWER_HOLD = { ms: 2 };

/** The answers held back, in order, and when the first of them was. */
const heldDone: ((error: null, payload: unknown) => void)[] = [];
const heldPayloads: unknown[] = [];
let heldSince = 0;
let releaseScheduled = false;

function answerAtEndOfTurn(
  _request: FastifyRequest,
  _reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  if (heldDone.length === 0) heldSince = performance.now();
  heldDone.push(done);
  heldPayloads.push(payload);
  if (performance.now() - heldSince >= ANSWER_HOLD.ms) releaseHeld();
  else if (!releaseScheduled) {
    releaseScheduled = true;
    setImmediate(releaseAtEndOfTurn);
  }
}

function releaseAtEndOfTurn(): void {
  releaseScheduled = false;
  releaseHeld();
}

/** Hands every held answer on to Fastify, in order. */
function releaseHeld(): void {
  const count = heldDone.length;
  for (let i = 0; i < count; i++) heldDone[i]!(null, heldPayloads[i]);
  heldDone.splice(0, count);
  heldPayloads.splice(0, count);
  // Any held while these were handed on (none expected: Fastify writes them without running another request) go next turn.
  if (heldDone.length > 0) {
    heldSince = performance.now();
    if (!releaseScheduled) {
      releaseScheduled = true;
      setImmediate(releaseAtEndOfTurn);
    }
  }
}

const CLIENT_ERRORS: Record<string, { status: number; code: string; title: string; detail: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: 'request_timeout',
    title: 'Request timeout',
    detail: 'The request did not arrive in time (headers within the header deadline, all of it within the request deadline)',
  },
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'headers_too_large',
    title: 'Request header fields too large',
    detail: 'The request headers are larger than 16 KiB',
  },
};

/**
 * Errors Node's parser raises before there is a request (timeouts, oversized or malformed headers,
 * smuggling attempts): a problem+json answer when the socket can still take one, then the socket closes.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const known = CLIENT_ERRORS[error.code ?? ''] ?? {
    status: 400,
    code: 'bad_request',
    title: 'Bad request',
    detail: 'The request is not valid HTTP/1.1',
  };
  // A request answered early (a 413 before its body) has had its one answer: broken framing in the rest only closes the socket.
  if (socket.writable && !isAnsweredWhileDraining(socket)) {
    const body = JSON.stringify(problem(known.status, known.code, known.title, known.detail));
    socket.write(
      `HTTP/1.1 ${known.status} ${http.STATUS_CODES[known.status]}\r\n` +
        'Content-Type: application/problem+json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        'Access-Control-Allow-Origin: *\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}

// reg-name (RFC 3986 unreserved and sub-delims, no percent-escapes), IPv4, or a bracketed IPv6 literal; then an optional port.
const HOST_PATTERN = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** Answers for Host values seen lately: a client sends the same one every time, and `new URL` costs microseconds a request. */
const knownHosts = new Map<string, boolean>();
/** Bounded, as the Host header is the client's to choose: past this many, the answers start afresh. */
const KNOWN_HOSTS_MAX = 256;

/** True for a Host header a URL can be built from: `example.com`, `127.0.0.1:8787`, `[::1]:80`. */
export function isValidHost(value: string): boolean {
  const known = knownHosts.get(value);
  if (known !== undefined) return known;
  const valid = parsesAsHost(value);
  if (knownHosts.size >= KNOWN_HOSTS_MAX) knownHosts.clear();
  knownHosts.set(value, valid);
  return valid;
}

function parsesAsHost(value: string): boolean {
  if (!HOST_PATTERN.test(value)) return false;
  try {
    return new URL(`http://${value}/`).host.length > 0;
  } catch {
    return false;
  }
}

export class BadHostError extends AppError {
  constructor() {
    super(400, 'invalid_host', 'Invalid Host header', 'The Host header is missing, empty or not a valid host[:port]');
  }
}

/** onRequest: an HTTP/1.1 request names a valid host (HTTP/1.0 may omit it). */
export function checkHost(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const host = request.headers.host;
  if (host === undefined && request.raw.httpVersion === '1.0') return done();
  done(typeof host === 'string' && isValidHost(host) ? undefined : new BadHostError());
}

const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Every route's path by method, to answer a known path with another method 405 and `Allow`
 * (Fastify's router alone only knows "no route": 404). Fed by an onRoute hook.
 */
export function createMethodIndex() {
  const router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 500 });
  const noop = () => undefined;
  return {
    add(method: string, url: string): void {
      if (!METHODS.includes(method as HTTPMethod) || url.includes('*')) return;
      if (!router.hasRoute(method as HTTPMethod, url)) router.on(method as HTTPMethod, url, noop);
    },
    /** Methods served at `path` (a concrete request path, no query). */
    allowed(path: string): string[] {
      return METHODS.filter((method) => router.find(method, path) !== null);
    },
  };
}
export type MethodIndex = ReturnType<typeof createMethodIndex>;

/** Registers the 404 handler that turns "a known path, another method" into 405 with Allow, and fills the index. */
export function installMethodHandling(app: FastifyInstance, index: MethodIndex): void {
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) index.add(method, route.url);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = index.allowed(path);
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      reply.header('Allow', [...allowed, 'OPTIONS'].join(', '));
      return sendProblem(
        reply,
        problem(405, 'method_not_allowed', 'Method not allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}`),
      );
    }
    return sendProblem(reply, problem(404, 'not_found', 'Not found', `No route for ${request.method} ${path}`));
  });
  // Every OPTIONS has a route, as it had under @fastify/cors (counted in the metrics as route `*`). A public
  // path's is answered by createRequestHeadersHook before it; any other gets what another method gets.
  app.options('*', { schema: { hide: true } }, (_request, reply) => {
    reply.callNotFound();
  });
}

/** Fastify's trustProxy for our config: N proxies trust the N right-most hops; a list trusts hops from those addresses. */
export function trustProxyOption(trust: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (trust === false) return false;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return trust;
}

export const API_EXPOSED_HEADERS = ['RateLimit', 'RateLimit-Policy', 'Retry-After', 'Link'];
const EXPOSED_HEADERS_VALUE = API_EXPOSED_HEADERS.join(', ');

/** Paths of /api/v1 that answer other origins with nothing: the account's own resources, sign-up and sign-in (cookie sessions). */
const NO_CORS_PREFIXES = ['/me', '/accounts', '/sessions'];
/** The one POST a browser on another origin may send. */
const CROSS_ORIGIN_POSTS = ['/agents/search'];

/** A CORS policy: the methods another origin may use, as the preflight's Access-Control-Allow-Methods says them. */
export interface CorsPolicy {
  methods: string;
}
// The two policies there are, made once.
const READ_ONLY: CorsPolicy = { methods: 'GET, HEAD' };
const READ_AND_POST: CorsPolicy = { methods: 'GET, HEAD, POST' };

/**
 * The CORS policy of a request path: any origin may read the public API (GET, HEAD; POST for
 * search only); `/trpc`, `/me` and everything outside the API get no CORS headers at all.
 */
export function corsPolicyFor(url: string, apiPrefix: string): false | CorsPolicy {
  // The path without its query and trailing slashes, found by index (it runs on every request): no split, regex or copies.
  const mark = url.indexOf('?');
  let end = mark < 0 ? url.length : mark;
  while (end > 0 && url.charCodeAt(end - 1) === SLASH) end--;
  const prefixEnd = apiPrefix.length;
  if (end < prefixEnd || !url.startsWith(apiPrefix) || (end > prefixEnd && url.charCodeAt(prefixEnd) !== SLASH)) return false;
  // The path inside the API is url[prefixEnd, end), compared in place.
  const length = end - prefixEnd;
  for (const prefix of NO_CORS_PREFIXES) {
    const isOrUnder = length === prefix.length || (length > prefix.length && url.charCodeAt(prefixEnd + prefix.length) === SLASH);
    if (isOrUnder && url.startsWith(prefix, prefixEnd)) return false;
  }
  for (const path of CROSS_ORIGIN_POSTS) if (length === path.length && url.startsWith(path, prefixEnd)) return READ_AND_POST;
  return READ_ONLY;
}
const SLASH = 0x2f;

/**
 * The app's own first onRequest hook, for every request: the headers every answer carries
 * (`X-Content-Type-Options: nosniff`, `Vary: Origin`) and, on a public path, the CORS headers, so that
 * every later answer (400 Host, 401, 429, 404, 405) has them; a public path's OPTIONS is answered at
 * once as a preflight (with or without Origin: 204 with the policy's methods and the path's Allow);
 * then the Host check. One callback hook with its header values made once. @fastify/cors did the CORS
 * part with its options chosen, copied and merged per request (about 5 % of a search request's CPU), and
 * two onSend hooks added nosniff and a preflight's Allow.
 */
export function createRequestHeadersHook(apiPrefix: string, index: MethodIndex): onRequestHookHandler {
  return function requestHeaders(request, reply, done) {
    // Kept from @fastify/cors, which sent it on every answer; nothing here varies by Origin.
    reply.header('vary', 'Origin');
    reply.header('x-content-type-options', 'nosniff');
    const policy = corsPolicyFor(request.url, apiPrefix);
    if (policy) {
      reply.header('access-control-allow-origin', '*');
      reply.header('access-control-expose-headers', EXPOSED_HEADERS_VALUE);
      if (request.method === 'OPTIONS') return answerPreflight(request, reply, policy, index);
    }
    checkHost(request, reply, done);
  };
}

/** A public path's OPTIONS: the policy's methods and headers, cacheable for 10 minutes, and Allow for a path with routes. */
function answerPreflight(request: FastifyRequest, reply: FastifyReply, policy: CorsPolicy, index: MethodIndex): void {
  reply.header('access-control-allow-methods', policy.methods);
  reply.header('access-control-allow-headers', 'Content-Type, Authorization, X-API-Key');
  reply.header('access-control-max-age', '600');
  // Safari waits for a body without Content-Length 0.
  reply.code(204).header('content-length', '0');
  const allowed = index.allowed(request.url.split('?')[0] ?? '/');
  if (allowed.length > 0) reply.header('allow', [...allowed, 'OPTIONS'].join(', '));
  void reply.send();
}

/** The CORS headers for answers that skip the hooks (framework errors before routing). */
export function applyCorsHeaders(request: FastifyRequest, reply: FastifyReply, apiPrefix: string): void {
  if (!corsPolicyFor(request.url, apiPrefix)) return;
  reply.header('Access-Control-Allow-Origin', '*');
  reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS_VALUE);
}
