import type { inferRouterOutputs } from '@trpc/server';
import { defineStore } from 'pinia';
import { computed, ref, shallowRef } from 'vue';
import type { AppRouter } from '../../src-api/trpc/root';
import { useHeldDecisions } from '../composables/use-held-decisions';
import { usePagedQueue } from '../composables/use-paged-queue';
import { toConsoleError, trpc, type ConsoleError } from '../trpc';

type Outputs = inferRouterOutputs<AppRouter>['submissions'];
export type QueueSubmission = Outputs['get'];
export type SubmissionStatus = QueueSubmission['status'];
export type SubmissionCounts = Outputs['counts'];
export type DuplicateHints = Outputs['duplicates'];
export type BulkResult = Outputs['bulkApprove']['results'][number];
export type QueueOptions = Outputs['options'];
export type SubmissionPatch = Parameters<typeof trpc.submissions.update.mutate>[0]['patch'];

/** The bulk procedures take at most this many items per call. */
const BULK_MAX_ITEMS = 100;

export const SUBMISSION_STATUSES: readonly SubmissionStatus[] = ['pending', 'approved', 'rejected'];

/** What a decision came to, for the screen to give feedback on. */
export type ActionOutcome<T> = { ok: true; value: T } | { ok: false; error: ConsoleError; conflict: boolean };

/** A colleague got there first: shown above the reloaded submission until the moderator moves on. */
export interface ConflictNotice {
  id: string;
  message: string;
}

/** stale_version: edited meanwhile; conflict: already decided meanwhile. Either way the item is reloaded. */
export function isConflict(error: { code: string }): boolean {
  return error.code === 'stale_version' || error.code === 'conflict';
}

/**
 * The submissions queue: one status tab and search text at a time, loaded a
 * page at a time as the list scrolls, with the selection (the item in the
 * detail pane) and the checked items (for bulk decisions).
 */
