import type { NewClaim, PublicClaim } from './claims.schemas';
import type { ClaimCheckResult, ClaimRow, ProofMethod } from './claims.table';
import { instructionFor } from './proof-methods';

/** How a claim is shown: publicly (no token, no claimant), to its claimant, and to moderators (claims.service). */

export function toLastCheckView(check: ClaimCheckResult | null) {
  if (!check) return null;
  return {
    checked_at: check.checkedAt,
    ok: check.ok,
    method: check.method ?? null,
    http_status: check.status ?? null,
    detail: check.detail,
    results: (check.results ?? []).map((result) => ({
      method: result.method,
      ok: result.ok,
      http_status: result.status ?? null,
      failure: result.failure ?? null,
      detail: result.detail,
    })),
  };
}

/** Claims made before proof methods existed carry none: their one method was the well-known file. */
function methodsOf(row: ClaimRow): ProofMethod[] {
  return row.methods.length > 0 ? row.methods : [{ method: 'well-known', url: row.verificationUrl }];
}

function commonView(row: ClaimRow) {
  return {
    id: row.id,
    agent_id: row.agentId,
    status: row.status,
    verified_by: (row.verifiedBy as 'automatic' | 'manual' | null) ?? null,
    verified_method: row.verifiedMethod ?? null,
    reason: row.reason ?? null,
    last_check: toLastCheckView(row.lastCheck ?? null),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    decided_at: row.decidedAt ?? null,
  };
}

/** The claimant's (and moderators') view of the proofs: token and TXT values included. */
export function verificationOf(row: ClaimRow) {
  const methods = methodsOf(row);
  const first = methods[0]!;
  return {
    method: first.method,
    ...(first.url ? { url: first.url } : {}),
    token: row.token,
    methods: methods.map((method) => ({ ...method })),
  };
}

/** What anyone holding the claim id may see: no token, no e-mail address, no claimant name. */
export function toPublicClaim(row: ClaimRow): PublicClaim {
  const methods = methodsOf(row);
  const first = methods[0]!;
  return {
    ...commonView(row),
    verification: {
      method: first.method,
      ...(first.url ? { url: first.url } : {}),
      methods: methods.map(({ method, url, name }) => ({ method, ...(url ? { url } : {}), ...(name ? { name } : {}) })),
    },
  };
}

/** The response to the claimant who just made the claim (and the base of the moderators' view). */
export function toNewClaim(row: ClaimRow): NewClaim {
  const verification = verificationOf(row);
  const ways = verification.methods.map((method) => instructionFor(method, row.token));
  const intro = ways.length === 1 ? 'To prove control: ' : 'To prove control, do any one of these: ';
  return {
    ...commonView(row),
    claimant_name: row.claimantName,
    claimant_email: row.claimantEmail,
    verification: {
      ...verification,
      instructions: `${intro}${ways.join(' Or: ')} Then call POST /api/v1/claims/${row.id}/verify.`,
    },
  };
}
