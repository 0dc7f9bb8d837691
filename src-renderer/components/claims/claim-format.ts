import type { QueueClaim } from '../../stores/claims-store';

type ClaimCheck = NonNullable<QueueClaim['last_check']>;
type ProofResult = ClaimCheck['results'][number];
type ProofFailure = NonNullable<ProofResult['failure']>;

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

export const METHOD_LABEL: Record<ProofResult['method'], string> = {
  'repository-file': 'Repository file',
  'dns-txt': 'DNS TXT record',
  'well-known': 'Well-known file',
};

/** What one proof found, in a few words: "HTTP 404", "DNS timed out", "token found". */
export function resultWords(result: ProofResult): string {
  if (result.ok) return result.method === 'dns-txt' ? 'record found' : 'token found';
  if (!result.failure) return 'failed';
  return result.failure === 'http_status' && result.http_status ? `HTTP ${result.http_status}` : FAILURE_WORDS[result.failure];
}

/**
 * "check ok", or "check failed · token not found": the reason of the first proof tried (an HTTP
 * 200 without the token is not an HTTP failure, so the status alone would mislead).
 */
export function checkSummary(check: ClaimCheck): string {
  if (check.ok) return 'check ok';
  const failed = check.results.find((result) => result.failure !== null);
  if (!failed) return 'check failed';
  return `check failed · ${resultWords(failed)}`;
}

export type BadgeType = 'default' | 'success' | 'warning' | 'error';

/**
 * The check as a queue row and the detail pane show it. A verified claim is never shown with a red
 * "check failed": verified by hand after a failed check says so, and a failed re-check of verified
 * ownership is a warning (three in a row take the verified mark away).
 */
export function checkBadge(claim: QueueClaim): { text: string; type: BadgeType; title?: string } | null {
  const check = claim.last_check;
  if (claim.status === 'verified') {
    if (check && !check.ok && claim.verified_by === 'automatic')
      return { text: checkSummary(check).replace('check failed', 're-check failed'), type: 'warning' };
    if (claim.verified_by === 'manual') return { text: 'verified by hand', type: 'default' };
    const method = claim.verified_method ?? check?.method;
    return { text: 'proof held', type: 'success', ...(method ? { title: METHOD_LABEL[method] } : {}) };
  }
  if (!check) return null;
  return { text: checkSummary(check), type: check.ok ? 'success' : claim.status === 'rejected' ? 'default' : 'error' };
}
