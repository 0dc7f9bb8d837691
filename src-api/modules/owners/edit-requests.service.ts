import { and, count, desc, eq, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { ConflictError, NotFoundError, StaleVersionError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { Page } from '../../lib/schemas';
import type { AgentsService } from '../agents/agents.service';
import type { AuditService } from '../audit/audit.service';
import type { EditRequest, ListEditRequestsQuery, ListOwnerEditRequestsQuery, OwnerEditRequest } from './owners.schemas';
import { editRequests, type EditRequestRow, type EditRequestStatus } from './owners.table';

export interface EditRequestsServiceDeps {
  db: Db;
  clock: Clock;
  agents: AgentsService;
  audit: AuditService;
  /** The requesting account, as moderators see it (undefined once it is closed). */
  accountOf: (accountId: string) => { name: string; email: string } | undefined;
}

export interface DecideOptions {
  /** The version the moderator last saw; another current version is a 409 stale_version. */
  expectedVersion?: number;
}

/**
 * The moderation queue of owners' renames and source moves (`PATCH /me/agents/{id}` with a new
 * name or source_url). Approving applies the change through AgentsService.update, so the
 * agent's rules, `agent.updated` and the audit entry are exactly those of a moderator's edit.
 */
export function createEditRequestsService({ db, clock, agents, audit, accountOf }: EditRequestsServiceDeps) {
  const toEditRequest = (row: EditRequestRow): EditRequest => {
    const account = accountOf(row.accountId);
    return {
      id: row.id,
      agent_id: row.agentId,
      agent_name: agents.findRow(row.agentId)?.name ?? null,
      account_id: row.accountId,
      account_name: account?.name ?? null,
      account_email: account?.email ?? null,
      changes: row.changes,
      before: row.before,
      status: row.status,
      reason: row.reason,
      decided_by: row.decidedBy,
      decided_at: row.decidedAt,
      version: row.version,
      created_at: row.createdAt,
    };
  };

  const requirePending = (id: string, options: DecideOptions): EditRequestRow => {
    const row = db.select().from(editRequests).where(eq(editRequests.id, id)).get();
    if (!row) throw new NotFoundError('Edit request', id);
    if (options.expectedVersion !== undefined && options.expectedVersion !== row.version) throw new StaleVersionError('Edit request', id);
    if (row.status !== 'pending') throw new ConflictError(`Edit request "${id}" is already ${row.status}`);
    return row;
  };

  const decide = (row: EditRequestRow, status: EditRequestStatus, actor: string, reason: string | null): EditRequestRow => {
    const now = isoNow(clock);
    const next: EditRequestRow = { ...row, status, reason, decidedBy: actor, decidedAt: now, updatedAt: now, version: row.version + 1 };
    db.update(editRequests).set(next).where(eq(editRequests.id, row.id)).run();
    audit.record({
      actor,
      action: status === 'approved' ? 'edit_request.approve' : 'edit_request.reject',
      entityType: 'edit_request',
      entityId: row.id,
      before: { status: row.status },
      after: { status, agent_id: row.agentId, changes: row.changes, ...(reason ? { reason } : {}) },
    });
    return next;
  };

  const toOwnerEditRequest = (row: EditRequestRow): OwnerEditRequest => ({
    id: row.id,
    agent_id: row.agentId,
    agent_name: agents.findRow(row.agentId)?.name ?? null,
    changes: row.changes,
    before: row.before,
    status: row.status,
    reason: row.reason,
    decided_at: row.decidedAt,
    created_at: row.createdAt,
  });

  /** A page of the rows matching `filters`, newest first. */
  const pageOf = (filters: SQL[], query: { page: number; limit: number }): { rows: EditRequestRow[]; total: number } => {
    const where = filters.length ? and(...filters) : undefined;
    const rows = db
      .select()
      .from(editRequests)
      .where(where)
      .orderBy(desc(editRequests.createdAt), desc(editRequests.id))
      .limit(query.limit)
      .offset((query.page - 1) * query.limit)
      .all();
    const total = db.select({ n: count() }).from(editRequests).where(where).get()?.n ?? 0;
    return { rows, total };
  };

  return {
    /** Newest first; `status` and `agent_id` narrow. */
    list(query: ListEditRequestsQuery): Page<EditRequest> {
      const filters: SQL[] = [];
      if (query.status) filters.push(eq(editRequests.status, query.status));
      if (query.agent_id) filters.push(eq(editRequests.agentId, query.agent_id));
      const { rows, total } = pageOf(filters, query);
      return { items: rows.map(toEditRequest), page: query.page, limit: query.limit, total };
    },

    /** `GET /me/edit-requests`: the account's own requests, newest first, with the moderators' reasons. */
    listForAccount(accountId: string, query: ListOwnerEditRequestsQuery): Page<OwnerEditRequest> {
      const filters: SQL[] = [eq(editRequests.accountId, accountId)];
      if (query.status) filters.push(eq(editRequests.status, query.status));
      const { rows, total } = pageOf(filters, query);
      return { items: rows.map(toOwnerEditRequest), page: query.page, limit: query.limit, total };
    },

    get(id: string): EditRequest {
      const row = db.select().from(editRequests).where(eq(editRequests.id, id)).get();
      if (!row) throw new NotFoundError('Edit request', id);
      return toEditRequest(row);
    },

    countPending(): number {
      return db.select({ n: count() }).from(editRequests).where(eq(editRequests.status, 'pending')).get()?.n ?? 0;
    },

    /** Applies the requested name and source to the agent (audited as the moderator's edit) and closes the request. */
    approve(id: string, actor: string, options: DecideOptions = {}): EditRequest {
      return inTransaction(db, () => {
        const row = requirePending(id, options);
        agents.update(row.agentId, row.changes, { actor });
        return toEditRequest(decide(row, 'approved', actor, null));
      });
    },

    /** Turns the request down; the reason is kept with it. */
    reject(id: string, reason: string, actor: string, options: DecideOptions = {}): EditRequest {
      return inTransaction(db, () => toEditRequest(decide(requirePending(id, options), 'rejected', actor, reason)));
    },
  };
}

export type EditRequestsService = ReturnType<typeof createEditRequestsService>;
