import type { inferRouterOutputs } from '@trpc/server';
import { defineStore } from 'pinia';
import { ref, shallowRef, watch } from 'vue';
import type { AppRouter } from '../../src-api/trpc/root';
import { useHeldDecisions } from '../composables/use-held-decisions';
import { usePagedQueue } from '../composables/use-paged-queue';
import { toConsoleError, trpc } from '../trpc';
import { isConflict, type ActionOutcome, type ConflictNotice } from './submissions-store';

type Outputs = inferRouterOutputs<AppRouter>['claims'];
export type QueueClaim = Outputs['get'];
export type ClaimStatus = QueueClaim['status'];
export type ClaimCounts = Outputs['counts'];

export const CLAIM_STATUSES: readonly ClaimStatus[] = ['pending', 'verified', 'rejected'];

/** What the last "Verify now" of a claim found, shown in its detail pane. */
export interface CheckReport {
  id: string;
  ok: boolean;
  message: string;
}

/**
 * The claims queue: one status tab at a time, each agent's claims together
 * (competing claims side by side), paged as the list scrolls, the selected
 * claim, the other claims on its agent and the outcome of the last check.
 * Verifying and rejecting are held 5 s with an undo (as in the submissions
 * queue); the row leaves at once. After any action the agent's claims are
 * fetched again: verifying one rejects the others on the server, and those
 * show as rejected at once, never as pending with buttons.
 */
