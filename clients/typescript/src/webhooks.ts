import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header that carries the signature of a webhook delivery. */
export const SIGNATURE_HEADER = 'X-Service-Signature';

const SIGNATURE_RE = /^(?:sha256=)?([0-9a-f]{64})$/i;

/** The `X-Service-Signature` value for a body: `sha256=<hex HMAC-SHA256 of the exact bytes>`. */
export function signWebhook(secret: string | Uint8Array, rawBody: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/**
 * True when `signatureHeader` (the `X-Service-Signature` value, `sha256=<hex>`; a bare hex digest is
 * accepted too) is the HMAC-SHA256 of `rawBody` keyed with the endpoint's `secret`. Pass the body
 * exactly as received (a Buffer, or the raw string) — never re-serialised JSON. A missing, malformed
 * or wrong signature gives false, never an exception; the comparison takes constant time.
 */
export function verifyWebhook(
  secret: string | Uint8Array,
  rawBody: string | Uint8Array,
  signatureHeader: string | string[] | null | undefined,
): boolean {
  if (typeof signatureHeader !== 'string' || secret.length === 0) return false;
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) return false;
  const match = SIGNATURE_RE.exec(signatureHeader.trim());
  if (!match?.[1]) return false;
  const given = Buffer.from(match[1].toLowerCase(), 'hex');
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}
