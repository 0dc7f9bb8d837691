import { createHmac, randomBytes } from 'node:crypto';
import { API_VERSION } from '../../version';
import { EVENT_TYPES, type EventType } from '../events/events.table';

/**
 * What goes on the wire: the body bytes, the signature and the headers of a
 * webhook request. Pure functions, shared by the dispatcher, test sends and
 * the payload preview, so all three produce the same bytes for the same event.
 */

export const WEBHOOK_USER_AGENT = `AgentDirectory-Webhooks/${API_VERSION}`;
export const SIGNATURE_PREFIX = 'sha256=';
export const SECRET_PREFIX = 'whsec_';

/** The header names, as sent. Receivers should compare them case-insensitively (HTTP does). */
export const WEBHOOK_HEADERS = {
  signature: 'X-Service-Signature',
  event: 'X-Service-Event',
  delivery: 'X-Service-Delivery',
  attempt: 'X-Service-Attempt',
  test: 'X-Service-Test',
} as const;

/** The Standard Webhooks headers (https://www.standardwebhooks.com), sent beside ours, lower-case as its libraries read them. */
export const STANDARD_WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/** How long a replaced secret still signs deliveries (beside the new one), so receivers can switch without losing any. */
export const SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** The stored event a body is built from (an `events` row, or a sample). */
export interface WebhookEventSource {
  id: string;
  type: EventType;
  createdAt: string;
  data: Record<string, unknown>;
  /**
   * A sample event of a test send. The body says so (`"test": true`), inside
   * what is signed: stripping the unsigned X-Service-Test header cannot make a
   * test send look like a real event.
   */
  test?: boolean;
}

/**
 * A new endpoint secret: `whsec_` + 32 random bytes in standard base64 (with
 * padding), the form the Standard Webhooks libraries decode. Secrets made
 * before used base64url; both decode to their bytes (see standardWebhookKey).
 */
export function generateWebhookSecret(random: (bytes: number) => Buffer = randomBytes): string {
  return `${SECRET_PREFIX}${random(32).toString('base64')}`;
}

/**
 * The HMAC key of `webhook-signature`, as the Standard Webhooks spec defines it
 * for `whsec_` secrets: the base64-decoded bytes after the prefix. Node decodes
 * both alphabets, so older base64url secrets keep their bytes.
 */
