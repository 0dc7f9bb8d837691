import { performance } from 'node:perf_hooks';
import { safeRequest, SafeRequestError } from '../../lib/safe-http';
import type { DnsResolver } from '../../lib/dns-resolver';
import type { WebhookRequest } from './webhooks.payload';

/** How much of a receiver's answer is kept in the attempt log. */
export const RESPONSE_EXCERPT_BYTES = 1024;

/** What one HTTP attempt came to; recorded as-is in webhook_attempts. */
export interface AttemptOutcome {
  /** A 2xx within the deadline. Anything else, including a 3xx (never followed), is a failure. */
  ok: boolean;
  /** null when no HTTP response came back. */
  statusCode: number | null;
  latencyMs: number;
  responseExcerpt: string | null;
  error: string | null;
  /**
   * False when the destination's name could not be resolved (DNS failed or
   * stalled): a failure of the path to the receiver, not of the receiver, so it
   * is retried but not counted toward disabling the endpoint. Default true.
   */
  countsTowardDisabling?: boolean;
}

/** Error codes of a failed name resolution (getaddrinfo, and c-ares through node:dns Resolver). */
const RESOLUTION_CODES = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'ENODATA',
  'ESERVFAIL',
  'EREFUSED',
  'ETIMEOUT',
  'ECANCELLED',
]);

/** True when `error` (or one of its causes) is a failure to resolve the host name rather than an answer from it. */
export function isResolutionFailure(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const { code, name, cause } = current as { code?: unknown; name?: unknown; cause?: unknown };
    if (name === 'DnsError') return true;
    if (typeof code === 'string' && RESOLUTION_CODES.has(code)) return true;
    current = cause;
  }
  return false;
}

export interface SendOptions {
  timeoutMs: number;
  allowPrivateUrls: boolean;
}

/** Sends a webhook request; a function so the dispatcher and test sends share one. Never rejects. */
export type WebhookSender = (request: WebhookRequest, options: SendOptions) => Promise<AttemptOutcome>;

/**
 * POSTs through safeRequest, resolving names with `resolver` (AGENTDIR_DNS_SERVERS): the
 * resolved address is checked (private and loopback refused unless allowed), redirects are
 * not followed, one deadline covers the whole exchange and only the first KiB of the answer is read.
 */
export const createWebhookSender =
  (resolver?: DnsResolver): WebhookSender =>
  async (request, options) => {
    const started = performance.now();
    try {
      const response = await safeRequest({
        resolver,
        url: request.url,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        timeoutMs: options.timeoutMs,
        maxResponseBytes: RESPONSE_EXCERPT_BYTES,
        allowPrivate: options.allowPrivateUrls,
      });
      const ok = response.status >= 200 && response.status < 300;
      return {
        ok,
        statusCode: response.status,
        latencyMs: response.latencyMs,
        responseExcerpt: response.body,
        error: ok ? null : describeFailedStatus(response.status, response.headers.location),
      };
    } catch (error) {
      const message =
        error instanceof SafeRequestError
          ? `${error.reason}: ${error.message}`
          : `request failed: ${error instanceof Error ? error.message : String(error)}`;
      return {
        ok: false,
        statusCode: null,
        latencyMs: Math.round(performance.now() - started),
        responseExcerpt: null,
        error: message,
        countsTowardDisabling: !isResolutionFailure(error),
      };
    }
  };

/** A sender resolving with the system's DNS servers (services.ts passes the configured resolver). */
export const sendWebhook: WebhookSender = createWebhookSender();

function describeFailedStatus(status: number, location: string | undefined): string {
  if (status >= 300 && status < 400) {
    return `the receiver answered ${status}${location ? ` (redirect to ${location.slice(0, 200)})` : ''}; redirects are not followed`;
  }
  if (status === 410) return 'the receiver answered 410 Gone';
  return `the receiver answered ${status}`;
}
