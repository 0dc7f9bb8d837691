import { and, count, desc, eq, type SQL } from 'drizzle-orm';
import { byteOrder } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import { ConflictError, NotFoundError, StaleVersionError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { Page } from '../../lib/schemas';
import type { AgentsService } from '../agents/agents.service';
import type { AuditService } from '../audit/audit.service';
import type { EditRequest, ListEditRequestsQuery, ListOwnerEditRequestsQuery, OwnerEditRequest } from './owners.schemas';
import type { EditRequestRow, EditRequestStatus } from './owners.table';

export interface EditRequestsServiceDeps {
  store: Store;
  clock: Clock;
  agents: AgentsService;
  audit: AuditService;
  /** The requesting account, as moderators see it (undefined once it is closed). */
  accountOf: (accountId: string) => Promise<{ name: string; email: string } | undefined>;
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
/** `view` of each row, one after another (each is a few store reads), in the rows' order. */
async function inOrder<Row, View>(rows: readonly Row[], view: (row: Row) => Promise<View>): Promise<View[]> {
  const views: View[] = [];
  for (const row of rows) views.push(await view(row));
  return views;
}

export function createEditRequestsService({ store, clock, agents, audit, accountOf }: EditRequestsServiceDeps) {
  const { editRequests } = store.t;
  const agentName = async (agentId: string): Promise<string | null> => (await agents.findRowAsync(agentId))?.name ?? null;

  const toEditRequest = async (row: EditRequestRow): Promise<EditRequest> => {
    const account = await accountOf(row.accountId);
    return {
      id: row.id,
      agent_id: row.agentId,
      agent_name: await agentName(row.agentId),
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

  /** The request read for a decision, inside the deciding transaction: locked (PostgreSQL), so two decisions queue. */
  const requirePending = async (id: string, options: DecideOptions): Promise<EditRequestRow> => {
    const row = await store.first(store.forUpdate(store.db.select().from(editRequests).where(eq(editRequests.id, id)).limit(1)));
    if (!row) throw new NotFoundError('Edit request', id);
    if (options.expectedVersion !== undefined && options.expectedVersion !== row.version) throw new StaleVersionError('Edit request', id);
    if (row.status !== 'pending') throw new ConflictError(`Edit request "${id}" is already ${row.status}`);
    return row;
  };

  const decide = async (row: EditRequestRow, status: EditRequestStatus, actor: string, reason: string | null): Promise<EditRequestRow> => {
    const now = isoNow(clock);
    const next: EditRequestRow = { ...row, status, reason, decidedBy: actor, decidedAt: now, updatedAt: now, version: row.version + 1 };
    await store.run(store.db.update(editRequests).set(next).where(eq(editRequests.id, row.id)));
    await audit.recordInTransaction({
      actor,
      action: status === 'approved' ? 'edit_request.approve' : 'edit_request.reject',
      entityType: 'edit_request',
      entityId: row.id,
      before: { status: row.status },
      after: { status, agent_id: row.agentId, changes: row.changes, ...(reason ? { reason } : {}) },
    });
    return next;
  };

  const toOwnerEditRequest = async (row: EditRequestRow): Promise<OwnerEditRequest> => ({
    id: row.id,
    agent_id: row.agentId,
    agent_name: await agentName(row.agentId),
    changes: row.changes,
    before: row.before,
    status: row.status,
    reason: row.reason,
    decided_at: row.decidedAt,
    created_at: row.createdAt,
  });

  /** A page of the rows matching `filters`, newest first. */
  const pageOf = async (filters: SQL[], query: { page: number; limit: number }): Promise<{ rows: EditRequestRow[]; total: number }> => {
    const where = filters.length ? and(...filters) : undefined;
    const rows = await store.rows(
      store.db
        .select()
        .from(editRequests)
        .where(where)
        .orderBy(desc(editRequests.createdAt), desc(byteOrder(store, editRequests.id)))
        .limit(query.limit)
        .offset((query.page - 1) * query.limit),
    );
    const total = (await store.first(store.db.select({ n: count() }).from(editRequests).where(where)))?.n ?? 0;
    return { rows, total };
  };

  return {
    /** Newest first; `status` and `agent_id` narrow. */
    async list(query: ListEditRequestsQuery): Promise<Page<EditRequest>> {
      const filters: SQL[] = [];
      if (query.status) filters.push(eq(editRequests.status, query.status));
      if (query.agent_id) filters.push(eq(editRequests.agentId, query.agent_id));
      const { rows, total } = await pageOf(filters, query);
      return { items: await inOrder(rows, toEditRequest), page: query.page, limit: query.limit, total };
    },

    /** `GET /me/edit-requests`: the account's own requests, newest first, with the moderators' reasons. */
    async listForAccount(accountId: string, query: ListOwnerEditRequestsQuery): Promise<Page<OwnerEditRequest>> {
      const filters: SQL[] = [eq(editRequests.accountId, accountId)];
      if (query.status) filters.push(eq(editRequests.status, query.status));
      const { rows, total } = await pageOf(filters, query);
      return { items: await inOrder(rows, toOwnerEditRequest), page: query.page, limit: query.limit, total };
    },

    async get(id: string): Promise<EditRequest> {
      const row = await store.first(store.db.select().from(editRequests).where(eq(editRequests.id, id)).limit(1));
      if (!row) throw new NotFoundError('Edit request', id);
      return toEditRequest(row);
    },

    async countPending(): Promise<number> {
      return (await store.first(store.db.select({ n: count() }).from(editRequests).where(eq(editRequests.status, 'pending'))))?.n ?? 0;
    },

    /** Applies the requested name and source to the agent (audited as the moderator's edit) and closes the request. */
    async approve(id: string, actor: string, options: DecideOptions = {}): Promise<EditRequest> {
      const decided = await store.transaction(async () => {
        const row = await requirePending(id, options);
        await agents.edits.update(row.agentId, row.changes, { actor });
        return decide(row, 'approved', actor, null);
      });
      return toEditRequest(decided);
    },

    /** Turns the request down; the reason is kept with it. */
    async reject(id: string, reason: string, actor: string, options: DecideOptions = {}): Promise<EditRequest> {
      const decided = await store.transaction(async () => decide(await requirePending(id, options), 'rejected', actor, reason));
      return toEditRequest(decided);
    },
  };
}

export type EditRequestsService = ReturnType<typeof createEditRequestsService>;
