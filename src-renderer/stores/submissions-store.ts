import type { inferRouterOutputs } from '@trpc/server';
import { defineStore } from 'pinia';
import { computed, ref, shallowRef } from 'vue';
import type { AppRouter } from '../../src-api/trpc/root';
import { toConsoleError, trpc, type ConsoleError } from '../trpc';

type Outputs = inferRouterOutputs<AppRouter>['submissions'];
export type QueueSubmission = Outputs['get'];
export type SubmissionStatus = QueueSubmission['status'];
export type SubmissionCounts = Outputs['counts'];
export type DuplicateHints = Outputs['duplicates'];
export type BulkResult = Outputs['bulkApprove']['results'][number];
export type QueueOptions = Outputs['options'];
export type SubmissionPatch = Parameters<typeof trpc.submissions.update.mutate>[0]['patch'];

/** Rows per request: the API's maximum, so 10,000 pending items are 100 calls at most, made as the moderator scrolls. */
export const PAGE_SIZE = 100;

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
  const rows = shallowRef<QueueSubmission[]>([]);
  const total = ref(0);
  const counts = ref<SubmissionCounts | null>(null);
  const loading = ref(false);
  const loadingMore = ref(false);
  const error = ref<ConsoleError | null>(null);
  const exhausted = ref(false);
  const selectedId = ref<string | null>(null);
  const checkedIds = ref<string[]>([]);
  /** Ids with a decision in flight, so a double key press never sends two. */
  const busyIds = ref<ReadonlySet<string>>(new Set());
  const conflict = ref<ConflictNotice | null>(null);
  const options = shallowRef<QueueOptions | null>(null);
  /** Bumped on every reload, so answers to an older filter are dropped. */
  let generation = 0;

  const selected = computed(() => rows.value.find((row) => row.id === selectedId.value) ?? null);
  const selectedIndex = computed(() => rows.value.findIndex((row) => row.id === selectedId.value));
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
  async function reload(): Promise<void> {
    const mine = ++generation;
    loading.value = true;
    error.value = null;
    exhausted.value = false;
    void loadCounts();
    try {
      const page = await trpc.submissions.list.query({
        status: status.value,
        q: query.value.trim() || undefined,
        page: 1,
        limit: PAGE_SIZE,
      });
      if (mine !== generation) return;
      rows.value = page.submissions;
      total.value = page.total;
      exhausted.value = page.submissions.length < PAGE_SIZE;
      const stillThere = rows.value.some((row) => row.id === selectedId.value);
      if (!stillThere) selectedId.value = rows.value[0]?.id ?? null;
      const present = new Set(rows.value.map((row) => row.id));
      checkedIds.value = checkedIds.value.filter((id) => present.has(id));
    } catch (cause) {
      if (mine !== generation) return;
      error.value = toConsoleError(cause);
      rows.value = [];
      total.value = 0;
    } finally {
      if (mine === generation) loading.value = false;
    }
  }

  /**
   * The next page. Decided items leave the pending tab, which moves later items up on the
   * server, so the page is chosen from what is loaded now and rows already here are dropped.
   */
  async function loadMore(): Promise<void> {
    if (loading.value || loadingMore.value || exhausted.value || error.value) return;
    const mine = generation;
    loadingMore.value = true;
    try {
      const pageNumber = Math.floor(rows.value.length / PAGE_SIZE) + 1;
      const page = await trpc.submissions.list.query({
        status: status.value,
        q: query.value.trim() || undefined,
        page: pageNumber,
        limit: PAGE_SIZE,
      });
      if (mine !== generation) return;
      const present = new Set(rows.value.map((row) => row.id));
      const fresh = page.submissions.filter((row) => !present.has(row.id));
      rows.value = [...rows.value, ...fresh];
      total.value = page.total;
      exhausted.value = page.submissions.length < PAGE_SIZE || rows.value.length >= page.total;
    } catch (cause) {
      if (mine === generation) error.value = toConsoleError(cause);
    } finally {
      loadingMore.value = false;
    }
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

  function select(id: string | null): void {
    if (conflict.value && conflict.value.id !== id) conflict.value = null;
    selectedId.value = id;
  }

  /** j/k: the next or previous row; loads more when the selection nears the end of what is loaded. */
  function moveSelection(delta: number): void {
    if (rows.value.length === 0) return;
    const from = selectedIndex.value;
    const to = from < 0 ? 0 : Math.min(rows.value.length - 1, Math.max(0, from + delta));
    select(rows.value[to]!.id);
    if (to >= rows.value.length - 10) void loadMore();
  }

  function toggleChecked(id: string): void {
    checkedIds.value = checkedIds.value.includes(id) ? checkedIds.value.filter((other) => other !== id) : [...checkedIds.value, id];
  }

  function replaceRow(next: QueueSubmission): void {
    rows.value = rows.value.map((row) => (row.id === next.id ? next : row));
  }

  /** Takes decided rows out of a tab they no longer belong to, keeping the selection at the same place. */
  function removeRows(ids: readonly string[]): void {
    const gone = new Set(ids);
    const index = selectedIndex.value;
    const remaining = rows.value.filter((row) => !gone.has(row.id));
    if (selectedId.value && gone.has(selectedId.value)) {
      const before = rows.value.slice(0, index).filter((row) => !gone.has(row.id)).length;
      selectedId.value = remaining[Math.min(before, remaining.length - 1)]?.id ?? null;
    }
    total.value = Math.max(0, total.value - (rows.value.length - remaining.length));
    rows.value = remaining;
    checkedIds.value = checkedIds.value.filter((id) => !gone.has(id));
    if (rows.value.length < 20) void loadMore();
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

  async function runAction(id: string, action: () => Promise<QueueSubmission>): Promise<ActionOutcome<QueueSubmission>> {
    if (busyIds.value.has(id)) return { ok: false, error: { code: 'busy', message: 'Already working on it' }, conflict: false };
    busyIds.value = new Set([...busyIds.value, id]);
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
    } finally {
      const next = new Set(busyIds.value);
      next.delete(id);
      busyIds.value = next;
    }
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

  /** Bulk decisions on the checked rows, each with the version shown; the answer has one result per item. */
  async function bulkDecide(decision: 'approve' | 'reject', reason?: string): Promise<ActionOutcome<BulkResult[]>> {
    const items = checkedRows.value.map((row) => ({ id: row.id, expectedVersion: row.version }));
    if (items.length === 0) return { ok: true, value: [] };
    try {
      const results: BulkResult[] = [];
      // The API takes at most 100 items per call; a bigger selection goes in turns.
      for (let start = 0; start < items.length; start += PAGE_SIZE) {
        const chunk = items.slice(start, start + PAGE_SIZE);
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
    loading,
    loadingMore,
    error,
    exhausted,
    selectedId,
    selected,
    selectedIndex,
    checkedIds,
    checkedRows,
    busyIds,
    conflict,
    options,
    reload,
    loadMore,
    loadCounts,
    loadOptions,
    setStatus,
    setQuery,
    select,
    moveSelection,
    toggleChecked,
    reloadItem,
    approve,
    reject,
    update,
    bulkDecide,
    nameOf,
  };
});
