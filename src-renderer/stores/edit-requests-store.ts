import type { inferRouterOutputs } from '@trpc/server';
import { defineStore } from 'pinia';
import { ref } from 'vue';
import type { AppRouter } from '../../src-api/trpc/root';
import { toConsoleError, trpc, type ConsoleError } from '../trpc';
import { decideRow } from './row-decision';

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
    return decideRow({ rows, busyIds, reload }, request.id, () =>
      decision === 'approve'
        ? trpc.editRequests.approve.mutate({ id: request.id, expectedVersion: request.version })
        : trpc.editRequests.reject.mutate({ id: request.id, reason, expectedVersion: request.version }),
    );
  }

  return { rows, total, loading, error, busyIds, reload, decide };
});
