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

/** The stored event a body is built from (an `events` row, or a sample). */
export interface WebhookEventSource {
  id: string;
  type: EventType;
  createdAt: string;
  data: Record<string, unknown>;
}

/** A new endpoint secret: `whsec_` + 32 random bytes, base64url (256 bits of entropy). */
export function generateWebhookSecret(random: (bytes: number) => Buffer = randomBytes): string {
  return `${SECRET_PREFIX}${random(32).toString('base64url')}`;
}

/**
 * The exact body of a delivery. Built from the stored event only, so every
 * retry and redelivery of one event sends the same bytes.
 */
export function webhookBody(event: WebhookEventSource): string {
  return JSON.stringify({ id: event.id, event: event.type, timestamp: event.createdAt, data: event.data });
}

/** `sha256=<hex HMAC-SHA256>` of the body bytes, keyed with the whole secret string (prefix included) as UTF-8. */
export function signWebhookBody(secret: string, body: string | Buffer): string {
  return `${SIGNATURE_PREFIX}${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface WebhookHeaderInput {
  eventType: EventType;
  deliveryId: string;
  attemptNumber: number;
  signature: string;
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
  };
}

/** A fully built request for one attempt of one delivery. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export function buildWebhookRequest(
  endpoint: { url: string; secret: string },
  event: WebhookEventSource,
  delivery: { id: string; attemptNumber: number; isTest: boolean },
): WebhookRequest {
  const body = webhookBody(event);
  const signature = signWebhookBody(endpoint.secret, body);
  const headers = webhookHeaders({
    eventType: event.type,
    deliveryId: delivery.id,
    attemptNumber: delivery.attemptNumber,
    signature,
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

export function sampleEvent(type: EventType): WebhookEventSource {
  return {
    id: `${SAMPLE_EVENT_ID_PREFIX}${type.replace('.', '_')}`,
    type,
    createdAt: SAMPLE_TIMESTAMP,
    data: SAMPLE_EVENT_DATA[type],
  };
}

export const ALL_SAMPLE_EVENTS: WebhookEventSource[] = EVENT_TYPES.map(sampleEvent);

// ---------------------------------------------------------------------------
// Verification snippets shown beside the preview. test/webhooks runs both
// against real deliveries, so they cannot drift from what is sent.

export const NODE_VERIFY_SNIPPET = `import { createHmac, timingSafeEqual } from 'node:crypto';

// rawBody: the request body exactly as received (a Buffer), before any JSON parsing.
// signatureHeader: the value of the X-Service-Signature header.
// secret: the endpoint's secret ("whsec_…"), e.g. process.env.WEBHOOK_SECRET.
export function verifyWebhook(rawBody, signatureHeader, secret) {
  const expected = Buffer.from('sha256=' + createHmac('sha256', secret).update(rawBody).digest('hex'));
  const received = Buffer.from(String(signatureHeader ?? ''));
  return expected.length === received.length && timingSafeEqual(expected, received);
}

// Then: const event = JSON.parse(rawBody); skip it if event.id was seen before (deliveries can repeat);
// answer 2xx within 10 s; do slow work after answering.
`;

export const PYTHON_VERIFY_SNIPPET = `import hashlib
import hmac


def verify_webhook(raw_body: bytes, signature_header: str, secret: str) -> bool:
    """raw_body: the request body exactly as received, before any JSON parsing.
    signature_header: the value of the X-Service-Signature header.
    secret: the endpoint's secret ("whsec_..."), e.g. os.environ["WEBHOOK_SECRET"]."""
    expected = "sha256=" + hmac.new(secret.encode("utf-8"), raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature_header or "")


# Then: event = json.loads(raw_body); skip it if event["id"] was seen before (deliveries can repeat);
# answer 2xx within 10 s; do slow work after answering.
`;
