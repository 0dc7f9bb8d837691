import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import ipaddr from 'ipaddr.js';
import { createDnsResolver, DnsError, type DnsResolver } from './dns-resolver';

/**
 * The one way the service calls out to URLs that clients gave it (claim
 * checks, webhook deliveries). It is built for hostile targets:
 *
 * - Only absolute http and https URLs.
 * - Host names are resolved by our own resolver (lib/dns-resolver: c-ares,
 *   cancellable, with a deadline), never by `dns.lookup`, whose queries hold
 *   a libuv thread each and cannot be cancelled: a stalling DNS server cannot
 *   fill the thread pool. `localhost` and `*.localhost` are loopback (RFC 6761).
 * - Only public unicast addresses are reached unless `allowPrivate` is set:
 *   private, loopback, link-local, CGNAT, reserved, NAT64/6to4 and meta
 *   (0.0.0.0, ::) addresses are refused. The check runs on the addresses the
 *   socket is handed, after resolution, so a name that resolves (or
 *   re-resolves: DNS rebinding) to 127.0.0.1 is refused too; a name with any
 *   non-public address is refused as a whole.
 * - Redirects are never followed: a 3xx comes back as the response.
 * - One deadline covers everything: DNS, connect, TLS, headers and body.
 * - At most `maxResponseBytes` of the body are read; then the socket is
 *   destroyed and the response comes back with `truncated: true`.
 * - No connection reuse between requests (keep-alive off).
 */

export type SafeRequestFailure =
  /** Not an absolute http(s) URL. */
  | 'invalid_url'
  /** The request itself could not be built (e.g. a header value with a line break). */
  | 'invalid_request'
  /** The host is, or resolves to, a private, loopback or reserved address. */
  | 'private_address'
  /** No complete response before the deadline. */
  | 'timeout'
  /** DNS failure, refused or reset connection, TLS failure. */
  | 'connection'
  /** The peer did not speak valid HTTP. */
  | 'protocol';

export class SafeRequestError extends Error {
  override name = 'SafeRequestError';
  constructor(
    readonly reason: SafeRequestFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface SafeRequestOptions {
  url: string;
  /** Default GET. */
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The deadline for the whole exchange, connect to last body byte. Default 10 s. */
  timeoutMs?: number;
  /** Body bytes kept; more is cut off and the connection closed. Default 64 KiB. */
  maxResponseBytes?: number;
  /** Let the request reach private and loopback addresses (local tests, --allow-private-urls). */
  allowPrivate?: boolean;
  /** Resolves host names (AGENTDIR_DNS_SERVERS); default: the system's DNS servers, 5 s deadline. */
  resolver?: DnsResolver;
}

export interface SafeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body as UTF-8 text, at most `maxResponseBytes` bytes of it. */
  body: string;
  /** Body bytes kept (the length of `body` in bytes). */
  bytes: number;
  /** True when the body was longer than `maxResponseBytes` and was cut off. */
  truncated: boolean;
  /** From the start of the call to the end of the body (or the cut-off), in milliseconds. */
  latencyMs: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
export const USER_AGENT = 'AgentDirectory/1 (+https://agent-directory.dev)';

// keepAlive off: every request gets a fresh socket, resolved and checked at its own connect.
const agents = {
  'http:': new http.Agent({ keepAlive: false }),
  'https:': new https.Agent({ keepAlive: false }),
};

let systemResolver: DnsResolver | undefined;
const defaultResolver = (): DnsResolver => (systemResolver ??= createDnsResolver({ servers: [], timeoutMs: 5_000 }));

/** Performs one HTTP request under the rules above; resolves with any HTTP status, rejects with SafeRequestError. */
export function safeRequest(options: SafeRequestOptions): Promise<SafeResponse> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;

  let url: URL;
  try {
    url = parseHttpUrl(options.url);
  } catch (error) {
    return Promise.reject(error);
  }
  const protocol = url.protocol as 'http:' | 'https:';
  const transport = protocol === 'https:' ? https : http;
  const agent = agents[protocol];
  const allowPrivate = options.allowPrivate ?? false;
  // An address literal is never looked up (net.connect skips `lookup`), so it is checked here.
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) !== 0 && !allowPrivate && !isPublicAddress(literal)) {
    return Promise.reject(privateAddressError(url.hostname, literal));
  }
  const lookup = resolvingLookup(options.resolver ?? defaultResolver(), allowPrivate);

  const headers: Record<string, string> = { ...options.headers };
  if (!hasHeader(headers, 'user-agent')) headers['user-agent'] = USER_AGENT;
  if (options.body !== undefined && !hasHeader(headers, 'content-length')) {
    headers['content-length'] = String(Buffer.byteLength(options.body));
  }

  return new Promise<SafeResponse>((resolve, reject) => {
    let settled = false;
    let request: http.ClientRequest | undefined;

    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
      // Stop reading and free the socket whatever state the exchange is in.
      request?.destroy();
    };
    const fail = (error: unknown): void => settle(() => reject(classify(error, url)));

    const timer = setTimeout(
      () => settle(() => reject(new SafeRequestError('timeout', `no complete response within ${formatMs(timeoutMs)}`))),
      timeoutMs,
    );

    try {
      request = transport.request(url, { method: options.method ?? 'GET', headers, agent, lookup }, (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = (truncated: boolean): void =>
          settle(() => {
            const buffer = Buffer.concat(chunks, size);
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: buffer.toString('utf8'),
              bytes: size,
              truncated,
              latencyMs: Math.round(performance.now() - started),
            });
          });

        response.on('data', (chunk: Buffer) => {
          if (settled) return;
          const room = maxBytes - size;
          if (chunk.length > room) {
            if (room > 0) chunks.push(chunk.subarray(0, room));
            size += Math.max(room, 0);
            done(true);
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        response.on('end', () => done(false));
        response.on('error', fail);
        response.on('close', () => {
          if (!response.complete) fail(new SafeRequestError('connection', 'the connection closed before the response was complete'));
        });
      });
    } catch (error) {
      // http.request throws synchronously for bad methods or header values.
      settle(() => reject(new SafeRequestError('invalid_request', `cannot send this request: ${messageOf(error)}`, { cause: error })));
      return;
    }

    request.on('error', fail);
    if (options.body !== undefined) request.end(options.body);
    else request.end();
  });
}

