import type { QueueClaim } from '../../stores/claims-store';

type ClaimCheck = NonNullable<QueueClaim['last_check']>;
type ProofFailure = NonNullable<ClaimCheck['results'][number]['failure']>;

/** Why a proof did not hold, in the few words a queue row has room for. */
const FAILURE_WORDS: Record<ProofFailure, string> = {
  dns_timeout: 'DNS timed out',
  dns_error: 'DNS error',
  dns_no_record: 'no TXT record',
  http_status: 'HTTP error',
  redirect: 'redirected',
  too_large: 'file too large',
  token_missing: 'token not found',
  timeout: 'timed out',
  refused: 'address refused',
  connection: 'could not connect',
};

/**
 * "check ok", or "check failed · token not found": the reason of the first proof tried (an HTTP
 * 200 without the token is not an HTTP failure, so the status alone would mislead).
 */
export function checkSummary(check: ClaimCheck): string {
  if (check.ok) return 'check ok';
  const failure = check.results.find((result) => result.failure !== null)?.failure;
  if (!failure) return 'check failed';
  const words = failure === 'http_status' && check.http_status ? `HTTP ${check.http_status}` : FAILURE_WORDS[failure];
  return `check failed · ${words}`;
}
