import { and, asc, eq, isNotNull, lte } from 'drizzle-orm';
import type { Store } from '../../db/store';
import { isoNow, type Clock } from '../../lib/clock';
import type { AgentsService } from '../agents/agents.service';
import type { AuditService } from '../audit/audit.service';
import type { QueueMailInput } from '../mail/mail.service';
import type { ClaimCheckResult, ClaimRow, ProofMethod } from './claims.table';

/** Verified claims re-checked per run, one after another (each under the proof checks' own deadlines). */
const RECHECKS_PER_RUN = 100;

export interface RecheckSummary {
  checked: number;
  held: number;
  failed: number;
  /** Agents that lost their verified mark in this run (the last strike). */
  unverified: number;
}

export interface OwnershipRecheckDeps {
  store: Store;
  clock: Clock;
  agents: AgentsService;
  audit: AuditService;
  /** The claims service's own pieces: the proofs of a source, checking them, and its one write of a claim row. */
  methodsOf: (sourceUrl: string, token: string) => ProofMethod[];
  checkAll: (methods: ProofMethod[], token: string) => Promise<ClaimCheckResult>;
  writeChanges: (current: ClaimRow, changes: Partial<ClaimRow>) => Promise<ClaimRow>;
  /** The owner account of a claim made with one (mailed when the mark goes; else the claimant is). */
  accountOf: (accountId: string) => Promise<{ name: string; email: string } | undefined>;
  /** Queues a mail in the transaction that takes the mark away (MailService.queueInTransaction). */
  queueMail: (mail: QueueMailInput) => Promise<unknown>;
  intervalMs: number;
  strikes: number;
}

/** The audit actor of what the service decides by itself. */
const SYSTEM_ACTOR = 'system';

/**
 * Verified ownership does not last for ever: a proof that held once is checked again every
 * `intervalMs` (weekly by default; only proofs, never a moderator's manual verification).
 * A check that holds clears the strikes; `strikes` failures in a row take the agent's verified
 * mark away (`agent.updated`), mail the owner, and stop the re-checks of that claim.
 */
export function createOwnershipRecheck(deps: OwnershipRecheckDeps) {
  const { store, clock, agents, audit, intervalMs, strikes } = deps;
  const { claims } = store.t;

  const nextAt = (): string => new Date(clock.now().getTime() + intervalMs).toISOString();

  async function recheck(due: ClaimRow): Promise<'held' | 'failed' | 'unverified' | 'skipped'> {
    const agent = await agents.findRowAsync(due.agentId);
    if (!agent) return 'skipped';
    const methods = deps.methodsOf(agent.sourceUrl, due.token);
    const lastCheck = await deps.checkAll(methods, due.token);
    return store.transaction(async () => {
      const current = await store.first(store.forUpdate(store.db.select().from(claims).where(eq(claims.id, due.id)).limit(1)));
      // Changed meanwhile (another process re-checked it, or a moderator acted): leave it.
      if (!current || current.version !== due.version || current.status !== 'verified') return 'skipped';
      if (lastCheck.ok) {
        await deps.writeChanges(current, { lastCheck, recheckFailures: 0, nextRecheckAt: nextAt() });
        return 'held';
      }
      const failures = current.recheckFailures + 1;
      const lost = failures >= strikes;
      const next = await deps.writeChanges(current, { lastCheck, recheckFailures: failures, nextRecheckAt: lost ? null : nextAt() });
      await audit.recordInTransaction({
        actor: SYSTEM_ACTOR,
        action: 'claim.recheck_failed',
        entityType: 'claim',
        entityId: current.id,
        before: { recheck_failures: current.recheckFailures },
        after: { recheck_failures: failures, detail: lastCheck.detail },
      });
      if (!lost) return 'failed';
      await agents.edits.setVerified(current.agentId, false, { actor: SYSTEM_ACTOR });
      const owner = next.accountId ? await deps.accountOf(next.accountId) : undefined;
      await deps.queueMail(ownershipLostMail(owner ?? { name: next.claimantName, email: next.claimantEmail }, agent.name, lastCheck));
      return 'unverified';
    });
  }

  return {
    /** Re-checks the verified claims whose time has come (a bounded batch, oldest first). */
    async recheckDue(limit = RECHECKS_PER_RUN): Promise<RecheckSummary> {
      const due = await store.rows(
        store.db
          .select()
          .from(claims)
          .where(and(eq(claims.status, 'verified'), isNotNull(claims.nextRecheckAt), lte(claims.nextRecheckAt, isoNow(clock))))
          .orderBy(asc(claims.nextRecheckAt), asc(claims.id))
          .limit(limit),
      );
      const summary: RecheckSummary = { checked: 0, held: 0, failed: 0, unverified: 0 };
      for (const row of due) {
        const outcome = await recheck(row);
        if (outcome === 'skipped') continue;
        summary.checked++;
        if (outcome === 'held') summary.held++;
        else summary.failed++;
        if (outcome === 'unverified') summary.unverified++;
      }
      return summary;
    },
  };
}

/** To the owner (or the claimant of an anonymous claim) when the last strike takes the verified mark away. */
function ownershipLostMail(to: { name: string; email: string }, agentName: string, lastCheck: ClaimCheckResult): QueueMailInput {
  return {
    kind: 'ownership.lost',
    to: to.email,
    subject: `${agentName} is no longer verified on Agent Directory`,
    paragraphs: [
      `Hello ${to.name},`,
      `We check the proof of ownership of ${agentName} regularly. It failed several times in a row, so the agent is no longer marked verified.`,
      `The last check found: ${lastCheck.detail}`,
      'Publish the proof again and claim the agent anew from your dashboard to get the mark back.',
    ],
    footer: ['You receive this because you proved ownership of this agent.'],
  };
}