/** An absolute http(s) URL or a SafeRequestError('invalid_url'). */
export function parseHttpUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SafeRequestError('invalid_url', 'not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SafeRequestError('invalid_url', `only http and https URLs can be fetched, not ${url.protocol.replace(/:$/, '')}`);
  }
  if (!url.hostname) throw new SafeRequestError('invalid_url', 'the URL has no host');
  return url;
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

function classify(error: unknown, url: URL): SafeRequestError {
  if (error instanceof SafeRequestError) return error;
  const message = messageOf(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof DnsError) {
    return new SafeRequestError('connection', `could not resolve the host name ${url.hostname}: ${error.message}`, { cause: error });
  }
  if (typeof code === 'string') {
    if (code.startsWith('HPE_')) return new SafeRequestError('protocol', 'the server did not answer with valid HTTP', { cause: error });
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NODATA') {
      return new SafeRequestError('connection', `could not resolve the host name ${url.hostname}`, { cause: error });
    }
    if (code === 'ECONNREFUSED') return new SafeRequestError('connection', 'the connection was refused', { cause: error });
    if (code === 'ECONNRESET' || code === 'EPIPE') {
      return new SafeRequestError('connection', 'the connection was closed before the response was complete', { cause: error });
    }
    if (code === 'ETIMEDOUT' || code === 'ENETUNREACH' || code === 'EHOSTUNREACH') {
      return new SafeRequestError('connection', `the host could not be reached (${code})`, { cause: error });
    }
    if (TLS_CODE.test(code)) return new SafeRequestError('connection', `the TLS handshake failed (${code})`, { cause: error });
  }
  return new SafeRequestError('connection', `the request failed: ${message}`, { cause: error });
}

/** Whether `address` (an IP literal) is a public unicast address; IPv4-mapped IPv6 counts as its IPv4. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

function privateAddressError(host: string, address: string): SafeRequestError {
  const via = address !== host && `[${address}]` !== host ? ` (${host} resolves to ${address})` : ` (${host})`;
  return new SafeRequestError('private_address', `refused to connect to a private, loopback or reserved address${via}`);
}

const LOCALHOST = /(^|\.)localhost\.?$/i;

/**
 * A `lookup` for net.connect that asks `resolver` instead of `dns.lookup`, and refuses the
 * whole name when any of its addresses is not public (unless `allowPrivate`).
 */
function resolvingLookup(resolver: DnsResolver, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const resolved = LOCALHOST.test(hostname) ? Promise.resolve(['127.0.0.1', '::1']) : resolver.resolveAddresses(hostname);
    resolved.then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? found.filter((a) => isIP(a) === options.family) : found;
        const blocked = allowPrivate ? undefined : found.find((address) => !isPublicAddress(address));
        if (blocked !== undefined) return callback(privateAddressError(hostname, blocked) as NodeJS.ErrnoException, '', 0);
        if (wanted.length === 0) {
          return callback(new DnsError('not_found', `${hostname} has no address of the family asked for`, 'ENODATA'), '', 0);
        }
        if (options.all)
          return callback(
            null,
            wanted.map((address) => ({ address, family: isIP(address) })),
          );
        callback(null, wanted[0]!, isIP(wanted[0]!));
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
