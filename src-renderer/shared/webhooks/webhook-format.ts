import type { DeliveryStatus, EventKind, WebhookDelivery } from './webhook-types';

/** Words and colours of the webhooks screens, in one place. */

export type Tone = 'success' | 'error' | 'warning' | 'info' | 'default';

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'in_flight', 'succeeded', 'failed', 'cancelled'];

const STATUS_LABELS: Record<DeliveryStatus, string> = {
  pending: 'Pending',
  in_flight: 'Sending',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

const STATUS_TONES: Record<DeliveryStatus, Tone> = {
  pending: 'warning',
  in_flight: 'info',
  succeeded: 'success',
  failed: 'error',
  cancelled: 'default',
};

export function statusLabel(status: DeliveryStatus): string {
  return STATUS_LABELS[status];
}

export function statusTone(status: DeliveryStatus): Tone {
  return STATUS_TONES[status];
}

/** What each kind is for, beside the kind's name in pickers. */
export const EVENT_KIND_HINTS: Record<EventKind, string> = {
  'agent.registered': 'an agent is listed',
  'agent.updated': "a listed agent's profile changes",
  'agent.verified': 'an agent becomes verified',
  'review.created': 'a review is posted',
  'claim.approved': 'an ownership claim is verified',
};

/** Every event kind, in the order pickers list them. */
export const EVENT_KINDS = Object.keys(EVENT_KIND_HINTS) as EventKind[];

export function eventKindOptions(kinds: readonly EventKind[]): Array<{ label: string; value: EventKind; hint: string }> {
  return kinds.map((kind) => ({ label: kind, value: kind, hint: EVENT_KIND_HINTS[kind] ?? '' }));
}

/** "200", "500 · the receiver answered 500", "private_address: …": the last answer of a delivery, briefly. */
export function lastResponse(delivery: Pick<WebhookDelivery, 'last_status_code' | 'last_error'>): string {
  const code = delivery.last_status_code;
  if (code === null) return delivery.last_error ?? '';
  // "the receiver answered 500" says nothing the status does not.
  const plain = !delivery.last_error || /^the receiver answered \d{3}( Gone)?$/.test(delivery.last_error);
  return plain ? `HTTP ${code}` : `HTTP ${code} · ${delivery.last_error}`;
}

/** An absolute http(s) URL, as the server requires; the message says what is wrong, or null when fine. */
export function webhookUrlProblem(value: string): string | null {
  const trimmed = value.trim();
  if (!trimmed) return 'Enter the URL deliveries are POSTed to';
  if (trimmed.length > 2048) return 'At most 2,048 characters';
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return 'Enter an absolute URL, e.g. https://example.com/hooks';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'Only http:// and https:// URLs can receive webhooks';
  if (!url.hostname) return 'The URL needs a host name';
  return null;
}

/** A JSON body laid out for reading; anything else as it came. */
export function prettyBody(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/** Headers as an HTTP request shows them, one per line. */
export function headerLines(headers: Record<string, string>): string {
  return Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');
}

/** "in 42 s", "in 4 min": when a pending delivery's next attempt is due. */
export function dueIn(iso: string | null, now = Date.now()): string {
  if (!iso) return '';
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  if (seconds <= 0) return 'due now';
  if (seconds < 90) return `retry in ${seconds} s`;
  if (seconds < 90 * 60) return `retry in ${Math.round(seconds / 60)} min`;
  return `retry in ${Math.round(seconds / 3600)} h`;
}

/** Bytes of a string as UTF-8 (what the signature covers). */
export function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** What a moderator can do to an endpoint, from the list or its own screen. */
export type EndpointAction = 'edit' | 'enable' | 'disable' | 'reveal' | 'rotate' | 'remove';

/** The endpoint screen's tabs, as in its URL (`?tab=`). */
export type DetailTab = 'log' | 'test' | 'preview';
export const DETAIL_TABS: readonly DetailTab[] = ['log', 'test', 'preview'];

/** How SecretDialog starts: showing a new endpoint's secret, or confirming a rotation or a reveal first. */
export type SecretDialogMode = 'created' | 'rotate' | 'reveal';
