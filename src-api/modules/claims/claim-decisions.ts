import { and, eq, ne } from 'drizzle-orm';
import type { Store } from '../../db/store';
import { ValidationError, VerificationFailedError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { DnsResolver } from '../../lib/dns-resolver';
import type { SafeFetch } from '../../lib/safe-fetch';
import type { AgentsService } from '../agents/agents.service';
import type { AuditService } from '../audit/audit.service';
import type { EventsService } from '../events/events.service';
import type { ClaimRows, ModeratorOptions } from './claim-rows';
import { toLastCheckView } from './claim-views';
import type { ClaimCheckResult, ClaimRow, ProofMethod, ProofResult } from './claims.table';
import { createProofChecker } from './proof-methods';

const SUPERSEDED_REASON = 'Another ownership claim for this agent was verified';
/** The audit actor of what the service decides by itself. */
export const SYSTEM_ACTOR = 'system';

export interface ClaimDecisionsDeps {
  store: Store;
  clock: Clock;
  agents: AgentsService;
  audit: AuditService;
  events: EventsService;
  rows: ClaimRows;
  /** The proofs that fit a source, with the claim's token. */
  methodsOf: (sourceUrl: string, token: string) => ProofMethod[];
  fetch: SafeFetch;
  resolver: DnsResolver;
  verifyTimeoutMs: number;
  verifyMaxBytes: number;
  recheckIntervalMs: number;
  accountOf: (accountId: string) => Promise<{ name: string; email: string } | undefined>;
}

/**
 * Checking a claim's proofs and deciding it: verified by a proof or by a moderator (the agent's
 * verified mark, the owner, `claim.approved`, competing claims rejected as superseded), or rejected.
 */
export function createClaimDecisions({
  store,
  clock,
  agents,
  audit,
  events,
  rows,
  methodsOf,
  fetch,
  resolver,
  verifyTimeoutMs,
  verifyMaxBytes,
  recheckIntervalMs,
  accountOf,
}: ClaimDecisionsDeps) {
  const { requireRow, lockRow, requirePending, writeChanges } = rows;
  const checkProof = createProofChecker({ resolver, fetch, timeoutMs: verifyTimeoutMs, maxBytes: verifyMaxBytes });

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

  /**
   * The claim `id` read for a decision, inside the deciding transaction. Its agent's row is
   * locked first (FOR UPDATE on PostgreSQL): two claims on one agent decided at once queue on
   * it, so the second sees itself superseded by the first rather than both verifying; new
   * claims on the agent (claims.service) take the same lock.
   */
  const lockForDecision = async (id: string): Promise<ClaimRow> => {
    const { agentId } = await requireRow(id);
    await agents.edits.lockRow(agentId, { includeUnlisted: true });
    return lockRow(id);
  };

  /**
   * Verifies `current` (pending, read by lockForDecision) and does everything that goes with it.
   * Call inside a store transaction: the claim, `claim.approved`, the agent's verified mark
   * (`agent.verified`) and the audit entries are committed together. Other pending claims for the
   * same agent are rejected as superseded.
   */
  const approve = async (
    current: ClaimRow,
    how: { verifiedBy: 'automatic' | 'manual'; actor?: string; note?: string; changes?: Partial<ClaimRow> },
  ): Promise<ClaimRow> => {
    const now = isoNow(clock);
    const next = await writeChanges(current, {
      ...how.changes,
      status: 'verified',
      verifiedBy: how.verifiedBy,
      decidedAt: now,
      // Only a proof can be re-checked; a moderator's word stands until a moderator changes it.
      nextRecheckAt: how.verifiedBy === 'automatic' ? new Date(clock.now().getTime() + recheckIntervalMs).toISOString() : null,
      recheckFailures: 0,
    });
    await events.recordInTransaction('claim.approved', {
      claim_id: next.id,
      agent_id: next.agentId,
      claimant_name: next.claimantName,
      method: how.verifiedBy === 'automatic' ? (next.verifiedMethod ?? 'well-known') : 'manual',
    });
    // A claim made with an account makes that account the owner; an anonymous one only verifies the agent.
    const ownerName = next.accountId ? (await accountOf(next.accountId))?.name : undefined;
    await agents.edits.setVerified(next.agentId, true, {
      via: 'claim',
      actor: how.actor,
      ...(next.accountId && ownerName !== undefined && { owner: { accountId: next.accountId, name: ownerName } }),
    });

    const { claims } = store.t;
    // Locked: a moderator rejecting one of them at this moment goes first, and it is then no longer pending.
    const others = await store.rows(
      store.forUpdate(
        store.db
          .select()
          .from(claims)
          .where(and(eq(claims.agentId, next.agentId), eq(claims.status, 'pending'), ne(claims.id, next.id))),
      ),
    );
    for (const other of others) {
      const rejected = await writeChanges(other, { status: 'rejected', reason: `${SUPERSEDED_REASON} (${next.id})`, decidedAt: now });
      // The service did this, not whoever verified the winning claim.
      await audit.recordInTransaction({
        actor: SYSTEM_ACTOR,
        action: 'claim.reject',
        entityType: 'claim',
        entityId: other.id,
        before: { status: other.status },
        after: { status: rejected.status, reason: rejected.reason, superseded_by: next.id },
      });
    }
    if (how.actor) {
      await audit.recordInTransaction({
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
    const before = await requireRow(id);
    requirePending(before, options);
    // The proofs follow the agent's current source, so a claim made before the source moved
    // cannot be proven on the old host.
    const agent = await agents.findRowAsync(before.agentId);
    const methods = agent ? methodsOf(agent.sourceUrl, before.token) : before.methods;
    const lastCheck = await checkAll(methods, before.token);

    const row = await store.transaction(async () => {
      const current = await lockForDecision(id);
      // Someone else may have decided (or checked) the claim while we were checking.
      requirePending(current, { expectedVersion: options.expectedVersion === undefined ? undefined : before.version });
      const changes: Partial<ClaimRow> = {
        lastCheck,
        methods,
        verificationUrl: methods[0]?.url ?? current.verificationUrl,
        ...(lastCheck.ok ? { verifiedMethod: lastCheck.method } : {}),
      };
      if (lastCheck.ok) return approve(current, { verifiedBy: 'automatic', actor: options.actor, changes });
      const next = await writeChanges(current, changes);
      if (options.actor) {
        await audit.recordInTransaction({
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

  return {
    checkAll,
    runCheck,

    /** A moderator vouches for the claim without the well-known file (verified_by "manual"). */
    verifyManually(id: string, actor: string, note?: string, options: ModeratorOptions = {}): Promise<ClaimRow> {
      return store.transaction(async () => {
        const current = await lockForDecision(id);
        requirePending(current, options);
        return approve(current, { verifiedBy: 'manual', actor, note: note?.trim() || undefined });
      });
    },

    /** A moderator turns the claim down; the reason is shown to the claimant. */
    async reject(id: string, reason: string, actor: string, options: ModeratorOptions = {}): Promise<ClaimRow> {
      const trimmed = reason.trim();
      if (!trimmed) throw new ValidationError('A reason is required to reject a claim', [{ pointer: '/reason', detail: 'is required' }]);
      if (trimmed.length > 1000)
        throw new ValidationError('The reason is too long', [{ pointer: '/reason', detail: 'at most 1,000 characters' }]);
      return store.transaction(async () => {
        const current = await lockRow(id);
        requirePending(current, options);
        const next = await writeChanges(current, { status: 'rejected', reason: trimmed, decidedAt: isoNow(clock) });
        await audit.recordInTransaction({
          actor,
          action: 'claim.reject',
          entityType: 'claim',
          entityId: id,
          before: { status: current.status },
          after: { status: next.status, reason: trimmed },
        });
        return next;
      });
    },
  };
}

export type ClaimDecisions = ReturnType<typeof createClaimDecisions>;
