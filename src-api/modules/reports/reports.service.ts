import { and, count, desc, eq, inArray, type SQL } from 'drizzle-orm';
import type { Store } from '../../db/store';
import type { AgentRow } from '../agents/agents.table';
import { NotFoundError, QuotaExceededError, StaleVersionError, ConflictError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { Page } from '../../lib/schemas';
import type { AgentPatch } from '../agents/agents.schemas';
import type { AgentsService } from '../agents/agents.service';
import type { AuditService } from '../audit/audit.service';
import type { AdminReport, CreateReportInput, ListReportsQuery } from './reports.schemas';
import type { ReportResolution, ReportRow, ReportStatus } from './reports.table';

export interface ReportsServiceDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  agents: AgentsService;
  audit: AuditService;
  /** Enforce one open report per agent per client (contract section 3; off with the rate limits). */
  quotas: boolean;
}

export interface Reporter {
  clientKey: string;
  accountId?: string;
}

/** How a moderator resolves a report: each with a reason; `unlist` hides the agent, `edit` changes its profile. */
export type ReportDecision =
  | { resolution: 'dismiss'; reason: string }
  | { resolution: 'unlist'; reason: string }
  | { resolution: 'edit'; reason: string; patch: AgentPatch };

/** Public abuse reports and the console's Reports queue. */
export function createReportsService({ store, clock, ids, agents, audit, quotas }: ReportsServiceDeps) {
  /** The console's view of a report, with its agent's name and listing (the agent row read by the caller). */
  const toAdmin = (row: ReportRow, agent: Pick<AgentRow, 'name' | 'listed'> | undefined): AdminReport => ({
    id: row.id,
    agent_id: row.agentId,
    agent_name: agent?.name ?? null,
    agent_listed: agent?.listed ?? null,
    reason: row.reason,
    details: row.details ?? null,
    contact_email: row.contactEmail ?? null,
    status: row.status,
    resolution: row.resolution ?? null,
    resolution_reason: row.resolutionReason ?? null,
    decided_by: row.decidedBy ?? null,
    decided_at: row.decidedAt ?? null,
    created_at: row.createdAt,
    version: row.version,
  });

  return {
    /**
     * `POST /agents/{id}/reports`: a listed agent only; one open report per agent per client.
     * On PostgreSQL two reports sent at the same moment by one client may both pass the check
     * (READ COMMITTED; nothing to lock before the first exists): a partial unique index would close it.
     */
    create(agentId: string, input: CreateReportInput, reporter: Reporter) {
      return store.transaction(async () => {
        const { reports } = store.t;
        // The agent's row locked (PostgreSQL): two reports of one client at the same moment queue, and the
        // second finds the first open. A listed agent only, else a NotFoundError.
        await agents.edits.lockRow(agentId);
        if (quotas) {
          const open = await store.first(
            store.db
              .select({ id: reports.id })
              .from(reports)
              .where(and(eq(reports.agentId, agentId), eq(reports.clientKey, reporter.clientKey), eq(reports.status, 'open')))
              .limit(1),
          );
          if (open) {
            throw new QuotaExceededError(
              `You already reported agent "${agentId}" (${open.id}); moderators will review it`,
              'duplicate_report',
            );
          }
        }
        const now = isoNow(clock);
        const row: ReportRow = {
          id: ids.next('rpt'),
          agentId,
          reason: input.reason,
          details: input.details?.trim() || null,
          contactEmail: input.contact_email ?? null,
          clientKey: reporter.clientKey,
          accountId: reporter.accountId ?? null,
          status: 'open',
          resolution: null,
          resolutionReason: null,
          decidedBy: null,
          decidedAt: null,
          version: 1,
          createdAt: now,
          updatedAt: now,
        };
        await store.run(store.db.insert(reports).values(row));
        return { id: row.id, agent_id: agentId, reason: row.reason, status: 'open' as const, created_at: now };
      });
    },

    /** The queue, newest first. */
    async list(query: ListReportsQuery): Promise<Page<AdminReport>> {
      const { reports } = store.t;
      const filters: SQL[] = [];
      if (query.status) filters.push(eq(reports.status, query.status));
      if (query.agent_id) filters.push(eq(reports.agentId, query.agent_id));
      const where = filters.length ? and(...filters) : undefined;
      const rows = await store.rows(
        store.db
          .select()
          .from(reports)
          .where(where)
          .orderBy(desc(reports.createdAt), desc(reports.id))
          .limit(query.limit)
          .offset((query.page - 1) * query.limit),
      );
      const total = (await store.first(store.db.select({ n: count() }).from(reports).where(where)))?.n ?? 0;
      const items: AdminReport[] = [];
      for (const row of rows) items.push(toAdmin(row, await agents.findRowAsync(row.agentId)));
      return { items, page: query.page, limit: query.limit, total };
    },

    async countByStatus(): Promise<Record<ReportStatus, number>> {
      const { reports } = store.t;
      const counts: Record<ReportStatus, number> = { open: 0, dismissed: 0, resolved: 0 };
      const rows = await store.rows(store.db.select({ status: reports.status, n: count() }).from(reports).groupBy(reports.status));
      for (const row of rows) counts[row.status] = row.n;
      return counts;
    },

    /** Open reports per agent among `agentIds` (the Agents screen's flags). */
    async openCounts(agentIds: readonly string[]): Promise<Record<string, number>> {
      if (agentIds.length === 0) return {};
      const { reports } = store.t;
      const rows = await store.rows(
        store.db
          .select({ agentId: reports.agentId, n: count() })
          .from(reports)
          .where(and(eq(reports.status, 'open'), inArray(reports.agentId, [...agentIds])))
          .groupBy(reports.agentId),
      );
      return Object.fromEntries(rows.map((row) => [row.agentId, row.n]));
    },

    /**
     * A moderator dismisses the report, unlists the agent or edits it; always with a reason; audited.
     * One store transaction, the report's row locked (two moderators: the second finds it decided).
     */
    resolve(id: string, decision: ReportDecision, actor: string, expectedVersion?: number): Promise<AdminReport> {
      return store.transaction(async () => {
        const { reports } = store.t;
        const current = await store.first(store.forUpdate(store.db.select().from(reports).where(eq(reports.id, id)).limit(1)));
        if (!current) throw new NotFoundError('Report', id);
        if (expectedVersion !== undefined && expectedVersion !== current.version) throw new StaleVersionError('Report', id);
        if (current.status !== 'open') throw new ConflictError(`Report "${id}" is already ${current.status}`);
        let agent: AgentRow | undefined;
        if (decision.resolution === 'unlist') agent = await agents.edits.setListed(current.agentId, false, { actor });
        if (decision.resolution === 'edit') agent = await agents.edits.update(current.agentId, decision.patch, { actor });
        const status: ReportStatus = decision.resolution === 'dismiss' ? 'dismissed' : 'resolved';
        const now = isoNow(clock);
        const next: ReportRow = {
          ...current,
          status,
          resolution: decision.resolution as ReportResolution,
          resolutionReason: decision.reason.trim(),
          decidedBy: actor,
          decidedAt: now,
          updatedAt: now,
          version: current.version + 1,
        };
        await store.run(store.db.update(reports).set(next).where(eq(reports.id, id)));
        await audit.recordInTransaction({
          actor,
          action: `report.${decision.resolution}`,
          entityType: 'report',
          entityId: id,
          before: { status: current.status },
          after: { status, resolution: decision.resolution, reason: next.resolutionReason, agent_id: current.agentId },
        });
        return toAdmin(next, agent ?? (await agents.findRowAsync(next.agentId)));
      });
    },
  };
}

export type ReportsService = ReturnType<typeof createReportsService>;