export const useClaimsStore = defineStore('claims', () => {
  const status = ref<ClaimStatus>('pending');
  const counts = ref<ClaimCounts | null>(null);
  const conflict = ref<ConflictNotice | null>(null);
  const checkReport = ref<CheckReport | null>(null);
  const queue = usePagedQueue<QueueClaim>({
    fetchPage: async (page, limit) => {
      const result = await trpc.claims.list.query({ status: status.value, page, limit, group_by_agent: true });
      return { items: result.claims, total: result.total };
    },
    beforeSelect: (id) => {
      if (conflict.value && conflict.value.id !== id) conflict.value = null;
      if (checkReport.value && checkReport.value.id !== id) checkReport.value = null;
    },
  });
  const { rows, selectedId, busyIds, replaceRow } = queue;
  /** Every claim on the selected claim's agent but the selected one, any status. */
  const competitors = shallowRef<QueueClaim[]>([]);
  let competitorsFor = '';

  /**
   * Fetches the claims on an agent again: they replace their rows (a claim rejected on the server because
   * a competing one was verified shows as rejected) and, for the selected agent, the competitors.
   */
  async function refreshAgent(agentId: string): Promise<void> {
    try {
      const result = await trpc.claims.list.query({ agent_id: agentId, page: 1, limit: 100, group_by_agent: true });
      for (const claim of result.claims) replaceRow(claim);
      if (queue.selected.value?.agent_id === agentId) competitors.value = result.claims.filter((claim) => claim.id !== selectedId.value);
    } catch {
      // The list keeps what it shows; the next action or reload tries again.
    }
  }

  watch([() => queue.selected.value?.agent_id, selectedId], ([agentId]) => {
    if (!agentId) {
      competitors.value = [];
      competitorsFor = '';
      return;
    }
    if (competitorsFor !== agentId) competitors.value = [];
    else competitors.value = competitors.value.filter((claim) => claim.id !== selectedId.value);
    competitorsFor = agentId;
    void refreshAgent(agentId);
  });

  async function loadCounts(): Promise<void> {
    try {
      counts.value = await trpc.claims.counts.query();
    } catch {
      // The counts are a nicety; the list reports errors itself.
    }
  }

  function reload(): Promise<void> {
    void loadCounts();
    return queue.reload();
  }

  function setStatus(next: ClaimStatus): void {
    if (status.value === next) return;
    status.value = next;
    selectedId.value = null;
    conflict.value = null;
    checkReport.value = null;
    void reload();
  }

  async function reloadItem(id: string): Promise<QueueClaim | null> {
    try {
      const fresh = await trpc.claims.get.query({ id });
      replaceRow(fresh);
      void loadCounts();
      return fresh;
    } catch {
      return null;
    }
  }

  function runAction(claim: QueueClaim, action: () => Promise<QueueClaim>): Promise<ActionOutcome<QueueClaim>> {
    const { id } = claim;
    const busy: ActionOutcome<QueueClaim> = { ok: false, error: { code: 'busy', message: 'Already working on it' }, conflict: false };
    return queue.whileBusy<ActionOutcome<QueueClaim>>(id, busy, async () => {
      try {
        const value = await action();
        replaceRow(value);
        void loadCounts();
        await refreshAgent(value.agent_id);
        if (conflict.value?.id === id) conflict.value = null;
        return { ok: true, value };
      } catch (cause) {
        const described = toConsoleError(cause);
        if (isConflict(described)) {
          const fresh = await reloadItem(id);
          const now = fresh && fresh.status !== 'pending' ? ` It is now ${fresh.status}.` : '';
          conflict.value = {
            id,
            message: `This claim was changed by another moderator (or checked by the claimant), so your action was not applied.${now} It has been reloaded: review it again.`,
          };
          return { ok: false, error: described, conflict: true };
        }
        // A failed check is kept in last_check (a new version): show the claim as it is now.
        if (described.code === 'verification_failed') await reloadItem(id);
        return { ok: false, error: described, conflict: false };
      }
    });
  }

  async function verifyNow(claim: QueueClaim): Promise<ActionOutcome<QueueClaim>> {
    checkReport.value = null;
    const outcome = await runAction(claim, () => trpc.claims.verifyNow.mutate({ id: claim.id, expectedVersion: claim.version }));
    if (outcome.ok) {
      checkReport.value = { id: claim.id, ok: true, message: outcome.value.last_check?.detail ?? 'The token was found.' };
    } else if (outcome.error.code === 'verification_failed') {
      checkReport.value = { id: claim.id, ok: false, message: outcome.error.message };
    }
    return outcome;
  }

  function verifyManually(claim: QueueClaim, note: string): Promise<ActionOutcome<QueueClaim>> {
    return runAction(claim, () =>
      trpc.claims.verifyManually.mutate({ id: claim.id, note: note || undefined, expectedVersion: claim.version }),
    );
  }

  function reject(claim: QueueClaim, reason: string): Promise<ActionOutcome<QueueClaim>> {
    return runAction(claim, () => trpc.claims.reject.mutate({ id: claim.id, reason, expectedVersion: claim.version }));
  }

  const held = useHeldDecisions({ queue, reloadItem });

  /**
   * Verify by hand or reject with a short window to take it back: the row leaves the list at once, the
   * decision is sent when the window ends (resolving to its outcome), or never if undone first ('undone').
   */
  function decideLater(claim: QueueClaim, decision: 'verify' | 'reject', text: string): Promise<ActionOutcome<QueueClaim> | 'undone'> {
    return held.decideLater(claim, () => (decision === 'verify' ? verifyManually(claim, text) : reject(claim, text)));
  }

  return {
    status,
    rows,
    total: queue.total,
    counts,
    loading: queue.loading,
    loadingMore: queue.loadingMore,
    error: queue.error,
    exhausted: queue.exhausted,
    selectedId,
    selected: queue.selected,
    busyIds,
    conflict,
    checkReport,
    competitors,
    reload,
    loadMore: queue.loadMore,
    setStatus,
    select: queue.select,
    moveSelection: queue.moveSelection,
    reloadItem,
    verifyNow,
    verifyManually,
    reject,
    decideLater,
    undoDecision: held.undoDecision,
    undoLatestDecision: held.undoLatestDecision,
    sendHeldDecisions: held.sendHeldDecisions,
    holdingDecisions: held.holdingDecisions,
    undoWindowMs: held.undoWindowMs,
  };
});