export const useSubmissionsStore = defineStore('submissions', () => {
  const status = ref<SubmissionStatus>('pending');
  const query = ref('');
  const counts = ref<SubmissionCounts | null>(null);
  const checkedIds = ref<string[]>([]);
  const conflict = ref<ConflictNotice | null>(null);
  const options = shallowRef<QueueOptions | null>(null);
  const queue = usePagedQueue<QueueSubmission>({
    fetchPage: async (page, limit) => {
      const result = await trpc.submissions.list.query({ status: status.value, q: query.value.trim() || undefined, page, limit });
      return { items: result.submissions, total: result.total };
    },
    beforeSelect: (id) => {
      if (conflict.value && conflict.value.id !== id) conflict.value = null;
    },
    afterReload: (loaded) => {
      const present = new Set(loaded.map((row) => row.id));
      checkedIds.value = checkedIds.value.filter((id) => present.has(id));
    },
    afterRemove: (gone) => {
      checkedIds.value = checkedIds.value.filter((id) => !gone.has(id));
    },
  });
  const { rows, total, selectedId, selectedIndex, replaceRow, removeRows, loadMore } = queue;

  const checkedRows = computed(() => {
    const checked = new Set(checkedIds.value);
    return rows.value.filter((row) => checked.has(row.id));
  });

  async function loadCounts(): Promise<void> {
    try {
      counts.value = await trpc.submissions.counts.query();
    } catch {
      // The counts are a nicety; the list reports errors itself.
    }
  }

  async function loadOptions(): Promise<void> {
    if (options.value) return;
    try {
      options.value = await trpc.submissions.options.query();
    } catch {
      // The dialogs work without templates (free text) and retry on the next open.
    }
  }

  /** The first page of the current tab and search, replacing what was loaded. */
  function reload(): Promise<void> {
    void loadCounts();
    return queue.reload();
  }

  function setStatus(next: SubmissionStatus): void {
    if (status.value === next) return;
    status.value = next;
    selectedId.value = null;
    checkedIds.value = [];
    conflict.value = null;
    void reload();
  }

  function setQuery(next: string): void {
    if (query.value === next) return;
    query.value = next;
    void reload();
  }

  function toggleChecked(id: string): void {
    checkedIds.value = checkedIds.value.includes(id) ? checkedIds.value.filter((other) => other !== id) : [...checkedIds.value, id];
  }

  /** After a decision: the row leaves the tab when its status no longer matches. */
  function settle(next: QueueSubmission): void {
    if (next.status !== status.value) removeRows([next.id]);
    else replaceRow(next);
    void loadCounts();
  }

  /** Fetches one submission again (after a conflict) and shows what it is now. */
  async function reloadItem(id: string): Promise<QueueSubmission | null> {
    try {
      const fresh = await trpc.submissions.get.query({ id });
      replaceRow(fresh);
      void loadCounts();
      return fresh;
    } catch {
      return null;
    }
  }

  function runAction(id: string, action: () => Promise<QueueSubmission>): Promise<ActionOutcome<QueueSubmission>> {
    const busy: ActionOutcome<QueueSubmission> = { ok: false, error: { code: 'busy', message: 'Already working on it' }, conflict: false };
    return queue.whileBusy<ActionOutcome<QueueSubmission>>(id, busy, async () => {
      try {
        const value = await action();
        if (conflict.value?.id === id) conflict.value = null;
        return { ok: true, value };
      } catch (cause) {
        const described = toConsoleError(cause);
        if (!isConflict(described)) return { ok: false, error: described, conflict: false };
        const fresh = await reloadItem(id);
        const now =
          fresh && fresh.status !== 'pending' ? ` It is now ${fresh.status}${fresh.decided_by ? ` (by ${fresh.decided_by})` : ''}.` : '';
        conflict.value = {
          id,
          message: `This submission was changed by another moderator, so your action was not applied.${now} It has been reloaded: review it again.`,
        };
        return { ok: false, error: described, conflict: true };
      }
    });
  }

  async function approve(submission: QueueSubmission): Promise<ActionOutcome<QueueSubmission>> {
    const outcome = await runAction(submission.id, () =>
      trpc.submissions.approve.mutate({ id: submission.id, expectedVersion: submission.version }),
    );
    if (outcome.ok) settle(outcome.value);
    return outcome;
  }

  async function reject(submission: QueueSubmission, reason: string): Promise<ActionOutcome<QueueSubmission>> {
    const outcome = await runAction(submission.id, () =>
      trpc.submissions.reject.mutate({ id: submission.id, reason, expectedVersion: submission.version }),
    );
    if (outcome.ok) settle(outcome.value);
    return outcome;
  }

  async function update(submission: QueueSubmission, patch: SubmissionPatch): Promise<ActionOutcome<QueueSubmission>> {
    const outcome = await runAction(submission.id, () =>
      trpc.submissions.update.mutate({ id: submission.id, patch, expectedVersion: submission.version }),
    );
    if (outcome.ok) replaceRow(outcome.value);
    return outcome;
  }

  const held = useHeldDecisions({ queue, reloadItem });

  /**
   * Approve or reject with a short window to take it back: the row leaves the list at once, the decision is
   * sent when the window ends (resolving to its outcome), or never if `undoDecision` comes first ('undone').
   */
  function decideLater(
    submission: QueueSubmission,
    decision: 'approve' | 'reject',
    reason = '',
  ): Promise<ActionOutcome<QueueSubmission> | 'undone'> {
    return held.decideLater(submission, () => (decision === 'approve' ? approve(submission) : reject(submission, reason)));
  }

  /** Bulk decisions on the checked rows, each with the version shown; the answer has one result per item. */
  async function bulkDecide(decision: 'approve' | 'reject', reason?: string): Promise<ActionOutcome<BulkResult[]>> {
    const items = checkedRows.value.map((row) => ({ id: row.id, expectedVersion: row.version }));
    if (items.length === 0) return { ok: true, value: [] };
    try {
      const results: BulkResult[] = [];
      // The API takes at most 100 items per call; a bigger selection goes in turns.
      for (let start = 0; start < items.length; start += BULK_MAX_ITEMS) {
        const chunk = items.slice(start, start + BULK_MAX_ITEMS);
        const answer =
          decision === 'approve'
            ? await trpc.submissions.bulkApprove.mutate({ items: chunk })
            : await trpc.submissions.bulkReject.mutate({ items: chunk, reason: reason ?? '' });
        results.push(...answer.results);
      }
      const decided = results.filter((result) => result.ok).map((result) => result.id);
      removeRows(status.value === 'pending' ? decided : []);
      checkedIds.value = checkedIds.value.filter((id) => !decided.includes(id));
      // Items that failed on a conflict changed meanwhile: show them as they are now.
      await Promise.all(results.filter((result) => !result.ok && isConflict(result)).map((result) => reloadItem(result.id)));
      void loadCounts();
      return { ok: true, value: results };
    } catch (cause) {
      return { ok: false, error: toConsoleError(cause), conflict: false };
    }
  }

  function nameOf(id: string): string {
    return rows.value.find((row) => row.id === id)?.name ?? id;
  }

  return {
    status,
    query,
    rows,
    total,
    counts,
    loading: queue.loading,
    loadingMore: queue.loadingMore,
    error: queue.error,
    exhausted: queue.exhausted,
    selectedId,
    selected: queue.selected,
    selectedIndex,
    checkedIds,
    checkedRows,
    busyIds: queue.busyIds,
    conflict,
    options,
    reload,
    loadMore,
    loadCounts,
    loadOptions,
    setStatus,
    setQuery,
    select: queue.select,
    moveSelection: queue.moveSelection,
    toggleChecked,
    reloadItem,
    approve,
    reject,
    decideLater,
    undoDecision: held.undoDecision,
    undoLatestDecision: held.undoLatestDecision,
    sendHeldDecisions: held.sendHeldDecisions,
    holdingDecisions: held.holdingDecisions,
    undoWindowMs: held.undoWindowMs,
    update,
    bulkDecide,
    nameOf,
  };
});
