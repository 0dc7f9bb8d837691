import { and, count, desc, eq, inArray, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { NotFoundError, QuotaExceededError, StaleVersionError, ConflictError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { Page } from '../../lib/schemas';
import type { AgentPatch } from '../agents/agents.schemas';
import type { AgentsService } from '../agents/agents.service';
import type { AuditService } from '../audit/audit.service';
import type { AdminReport, CreateReportInput, ListReportsQuery } from './reports.schemas';
import { reports, type ReportResolution, type ReportRow, type ReportStatus } from './reports.table';

export interface ReportsServiceDeps {
  db: Db;
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
export function createReportsService({ db, clock, ids, agents, audit, quotas }: ReportsServiceDeps) {
  const requireRow = (id: string): ReportRow => {
    const row = db.select().from(reports).where(eq(reports.id, id)).get();
    if (!row) throw new NotFoundError('Report', id);
    return row;
  };

  const toAdmin = (row: ReportRow): AdminReport => {
    const agent = agents.findRow(row.agentId);
    return {
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
    };
  };

  return {
    /** `POST /agents/{id}/reports`: a listed agent only; one open report per agent per client. */
    create(agentId: string, input: CreateReportInput, reporter: Reporter) {
      return inTransaction(db, () => {
        const agent = agents.findRow(agentId);
        if (!agent || !agent.listed) throw new NotFoundError('Agent', agentId);
        if (quotas) {
          const open = db
            .select({ id: reports.id })
            .from(reports)
            .where(and(eq(reports.agentId, agentId), eq(reports.clientKey, reporter.clientKey), eq(reports.status, 'open')))
            .get();
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
        db.insert(reports).values(row).run();
        return { id: row.id, agent_id: agentId, reason: row.reason, status: 'open' as const, created_at: now };
      });
    },

    /** The queue, newest first. */
    list(query: ListReportsQuery): Page<AdminReport> {
      const filters: SQL[] = [];
      if (query.status) filters.push(eq(reports.status, query.status));
      if (query.agent_id) filters.push(eq(reports.agentId, query.agent_id));
      const where = filters.length ? and(...filters) : undefined;
      const rows = db
        .select()
        .from(reports)
        .where(where)
        .orderBy(desc(reports.createdAt), desc(reports.id))
        .limit(query.limit)
        .offset((query.page - 1) * query.limit)
        .all();
      const total = db.select({ n: count() }).from(reports).where(where).get()?.n ?? 0;
      return { items: rows.map(toAdmin), page: query.page, limit: query.limit, total };
    },

    countByStatus(): Record<ReportStatus, number> {
      const counts: Record<ReportStatus, number> = { open: 0, dismissed: 0, resolved: 0 };
      for (const row of db.select({ status: reports.status, n: count() }).from(reports).groupBy(reports.status).all()) {
        counts[row.status] = row.n;
      }
      return counts;
    },

    /** Open reports per agent among `agentIds` (the Agents screen's flags). */
    openCounts(agentIds: readonly string[]): Record<string, number> {
      if (agentIds.length === 0) return {};
      const rows = db
        .select({ agentId: reports.agentId, n: count() })
        .from(reports)
        .where(and(eq(reports.status, 'open'), inArray(reports.agentId, [...agentIds])))
        .groupBy(reports.agentId)
        .all();
      return Object.fromEntries(rows.map((row) => [row.agentId, row.n]));
    },

    /** A moderator dismisses the report, unlists the agent or edits it; always with a reason; audited. */
    resolve(id: string, decision: ReportDecision, actor: string, expectedVersion?: number): AdminReport {
      return inTransaction(db, () => {
        const current = requireRow(id);
        if (expectedVersion !== undefined && expectedVersion !== current.version) throw new StaleVersionError('Report', id);
        if (current.status !== 'open') throw new ConflictError(`Report "${id}" is already ${current.status}`);
        if (decision.resolution === 'unlist') agents.setListed(current.agentId, false, { actor });
        if (decision.resolution === 'edit') agents.update(current.agentId, decision.patch, { actor });
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
        db.update(reports).set(next).where(eq(reports.id, id)).run();
        audit.record({
          actor,
          action: `report.${decision.resolution}`,
          entityType: 'report',
          entityId: id,
          before: { status: current.status },
          after: { status, resolution: decision.resolution, reason: next.resolutionReason, agent_id: current.agentId },
        });
        return toAdmin(next);
      });
    },
  };
}

export type ReportsService = ReturnType<typeof createReportsService>;
