import type { inferRouterOutputs } from '@trpc/server';
import { defineStore } from 'pinia';
import { ref } from 'vue';
import type { AppRouter } from '../../src-api/trpc/root';
import { toConsoleError, trpc, type ConsoleError } from '../trpc';

type Outputs = inferRouterOutputs<AppRouter>['editRequests'];
export type EditRequest = Outputs['get'];

/**
 * Owners' renames and source moves waiting for a moderator. A decided request stays in the
 * list with its new status until the next reload, so the moderator sees what happened.
 */
export const useEditRequestsStore = defineStore('edit-requests', () => {
  const rows = ref<EditRequest[]>([]);
  const total = ref(0);
  const loading = ref(false);
  const error = ref<ConsoleError | null>(null);
  const busyIds = ref(new Set<string>());

  async function reload(): Promise<void> {
    loading.value = true;
    error.value = null;
    try {
      const page = await trpc.editRequests.list.query({ status: 'pending', page: 1, limit: 100 });
      rows.value = page.editRequests;
      total.value = page.total;
    } catch (cause) {
      error.value = toConsoleError(cause);
    } finally {
      loading.value = false;
    }
  }

  /** Approves or rejects; a request changed meanwhile (409) reloads the list. Returns the error, if any. */
  async function decide(request: EditRequest, decision: 'approve' | 'reject', reason = ''): Promise<ConsoleError | null> {
    busyIds.value = new Set([...busyIds.value, request.id]);
    try {
      const decided =
        decision === 'approve'
          ? await trpc.editRequests.approve.mutate({ id: request.id, expectedVersion: request.version })
          : await trpc.editRequests.reject.mutate({ id: request.id, reason, expectedVersion: request.version });
      rows.value = rows.value.map((row) => (row.id === decided.id ? decided : row));
      return null;
    } catch (cause) {
      const failure = toConsoleError(cause);
      if (failure.code === 'stale_version' || failure.code === 'conflict') await reload();
      return failure;
    } finally {
      const next = new Set(busyIds.value);
      next.delete(request.id);
      busyIds.value = next;
    }
  }

  return { rows, total, loading, error, busyIds, reload, decide };
});
