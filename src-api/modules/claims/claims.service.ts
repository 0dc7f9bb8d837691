import { and, count, desc, eq, ne, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { ConflictError, NotFoundError, StaleVersionError, ValidationError, VerificationFailedError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import { randomToken, type IdGenerator } from '../../lib/ids';
import { safeRequest, SafeRequestError } from '../../lib/safe-http';
import type { Page } from '../../lib/schemas';
import { originOf } from '../../lib/urls';
import type { AgentsService } from '../agents/agents.service';
import type { AuditService } from '../audit/audit.service';
import type { EventsService } from '../events/events.service';
import {
  WELL_KNOWN_CLAIM_PATH,
  type AdminClaim,
  type CreateClaimInput,
  type ListClaimsQuery,
  type NewClaim,
  type PublicClaim,
} from './claims.schemas';
import { claims, type ClaimCheckResult, type ClaimRow, type ClaimStatus } from './claims.table';

export interface ClaimsServiceDeps {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  agents: AgentsService;
  audit: AuditService;
  /** Records `claim.approved` in the approving transaction. */
  events: EventsService;
  /** Let the check reach private and loopback addresses (`--allow-private-urls`, local tests only). */
  allowPrivateUrls: boolean;
  /** Deadline of one fetch of the well-known file (`config.claimCheckTimeoutMs`). */
  verifyTimeoutMs: number;
  /** Body bytes read from the well-known file. Default 64 KiB. */
  verifyMaxBytes?: number;
}

export interface ModeratorOptions {
  /** The claim version the moderator last saw; a different current version is a 409 stale_version. */
  expectedVersion?: number;
}

export const DEFAULT_VERIFY_MAX_BYTES = 64 * 1024;
export const CLAIM_TOKEN_PREFIX = 'adclaim-';
const SUPERSEDED_REASON = 'Another ownership claim for this agent was verified';

/** The outcome of one fetch of the well-known file. */
interface CheckOutcome {
  url: string;
  ok: boolean;
  status?: number;
  detail: string;
}

export function verificationUrlFor(sourceUrl: string): string {
  return `${originOf(sourceUrl)}${WELL_KNOWN_CLAIM_PATH}`;
}

function lastCheckView(check: ClaimCheckResult | null) {
  if (!check) return null;
  return { checked_at: check.checkedAt, ok: check.ok, http_status: check.status ?? null, detail: check.detail };
}

function commonView(row: ClaimRow) {
  return {
    id: row.id,
    agent_id: row.agentId,
    status: row.status,
    verified_by: (row.verifiedBy as 'automatic' | 'manual' | null) ?? null,
    reason: row.reason ?? null,
    last_check: lastCheckView(row.lastCheck ?? null),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    decided_at: row.decidedAt ?? null,
  };
}

/** What anyone holding the claim id may see: no token, no e-mail address, no claimant name. */
export function toPublicClaim(row: ClaimRow): PublicClaim {
  return { ...commonView(row), verification: { method: 'well-known', url: row.verificationUrl } };
}

/** The response to the claimant who just made the claim. */
export function toNewClaim(row: ClaimRow): NewClaim {
  return {
    ...commonView(row),
    claimant_name: row.claimantName,
    claimant_email: row.claimantEmail,
    verification: {
      method: 'well-known',
      url: row.verificationUrl,
      token: row.token,
      instructions:
        `Serve a file at ${row.verificationUrl} whose body contains ${row.token} (HTTP 200, no redirect), ` +
        `then call POST /api/v1/claims/${row.id}/verify.`,
    },
  };
}

export function createClaimsService({
  db,
  clock,
  ids,
  agents,
  audit,
  events,
  allowPrivateUrls,
  verifyTimeoutMs,
  verifyMaxBytes = DEFAULT_VERIFY_MAX_BYTES,
}: ClaimsServiceDeps) {
  const findRow = (id: string): ClaimRow | undefined => db.select().from(claims).where(eq(claims.id, id)).get();

  const requireRow = (id: string): ClaimRow => {
    const row = findRow(id);
    if (!row) throw new NotFoundError('Claim', id);
    return row;
  };

  const requirePending = (row: ClaimRow, options: ModeratorOptions = {}): void => {
    if (options.expectedVersion !== undefined && options.expectedVersion !== row.version) throw new StaleVersionError('Claim', row.id);
    if (row.status !== 'pending')
      throw new ConflictError(`Claim "${row.id}" is already ${row.status}; only a pending claim can be verified or rejected`);
  };

  const agentNameOf = (agentId: string): string | null => agents.findRow(agentId)?.name ?? null;

  const toAdminClaim = (row: ClaimRow): AdminClaim => ({
    ...commonView(row),
    agent_name: agentNameOf(row.agentId),
    claimant_name: row.claimantName,
    claimant_email: row.claimantEmail,
    verification: { method: 'well-known', url: row.verificationUrl, token: row.token },
    version: row.version,
  });

  /** Writes `changes`, bumping version and updated_at. Call inside a transaction. */
  const writeChanges = (current: ClaimRow, changes: Partial<ClaimRow>): ClaimRow => {
    const next: ClaimRow = { ...current, ...changes, version: current.version + 1, updatedAt: isoNow(clock) };
    db.update(claims).set(next).where(eq(claims.id, current.id)).run();
    return next;
  };

  /** Fetches the verification URL and says whether it holds the token. Never throws for what the target does. */
  const fetchAndCheck = async (url: string, token: string): Promise<CheckOutcome> => {
    try {
      const response = await safeRequest({
        url,
        timeoutMs: verifyTimeoutMs,
        maxResponseBytes: verifyMaxBytes,
        allowPrivate: allowPrivateUrls,
        headers: { accept: 'text/plain, */*;q=0.5' },
      });
      const { status } = response;
      if (status >= 300 && status < 400) {
        const location = typeof response.headers.location === 'string' ? ` to ${clip(response.headers.location, 200)}` : '';
        return {
          url,
          ok: false,
          status,
          detail: `${url} answered HTTP ${status}, a redirect${location}. Redirects are not followed: serve the file at this exact URL.`,
        };
      }
      if (status < 200 || status >= 300) {
        return { url, ok: false, status, detail: `${url} answered HTTP ${status}; expected HTTP 200 with the token in the body.` };
      }
      if (!response.body.includes(token)) {
        const read = response.truncated
          ? `the first ${formatBytes(verifyMaxBytes)} of the body (the rest was not read)`
          : `the body (${formatBytes(response.bytes)})`;
        return { url, ok: false, status, detail: `${url} answered HTTP ${status}, but the token was not found in ${read}.` };
      }
      return { url, ok: true, status, detail: `The token was found at ${url} (HTTP ${status}).` };
    } catch (error) {
      if (!(error instanceof SafeRequestError)) throw error;
      const detail =
        error.reason === 'timeout'
          ? `${url} did not answer completely within ${formatMs(verifyTimeoutMs)}.`
          : error.reason === 'private_address'
            ? `${url} was not fetched: ${error.message}. Only public addresses are checked.`
            : `${url} could not be fetched: ${error.message}.`;
      return { url, ok: false, detail };
    }
  };

  /**
   * Verifies `current` (pending) and does everything that goes with it. Call inside a transaction:
   * the claim, `claim.approved`, the agent's verified mark (`agent.verified`) and the audit entries
   * are committed together. Other pending claims for the same agent are rejected as superseded.
   */
  const approve = (
    current: ClaimRow,
    how: { verifiedBy: 'automatic' | 'manual'; actor?: string; note?: string; changes?: Partial<ClaimRow> },
  ): ClaimRow => {
    const now = isoNow(clock);
    const next = writeChanges(current, { ...how.changes, status: 'verified', verifiedBy: how.verifiedBy, decidedAt: now });
    events.record('claim.approved', {
      claim_id: next.id,
      agent_id: next.agentId,
      claimant_name: next.claimantName,
      method: how.verifiedBy === 'automatic' ? 'well-known' : 'manual',
    });
    agents.setVerified(next.agentId, true, { via: 'claim', actor: how.actor });

    const others = db
      .select()
      .from(claims)
      .where(and(eq(claims.agentId, next.agentId), eq(claims.status, 'pending'), ne(claims.id, next.id)))
      .all();
    for (const other of others) {
      const rejected = writeChanges(other, { status: 'rejected', reason: SUPERSEDED_REASON, decidedAt: now });
      if (how.actor) {
        audit.record({
          actor: how.actor,
          action: 'claim.reject',
          entityType: 'claim',
          entityId: other.id,
          before: { status: other.status },
          after: { status: rejected.status, reason: rejected.reason, superseded_by: next.id },
        });
      }
    }
    if (how.actor) {
      audit.record({
        actor: how.actor,
        action: 'claim.verify',
        entityType: 'claim',
        entityId: next.id,
        before: { status: current.status },
        after: { status: next.status, verified_by: next.verifiedBy, ...(how.note ? { note: how.note } : {}) },
      });
    }
    return next;
  };

  /**
   * The automatic check, for the public verify endpoint and the console's "check now".
   * The fetch happens outside any transaction; its result is then committed (even a
   * failed one, so claimants and moderators see what was found) before a failure is thrown.
   */
  const runCheck = async (id: string, options: ModeratorOptions & { actor?: string }): Promise<ClaimRow> => {
    const before = requireRow(id);
    requirePending(before, options);
    // The URL follows the agent's current source, so a claim made before the source moved
    // cannot be proven on the old host.
    const agent = agents.findRow(before.agentId);
    const url = agent ? verificationUrlFor(agent.sourceUrl) : before.verificationUrl;
    const outcome = await fetchAndCheck(url, before.token);

    const row = inTransaction(db, () => {
      const current = requireRow(id);
      // Someone else may have decided (or checked) the claim while we were fetching.
      requirePending(current, { expectedVersion: options.expectedVersion === undefined ? undefined : before.version });
      const lastCheck: ClaimCheckResult = {
        checkedAt: isoNow(clock),
        ok: outcome.ok,
        ...(outcome.status !== undefined ? { status: outcome.status } : {}),
        detail: outcome.detail,
      };
      const changes: Partial<ClaimRow> = { lastCheck, verificationUrl: outcome.url };
      if (outcome.ok) return approve(current, { verifiedBy: 'automatic', actor: options.actor, changes });
      const next = writeChanges(current, changes);
      if (options.actor) {
        audit.record({
          actor: options.actor,
          action: 'claim.check',
          entityType: 'claim',
          entityId: id,
          before: { status: current.status },
          after: { status: next.status, last_check: lastCheckView(lastCheck) },
        });
      }
      return next;
    });
    if (!outcome.ok) throw new VerificationFailedError(outcome.detail);
    return row;
  };

  return {
    toPublicClaim,

    /** A new pending claim on a listed, not yet verified agent, with its token and verification URL. */
    /** `accountId` when the claim is made with an account (it then belongs to it). */
    create(input: CreateClaimInput, accountId: string | null = null): NewClaim {
      return inTransaction(db, () => {
        const agent = agents.findRow(input.agent_id);
        if (!agent || !agent.listed) throw new NotFoundError('Agent', input.agent_id);
        if (agent.verified) throw new ConflictError(`Agent "${agent.id}" is already verified; it cannot be claimed again`);
        const now = isoNow(clock);
        const row: ClaimRow = {
          id: ids.next('clm'),
          agentId: agent.id,
          claimantName: input.claimant_name,
          claimantEmail: input.claimant_email,
          accountId,
          status: 'pending',
          token: `${CLAIM_TOKEN_PREFIX}${randomToken(32)}`,
          verificationUrl: verificationUrlFor(agent.sourceUrl),
          lastCheck: null,
          verifiedBy: null,
          reason: null,
          version: 1,
          createdAt: now,
          updatedAt: now,
          decidedAt: null,
        };
        db.insert(claims).values(row).run();
        return toNewClaim(row);
      });
    },

    /** The public view of a claim (for claimants polling). */
    getPublic(id: string): PublicClaim {
      return toPublicClaim(requireRow(id));
    },

    /**
     * `POST /claims/{id}/verify`: fetch the well-known file; verified when it holds the token,
     * else VerificationFailedError (422) with what was found, the claim staying pending.
     */
    async verify(id: string): Promise<PublicClaim> {
      return toPublicClaim(await runCheck(id, {}));
    },

    // ── Console (moderators) ────────────────────────────────────────────────

    /** Claims, newest first, optionally of one status or agent. */
    list(query: ListClaimsQuery): Page<AdminClaim> {
      const filters: SQL[] = [];
      if (query.status) filters.push(eq(claims.status, query.status));
      if (query.agent_id) filters.push(eq(claims.agentId, query.agent_id));
      const where = filters.length ? and(...filters) : undefined;
      const rows = db
        .select()
        .from(claims)
        .where(where)
        .orderBy(desc(claims.createdAt), desc(claims.id))
        .limit(query.limit)
        .offset((query.page - 1) * query.limit)
        .all();
      const total = db.select({ n: count() }).from(claims).where(where).get()?.n ?? 0;
      return { items: rows.map(toAdminClaim), page: query.page, limit: query.limit, total };
    },

    /** Everything about a claim, token and e-mail address included. */
    get(id: string): AdminClaim {
      return toAdminClaim(requireRow(id));
    },

    /** Runs the automatic check now, on a moderator's behalf (audited); throws VerificationFailedError like verify. */
    async verifyNow(id: string, actor: string, options: ModeratorOptions = {}): Promise<AdminClaim> {
      return toAdminClaim(await runCheck(id, { ...options, actor }));
    },

    /** A moderator vouches for the claim without the well-known file (verified_by "manual"). */
    verifyManually(id: string, actor: string, note?: string, options: ModeratorOptions = {}): AdminClaim {
      return inTransaction(db, () => {
        const current = requireRow(id);
        requirePending(current, options);
        return toAdminClaim(approve(current, { verifiedBy: 'manual', actor, note: note?.trim() || undefined }));
      });
    },

    /** A moderator turns the claim down; the reason is shown to the claimant. */
    reject(id: string, reason: string, actor: string, options: ModeratorOptions = {}): AdminClaim {
      const trimmed = reason.trim();
      if (!trimmed) throw new ValidationError('A reason is required to reject a claim', [{ pointer: '/reason', detail: 'is required' }]);
      if (trimmed.length > 1000)
        throw new ValidationError('The reason is too long', [{ pointer: '/reason', detail: 'at most 1,000 characters' }]);
      return inTransaction(db, () => {
        const current = requireRow(id);
        requirePending(current, options);
        const next = writeChanges(current, { status: 'rejected', reason: trimmed, decidedAt: isoNow(clock) });
        audit.record({
          actor,
          action: 'claim.reject',
          entityType: 'claim',
          entityId: id,
          before: { status: current.status },
          after: { status: next.status, reason: trimmed },
        });
        return toAdminClaim(next);
      });
    },

    /** How many claims are in each status (the console's tab counts). */
    countByStatus(): Record<ClaimStatus, number> {
      const counts: Record<ClaimStatus, number> = { pending: 0, verified: 0, rejected: 0 };
      const rows = db.select({ status: claims.status, n: count() }).from(claims).groupBy(claims.status).all();
      for (const row of rows) counts[row.status] = row.n;
      return counts;
    },

    countPending(): number {
      return db.select({ n: count() }).from(claims).where(eq(claims.status, 'pending')).get()?.n ?? 0;
    },
  };
}

export type ClaimsService = ReturnType<typeof createClaimsService>;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

function formatMs(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
