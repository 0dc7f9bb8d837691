import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { defineStore } from 'pinia';
import { ref } from 'vue';
import type { AppRouter } from '../../src-api/trpc/root';
import { toConsoleError, trpc, type ConsoleError } from '../trpc';
import { decideRow } from './row-decision';

type Outputs = inferRouterOutputs<AppRouter>['reports'];
type Inputs = inferRouterInputs<AppRouter>['reports'];
export type AgentReport = Outputs['list']['reports'][number];
export type ReportStatus = AgentReport['status'];
/** A moderator's decision on a report, without the report's id and version (the store adds them). */
export type ReportDecision =
  | { resolution: 'dismiss'; reason: string }
  | { resolution: 'unlist'; reason: string }
  | { resolution: 'edit'; reason: string; patch: Extract<Inputs['resolve'], { resolution: 'edit' }>['patch'] };

/**
 * Abuse reports about agents: the open ones by default, newest first. A decided report stays in
 * the list with its new status until the next reload, so the moderator sees what happened.
 */
export const useReportsStore = defineStore('reports', () => {
  const status = ref<ReportStatus>('open');
  const rows = ref<AgentReport[]>([]);
  const total = ref(0);
  const counts = ref<Outputs['counts'] | null>(null);
  const loading = ref(false);
  const error = ref<ConsoleError | null>(null);
  const busyIds = ref(new Set<string>());

  async function reload(): Promise<void> {
    loading.value = true;
    error.value = null;
    try {
      const [page, byStatus] = await Promise.all([trpc.reports.list.query({ status: status.value, page: 1, limit: 100 }), trpc.reports.counts.query()]);
      rows.value = page.reports;
      total.value = page.total;
      counts.value = byStatus;
    } catch (cause) {
      error.value = toConsoleError(cause);
    } finally {
      loading.value = false;
    }
  }

  function setStatus(next: ReportStatus): Promise<void> {
    status.value = next;
    return reload();
  }

  /** Dismisses, unlists or edits; a report decided meanwhile (409) reloads the list. Returns the error, if any. */
  async function resolve(report: AgentReport, decision: ReportDecision): Promise<ConsoleError | null> {
    const failure = await decideRow({ rows, busyIds, reload }, report.id, () =>
      trpc.reports.resolve.mutate({ id: report.id, expectedVersion: report.version, ...decision }),
    );
    if (!failure) counts.value = await trpc.reports.counts.query().catch(() => counts.value);
    return failure;
  }

  return { status, rows, total, counts, loading, error, busyIds, reload, setStatus, resolve };
});
