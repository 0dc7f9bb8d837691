import { and, count, desc, eq, inArray, ne, sql, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import {
  AppError,
  ConflictError,
  QuotaExceededError,
  NotFoundError,
  StaleVersionError,
  ValidationError,
  VerificationFailedError,
} from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import { randomToken, type IdGenerator } from '../../lib/ids';
import type { DnsResolver } from '../../lib/dns-resolver';
import type { SafeFetch } from '../../lib/safe-fetch';
import type { Page } from '../../lib/schemas';
import type { AgentsService } from '../agents/agents.service';
import type { AuditService } from '../audit/audit.service';
import type { EventsService } from '../events/events.service';
import { toLastCheckView, toNewClaim, toPublicClaim } from './claim-views';
import { type AdminClaim, type CreateClaimInput, type ListClaimsQuery, type NewClaim, type PublicClaim } from './claims.schemas';
import { claims, type ClaimCheckResult, type ClaimRow, type ClaimStatus, type ProofMethod, type ProofResult } from './claims.table';
import { createOwnershipRecheck } from './ownership-recheck';
import { createProofChecker, proofMethodsFor } from './proof-methods';
import type { QueueMailInput } from '../mail/mail.service';

export interface ClaimsServiceDeps {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  agents: AgentsService;
  audit: AuditService;
  /** Records `claim.approved` in the approving transaction. */
  events: EventsService;
  /** Fetches proof files (services.safeFetch: private addresses per `--allow-private-urls`, capped in flight). */
  fetch: SafeFetch;
  /** Deadline of one fetch of a proof file (`config.claimCheckTimeoutMs`). */
  verifyTimeoutMs: number;
  /** Largest proof file read; a larger one is refused as too large. Default 64 KiB. */
  verifyMaxBytes?: number;
  /** Answers the dns-txt proofs (`AGENTDIR_DNS_SERVERS`). */
  resolver: DnsResolver;
  /** Raw-file origins of the forges by host (`AGENTDIR_FORGE_RAW_BASES`); empty: the real ones. */
  forgeRawBases: Record<string, string>;
  /** When a verified claim's proof is first re-checked after verification (`config.ownershipRecheckIntervalMs`). */
  recheckIntervalMs: number;
  /** Enforce the quotas of contract section 3 (off with the rate limits). */
  quotas: boolean;
  /** The account a verified claim makes owner, as profiles and mails name it (undefined once the account is gone). */
  accountOf: (accountId: string) => { name: string; email: string } | undefined;
  /** Failed re-checks in a row that take the agent's verified mark away (`config.ownershipRecheckStrikes`). */
  recheckStrikes: number;
  /** Queues a mail in the caller's transaction (MailService.queue). */
  queueMail: (mail: QueueMailInput) => void;
}

/** Who is asking, for quotas and ownership. */
export interface ClaimantContext {
  /** The client IP key. */
  clientKey?: string;
  /** The signed-in account, when there is one. */
  accountId?: string;
}

/** Pending claims one client may have at once (contract section 3). */
export const MAX_PENDING_CLAIMS_PER_CLIENT = 5;

/** A claim whose agent's source admits no proof (a forge URL naming no repository). */
export class UnprovableSourceError extends AppError {
  constructor(sourceUrl: string) {
    super(
      422,
      'unprovable_source',
      'No proof fits this source',
      `The agent's source ${sourceUrl} names no repository, so ownership cannot be proven automatically; ask a moderator to fix the source URL.`,
    );
  }
}

export interface ModeratorOptions {
  /** The claim version the moderator last saw; a different current version is a 409 stale_version. */
  expectedVersion?: number;
}

export const DEFAULT_VERIFY_MAX_BYTES = 64 * 1024;
export const CLAIM_TOKEN_PREFIX = 'adclaim-';
const SUPERSEDED_REASON = 'Another ownership claim for this agent was verified';
/** The audit actor of what the service decides by itself. */
export const SYSTEM_ACTOR = 'system';

export function createClaimsService({
  db,
  clock,
  ids,
  agents,
  audit,
  events,
  fetch,
  verifyTimeoutMs,
  verifyMaxBytes = DEFAULT_VERIFY_MAX_BYTES,
  resolver,
  forgeRawBases,
  recheckIntervalMs,
  quotas,
  accountOf,
  recheckStrikes,
  queueMail,
}: ClaimsServiceDeps) {
  const checkProof = createProofChecker({ resolver, fetch, timeoutMs: verifyTimeoutMs, maxBytes: verifyMaxBytes });
  const methodsOf = (sourceUrl: string, token: string): ProofMethod[] => proofMethodsFor(sourceUrl, token, forgeRawBases);

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

  /** Pending claims per agent, for the agents of `rows`. */
  const pendingByAgent = (rows: readonly ClaimRow[]): Map<string, number> => {
    const agentIds = [...new Set(rows.map((row) => row.agentId))];
    if (agentIds.length === 0) return new Map();
    const counted = db
      .select({ agentId: claims.agentId, n: count() })
      .from(claims)
      .where(and(eq(claims.status, 'pending'), inArray(claims.agentId, agentIds)))
      .groupBy(claims.agentId)
      .all();
    return new Map(counted.map((entry) => [entry.agentId, entry.n]));
  };

  const toAdminClaims = (rows: readonly ClaimRow[]): AdminClaim[] => {
    const pending = pendingByAgent(rows);
    return rows.map((row) => {
      const { instructions: _instructions, ...verification } = toNewClaim(row).verification;
      const competing = (pending.get(row.agentId) ?? 0) - (row.status === 'pending' ? 1 : 0);
      return { ...toNewClaim(row), agent_name: agentNameOf(row.agentId), competing_claims: competing, verification, version: row.version };
    });
  };
  const toAdminClaim = (row: ClaimRow): AdminClaim => toAdminClaims([row])[0]!;

  /** Writes `changes`, bumping version and updated_at. Call inside a transaction. */
  const writeChanges = (current: ClaimRow, changes: Partial<ClaimRow>): ClaimRow => {
    const next: ClaimRow = { ...current, ...changes, version: current.version + 1, updatedAt: isoNow(clock) };
    db.update(claims).set(next).where(eq(claims.id, current.id)).run();
    return next;
  };

  /** Checks every method at once; passes when any holds. Never throws for what the targets do. */
  const checkAll = async (methods: ProofMethod[], token: string): Promise<ClaimCheckResult> => {
    const results: ProofResult[] = await Promise.all(methods.map((method) => checkProof(method, token)));
    const held = results.find((result) => result.ok);
    const first = results[0];
    const detail = held
      ? held.detail
      : results.length === 1
        ? first!.detail
        : results.map((result) => `${result.method}: ${result.detail}`).join(' ');
    return {
      checkedAt: isoNow(clock),
      ok: held !== undefined,
      ...(first?.status !== undefined ? { status: first.status } : {}),
      detail: detail || 'No proof method fits this agent’s source.',
      ...(held ? { method: held.method } : {}),
      results,
    };
  };

  /** Contract section 3: at most 5 pending claims per client; one pending claim per account and agent. */
  const enforceQuotas = (agentId: string, who: ClaimantContext): void => {
    if (who.accountId) {
      const mine = db
        .select({ id: claims.id })
        .from(claims)
        .where(and(eq(claims.agentId, agentId), eq(claims.accountId, who.accountId), eq(claims.status, 'pending')))
        .get();
      if (mine) throw new ConflictError(`You already have a pending claim on agent "${agentId}" (${mine.id}); verify or wait for it`);
    }
    if (who.clientKey) {
      const pending = db
        .select({ n: count() })
        .from(claims)
        .where(and(eq(claims.clientKey, who.clientKey), eq(claims.status, 'pending')))
        .get()?.n;
      if ((pending ?? 0) >= MAX_PENDING_CLAIMS_PER_CLIENT) {
        throw new QuotaExceededError(
          `At most ${MAX_PENDING_CLAIMS_PER_CLIENT} pending claims per client; verify or withdraw one before claiming another agent`,
        );
      }
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
    const next = writeChanges(current, {
      ...how.changes,
      status: 'verified',
      verifiedBy: how.verifiedBy,
      decidedAt: now,
      // Only a proof can be re-checked; a moderator's word stands until a moderator changes it.
      nextRecheckAt: how.verifiedBy === 'automatic' ? new Date(clock.now().getTime() + recheckIntervalMs).toISOString() : null,
      recheckFailures: 0,
    });
    events.record('claim.approved', {
      claim_id: next.id,
      agent_id: next.agentId,
      claimant_name: next.claimantName,
      method: how.verifiedBy === 'automatic' ? (next.verifiedMethod ?? 'well-known') : 'manual',
    });
    // A claim made with an account makes that account the owner; an anonymous one only verifies the agent.
    const ownerName = next.accountId ? accountOf(next.accountId)?.name : undefined;
    agents.setVerified(next.agentId, true, {
      via: 'claim',
      actor: how.actor,
      ...(next.accountId && ownerName !== undefined && { owner: { accountId: next.accountId, name: ownerName } }),
    });

    const others = db
      .select()
      .from(claims)
      .where(and(eq(claims.agentId, next.agentId), eq(claims.status, 'pending'), ne(claims.id, next.id)))
      .all();
    for (const other of others) {
      const rejected = writeChanges(other, { status: 'rejected', reason: `${SUPERSEDED_REASON} (${next.id})`, decidedAt: now });
      // The service did this, not whoever verified the winning claim.
      audit.record({
        actor: SYSTEM_ACTOR,
        action: 'claim.reject',
        entityType: 'claim',
        entityId: other.id,
        before: { status: other.status },
        after: { status: rejected.status, reason: rejected.reason, superseded_by: next.id },
      });
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
    // The proofs follow the agent's current source, so a claim made before the source moved
    // cannot be proven on the old host.
    const agent = agents.findRow(before.agentId);
    const methods = agent ? methodsOf(agent.sourceUrl, before.token) : before.methods;
    const lastCheck = await checkAll(methods, before.token);

    const row = inTransaction(db, () => {
      const current = requireRow(id);
      // Someone else may have decided (or checked) the claim while we were checking.
      requirePending(current, { expectedVersion: options.expectedVersion === undefined ? undefined : before.version });
      const changes: Partial<ClaimRow> = {
        lastCheck,
        methods,
        verificationUrl: methods[0]?.url ?? current.verificationUrl,
        ...(lastCheck.ok ? { verifiedMethod: lastCheck.method } : {}),
      };
      if (lastCheck.ok) return approve(current, { verifiedBy: 'automatic', actor: options.actor, changes });
      const next = writeChanges(current, changes);
      if (options.actor) {
        audit.record({
          actor: options.actor,
          action: 'claim.check',
          entityType: 'claim',
          entityId: id,
          before: { status: current.status },
          after: { status: next.status, last_check: toLastCheckView(lastCheck) },
        });
      }
      return next;
    });
    if (!lastCheck.ok) throw new VerificationFailedError(lastCheck.detail);
    return row;
  };

  const rechecks = createOwnershipRecheck({
    db,
    clock,
    agents,
    audit,
    methodsOf,
    checkAll,
    writeChanges,
    queueMail,
    accountOf,
    intervalMs: recheckIntervalMs,
    strikes: recheckStrikes,
  });

  return {
    toPublicClaim,

    /** The weekly re-check of verified ownership (ownership-recheck.ts); run hourly by the server. */
    recheckDue: rechecks.recheckDue,

    /** A new pending claim on a listed, not yet verified agent, with its token and every proof that fits. */
    create(input: CreateClaimInput, who: ClaimantContext = {}): NewClaim {
      return inTransaction(db, () => {
        const agent = agents.findRow(input.agent_id);
        if (!agent || !agent.listed) throw new NotFoundError('Agent', input.agent_id);
        if (agent.verified) throw new ConflictError(`Agent "${agent.id}" is already verified; it cannot be claimed again`);
        if (quotas) enforceQuotas(agent.id, who);
        const token = `${CLAIM_TOKEN_PREFIX}${randomToken(32)}`;
        const methods = methodsOf(agent.sourceUrl, token);
        if (methods.length === 0) throw new UnprovableSourceError(agent.sourceUrl);
        const now = isoNow(clock);
        const row: ClaimRow = {
          id: ids.next('clm'),
          agentId: agent.id,
          claimantName: input.claimant_name,
          claimantEmail: input.claimant_email,
          status: 'pending',
          token,
          verificationUrl: methods[0]!.url ?? '',
          methods,
          verifiedMethod: null,
          accountId: who.accountId ?? null,
          clientKey: who.clientKey ?? null,
          nextRecheckAt: null,
          recheckFailures: 0,
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

    /** Claims, newest first (or grouped by agent), optionally of one status or agent. */
    list(query: ListClaimsQuery): Page<AdminClaim> {
      const filters: SQL[] = [];
      if (query.status) filters.push(eq(claims.status, query.status));
      if (query.agent_id) filters.push(eq(claims.agentId, query.agent_id));
      const where = filters.length ? and(...filters) : undefined;
      // An agent's place is that of its newest claim (of the same status), so its claims stay together across pages.
      const groupOrder = query.group_by_agent
        ? [
            sql`(select max(other.created_at) from ${claims} as other where other.agent_id = ${claims.agentId}${
              query.status ? sql` and other.status = ${claims.status}` : sql``
            }) desc`,
            claims.agentId,
          ]
        : [];
      const rows = db
        .select()
        .from(claims)
        .where(where)
        .orderBy(...groupOrder, desc(claims.createdAt), desc(claims.id))
        .limit(query.limit)
        .offset((query.page - 1) * query.limit)
        .all();
      const total = db.select({ n: count() }).from(claims).where(where).get()?.n ?? 0;
      return { items: toAdminClaims(rows), page: query.page, limit: query.limit, total };
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