export function standardWebhookKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** One `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` entry of `webhook-signature`. */
export function signStandardWebhook(secret: string, eventId: string, timestampSeconds: number, body: string | Buffer): string {
  const mac = createHmac('sha256', standardWebhookKey(secret)).update(`${eventId}.${timestampSeconds}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/**
 * The exact body of a delivery. Built from the stored event only, so every
 * retry and redelivery of one event sends the same bytes.
 */
export function webhookBody(event: WebhookEventSource): string {
  return JSON.stringify({
    id: event.id,
    event: event.type,
    timestamp: event.createdAt,
    data: event.data,
    ...(event.test && { test: true }),
  });
}

/** `sha256=<hex HMAC-SHA256>` of the body bytes, keyed with the whole secret string (prefix included) as UTF-8. */
export function signWebhookBody(secret: string, body: string | Buffer): string {
  return `${SIGNATURE_PREFIX}${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface WebhookHeaderInput {
  eventId: string;
  eventType: EventType;
  deliveryId: string;
  attemptNumber: number;
  signature: string;
  /** Send time, Unix seconds. */
  timestampSeconds: number;
  /** The `webhook-signature` value: one `v1,…` per valid secret, space-separated. */
  standardSignature: string;
  isTest: boolean;
}

export function webhookHeaders(input: WebhookHeaderInput): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    [WEBHOOK_HEADERS.signature]: input.signature,
    [WEBHOOK_HEADERS.event]: input.eventType,
    [WEBHOOK_HEADERS.delivery]: input.deliveryId,
    [WEBHOOK_HEADERS.attempt]: String(input.attemptNumber),
    ...(input.isTest && { [WEBHOOK_HEADERS.test]: 'true' }),
    [STANDARD_WEBHOOK_HEADERS.id]: input.eventId,
    [STANDARD_WEBHOOK_HEADERS.timestamp]: String(input.timestampSeconds),
    [STANDARD_WEBHOOK_HEADERS.signature]: input.standardSignature,
  };
}

/** A fully built request for one attempt of one delivery. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What signing needs of an endpoint: its secret, and the one it replaced while that is still valid. */
export interface SigningEndpoint {
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
}

/** The secrets that sign a request sent at `now`: the current one, then the replaced one during its overlap. */
export function signingSecrets(endpoint: SigningEndpoint, now: Date): string[] {
  const overlapping =
    endpoint.previousSecret !== null &&
    endpoint.previousSecretExpiresAt !== null &&
    endpoint.previousSecretExpiresAt > now.toISOString() &&
    endpoint.previousSecret !== endpoint.secret;
  return overlapping ? [endpoint.secret, endpoint.previousSecret!] : [endpoint.secret];
}

/**
 * One attempt's request, built at send time: `webhook-timestamp` is `now`
 * (new on every attempt), and `webhook-signature` carries a signature per
 * secret valid at `now`. X-Service-Signature is keyed with the current secret.
 */
export function buildWebhookRequest(
  endpoint: SigningEndpoint,
  event: WebhookEventSource,
  delivery: { id: string; attemptNumber: number; isTest: boolean },
  now: Date,
): WebhookRequest {
  const body = webhookBody(delivery.isTest ? { ...event, test: true } : event);
  const timestampSeconds = Math.floor(now.getTime() / 1000);
  const headers = webhookHeaders({
    eventId: event.id,
    eventType: event.type,
    deliveryId: delivery.id,
    attemptNumber: delivery.attemptNumber,
    signature: signWebhookBody(endpoint.secret, body),
    timestampSeconds,
    standardSignature: signingSecrets(endpoint, now)
      .map((secret) => signStandardWebhook(secret, event.id, timestampSeconds, body))
      .join(' '),
    isTest: delivery.isTest,
  });
  return { url: endpoint.url, headers, body };
}

// ---------------------------------------------------------------------------
// Sample events: what test sends and the preview use. Fixed ids and
// timestamps, so a preview shows byte for byte what a test send will send.

const SAMPLE_TIMESTAMP = '2025-01-01T12:00:00.000Z';
const SAMPLE_AGENT = { agent_id: 'sample-agent-x1y2z3', name: 'Sample Agent' };

/** The `data` of one sample per kind; the README documents these as the shape of each kind. */
export const SAMPLE_EVENT_DATA: Record<EventType, Record<string, unknown>> = {
  'agent.registered': { ...SAMPLE_AGENT, source_url: 'https://github.com/example/sample-agent' },
  'agent.updated': { ...SAMPLE_AGENT, changed_fields: ['tagline', 'capabilities'] },
  'agent.verified': { ...SAMPLE_AGENT, via: 'claim' },
  'review.created': {
    review_id: 'rev_sample0000000001',
    agent_id: SAMPLE_AGENT.agent_id,
    rating: 5,
    comment: 'Found two real bugs in my first pull request.',
    reviewer_name: 'Ada',
    created_at: SAMPLE_TIMESTAMP,
  },
  'claim.approved': {
    claim_id: 'clm_sample0000000001',
    agent_id: SAMPLE_AGENT.agent_id,
    claimant_name: 'Example Labs',
    method: 'well-known',
  },
};

/** Sample event ids start with this, so they can never be mistaken for (or collide with) real ones. */
export const SAMPLE_EVENT_ID_PREFIX = 'evt_sample_';

/** The sample event of a kind, as a test send and the preview carry it (`"test": true` in the body). */
export function sampleEvent(type: EventType): WebhookEventSource {
  return {
    id: `${SAMPLE_EVENT_ID_PREFIX}${type.replace('.', '_')}`,
    type,
    createdAt: SAMPLE_TIMESTAMP,
    data: SAMPLE_EVENT_DATA[type],
    test: true,
  };
}

export const ALL_SAMPLE_EVENTS: WebhookEventSource[] = EVENT_TYPES.map(sampleEvent);

// ---------------------------------------------------------------------------
// Verification snippets shown beside the preview. test/webhooks runs both
// against real deliveries, so they cannot drift from what is sent.

export const NODE_VERIFY_SNIPPET = `import { createHmac, timingSafeEqual } from 'node:crypto';

// Checks the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature).
// rawBody: the request body exactly as received (a Buffer), before any JSON parsing.
// headers: the request headers with lower-case names, as node:http gives them.
// secret: the endpoint's secret ("whsec_…"), e.g. process.env.WEBHOOK_SECRET.
export function verifyWebhook(rawBody, headers, secret, toleranceSeconds = 300) {
  const id = String(headers['webhook-id'] ?? '');
  const timestamp = String(headers['webhook-timestamp'] ?? '');
  if (!id || !/^\\d+$/.test(timestamp)) return false;
  // An old timestamp is a replay (or a wrong clock): refuse it.
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key)
    .update(id + '.' + timestamp + '.')
    .update(rawBody)
    .digest('base64');
  const expected = Buffer.from('v1,' + mac);
  // During a secret rotation the header carries several signatures, space-separated: one must match.
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .some((given) => Buffer.byteLength(given) === expected.length && timingSafeEqual(Buffer.from(given), expected));
}

// Then: const event = JSON.parse(rawBody); skip it if event.id was seen before (deliveries can repeat);
// answer 2xx within 10 s; do slow work after answering.
`;

export const PYTHON_VERIFY_SNIPPET = `import base64
import hashlib
import hmac
import time


def verify_webhook(raw_body: bytes, headers, secret: str, tolerance_seconds: int = 300) -> bool:
    """Checks the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature).
    raw_body: the request body exactly as received, before any JSON parsing.
    headers: the request headers (a mapping such as http.server's self.headers).
    secret: the endpoint's secret ("whsec_..."), e.g. os.environ["WEBHOOK_SECRET"]."""
    msg_id = headers.get("webhook-id") or ""
    timestamp = headers.get("webhook-timestamp") or ""
    if not msg_id or not timestamp.isdigit():
        return False
    # An old timestamp is a replay (or a wrong clock): refuse it.
    if abs(time.time() - int(timestamp)) > tolerance_seconds:
        return False
    encoded = secret.removeprefix("whsec_")
    key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), altchars=b"-_")
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + raw_body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    # During a secret rotation the header carries several signatures, space-separated: one must match.
    given = (headers.get("webhook-signature") or "").split(" ")
    return any(hmac.compare_digest(expected.encode(), signature.encode()) for signature in given)


# Then: event = json.loads(raw_body); skip it if event["id"] was seen before (deliveries can repeat);
# answer 2xx within 10 s; do slow work after answering.
`;
