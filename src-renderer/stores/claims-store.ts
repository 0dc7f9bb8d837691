import type { inferRouterOutputs } from '@trpc/server';
import { defineStore } from 'pinia';
import { computed, ref, shallowRef } from 'vue';
import type { AppRouter } from '../../src-api/trpc/root';
import { toConsoleError, trpc, type ConsoleError } from '../trpc';
import { isConflict, PAGE_SIZE, type ActionOutcome, type ConflictNotice } from './submissions-store';

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
 * The claims queue: one status tab at a time, paged as the list scrolls, the
 * selected claim and the outcome of the last check. Decided claims stay in
 * the list (with their new status) until the next reload, so the moderator
 * sees what happened.
 */
export const useClaimsStore = defineStore('claims', () => {
  const status = ref<ClaimStatus>('pending');
  const rows = shallowRef<QueueClaim[]>([]);
  const total = ref(0);
  const counts = ref<ClaimCounts | null>(null);
  const loading = ref(false);
  const loadingMore = ref(false);
  const error = ref<ConsoleError | null>(null);
  const exhausted = ref(false);
  const selectedId = ref<string | null>(null);
  const busyIds = ref<ReadonlySet<string>>(new Set());
  const conflict = ref<ConflictNotice | null>(null);
  const checkReport = ref<CheckReport | null>(null);
  let generation = 0;

  const selected = computed(() => rows.value.find((row) => row.id === selectedId.value) ?? null);
  const selectedIndex = computed(() => rows.value.findIndex((row) => row.id === selectedId.value));

  async function loadCounts(): Promise<void> {
    try {
      counts.value = await trpc.claims.counts.query();
    } catch {
      // The counts are a nicety; the list reports errors itself.
    }
  }

  async function reload(): Promise<void> {
    const mine = ++generation;
    loading.value = true;
    error.value = null;
    exhausted.value = false;
    void loadCounts();
    try {
      const page = await trpc.claims.list.query({ status: status.value, page: 1, limit: PAGE_SIZE });
      if (mine !== generation) return;
      rows.value = page.claims;
      total.value = page.total;
      exhausted.value = page.claims.length < PAGE_SIZE;
      if (!rows.value.some((row) => row.id === selectedId.value)) selectedId.value = rows.value[0]?.id ?? null;
    } catch (cause) {
      if (mine !== generation) return;
      error.value = toConsoleError(cause);
      rows.value = [];
      total.value = 0;
    } finally {
      if (mine === generation) loading.value = false;
    }
  }

  async function loadMore(): Promise<void> {
    if (loading.value || loadingMore.value || exhausted.value || error.value) return;
    const mine = generation;
    loadingMore.value = true;
    try {
      const page = await trpc.claims.list.query({
        status: status.value,
        page: Math.floor(rows.value.length / PAGE_SIZE) + 1,
        limit: PAGE_SIZE,
      });
      if (mine !== generation) return;
      const present = new Set(rows.value.map((row) => row.id));
      rows.value = [...rows.value, ...page.claims.filter((row) => !present.has(row.id))];
      total.value = page.total;
      exhausted.value = page.claims.length < PAGE_SIZE || rows.value.length >= page.total;
    } catch (cause) {
      if (mine === generation) error.value = toConsoleError(cause);
    } finally {
      loadingMore.value = false;
    }
  }

  function setStatus(next: ClaimStatus): void {
    if (status.value === next) return;
    status.value = next;
    selectedId.value = null;
    conflict.value = null;
    checkReport.value = null;
    void reload();
  }

  function select(id: string | null): void {
    if (conflict.value && conflict.value.id !== id) conflict.value = null;
    if (checkReport.value && checkReport.value.id !== id) checkReport.value = null;
    selectedId.value = id;
  }

  function moveSelection(delta: number): void {
    if (rows.value.length === 0) return;
    const from = selectedIndex.value;
    const to = from < 0 ? 0 : Math.min(rows.value.length - 1, Math.max(0, from + delta));
    select(rows.value[to]!.id);
    if (to >= rows.value.length - 10) void loadMore();
  }

  function replaceRow(next: QueueClaim): void {
    rows.value = rows.value.map((row) => (row.id === next.id ? next : row));
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

  async function runAction(claim: QueueClaim, action: () => Promise<QueueClaim>): Promise<ActionOutcome<QueueClaim>> {
    const { id } = claim;
    if (busyIds.value.has(id)) return { ok: false, error: { code: 'busy', message: 'Already working on it' }, conflict: false };
    busyIds.value = new Set([...busyIds.value, id]);
    try {
      const value = await action();
      replaceRow(value);
      void loadCounts();
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
    } finally {
      const next = new Set(busyIds.value);
      next.delete(id);
      busyIds.value = next;
    }
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

  return {
    status,
    rows,
    total,
    counts,
    loading,
    loadingMore,
    error,
    exhausted,
    selectedId,
    selected,
    busyIds,
    conflict,
    checkReport,
    reload,
    loadMore,
    setStatus,
    select,
    moveSelection,
    reloadItem,
    verifyNow,
    verifyManually,
    reject,
  };
});
