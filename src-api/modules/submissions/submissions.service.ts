import { and, count, desc, eq, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { ConflictError, isAppError, NotFoundError, StaleVersionError, TooManyIdsError, ValidationError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { Page } from '../../lib/schemas';
import { sourceUrlKey } from '../../lib/urls';
import type { AgentInput, AgentType } from '../agents/agents.schemas';
import type { AgentsService } from '../agents/agents.service';
import type { AuditService } from '../audit/audit.service';
import {
  MAX_BULK_DECISIONS,
  rejectionReasonSchema,
  type AdminSubmission,
  type BulkDecisionResult,
  type ListSubmissionsQuery,
  type Submission,
  type SubmissionInput,
} from './submissions.schemas';
import { submissions, type SubmissionRow } from './submissions.table';

export interface SubmissionsServiceDeps {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  agents: AgentsService;
  audit: AuditService;
}

export interface DecisionOptions {
  /** The moderator, for the audit log and `decided_by`. */
  actor: string;
  /** The version the moderator last saw; a different current version is a conflict. */
  expectedVersion?: number;
}

/** The public view: never the contact address nor who decided. */
export function toSubmission(row: SubmissionRow): Submission {
  return {
    id: row.id,
    status: row.status,
    name: row.name,
    tagline: row.tagline,
    source_url: row.sourceUrl,
    description: row.description ?? '',
    author: row.author ?? '',
    capabilities: row.capabilities ?? [],
    categories: row.categories ?? [],
    type: (row.type ?? 'other') as AgentType,
    ...(row.agentId !== null && { agent_id: row.agentId }),
    ...(row.reason !== null && { reason: row.reason }),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    ...(row.decidedAt !== null && { decided_at: row.decidedAt }),
  };
}

export function toAdminSubmission(row: SubmissionRow): AdminSubmission {
  return { ...toSubmission(row), contact_email: row.contactEmail, decided_by: row.decidedBy, version: row.version };
}

/** The agent a submission becomes when approved. */
function agentInputOf(row: SubmissionRow): AgentInput {
  const submission = toSubmission(row);
  return {
    name: submission.name,
    tagline: submission.tagline,
    description: submission.description,
    author: submission.author,
    capabilities: submission.capabilities,
    categories: submission.categories,
    type: submission.type,
    source_url: submission.source_url,
  };
}

/** `%` and `_` typed by a moderator are literal characters, not wildcards. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

function likeEscaped(column: AnyColumn, pattern: string): SQL {
  return sql`${column} LIKE ${pattern} ESCAPE '\\'`;
}

// Submissions made in the same millisecond keep their insertion order: rowid breaks the tie.
const NEWEST_FIRST = [desc(submissions.createdAt), desc(sql`${submissions}.rowid`)];

export function createSubmissionsService({ db, clock, ids, agents, audit }: SubmissionsServiceDeps) {
  const findRow = (id: string): SubmissionRow | undefined => db.select().from(submissions).where(eq(submissions.id, id)).get();

  const requireRow = (id: string): SubmissionRow => {
    const row = findRow(id);
    if (!row) throw new NotFoundError('Submission', id);
    return row;
  };

  /** The one pending submission of the same source, if any. */
  const findPendingBySourceUrl = (url: string): SubmissionRow | undefined =>
    db
      .select()
      .from(submissions)
      .where(and(eq(submissions.sourceUrlKey, sourceUrlKey(url)), eq(submissions.status, 'pending')))
      .get();

  const ensureNotListed = (url: string): void => {
    const listed = agents.findBySourceUrl(url);
    if (listed) {
      throw new ConflictError(`This source_url is already listed as agent "${listed.id}" (${listed.name})`);
    }
  };

  /** The row, if it can still be decided on by someone who last saw `expectedVersion`. */
  const requireDecidable = (id: string, expectedVersion: number | undefined): SubmissionRow => {
    const row = requireRow(id);
    if (row.status !== 'pending') {
      throw new ConflictError(`Submission "${id}" is already ${row.status}; only pending submissions can be approved or rejected`);
    }
    if (expectedVersion !== undefined && expectedVersion !== row.version) throw new StaleVersionError('Submission', id);
    return row;
  };

  /** Writes the decision (bumping the version) and its audit entry; call inside the decision's transaction. */
  const recordDecision = (
    before: SubmissionRow,
    changes: Pick<SubmissionRow, 'status' | 'agentId' | 'reason'>,
    actor: string,
  ): AdminSubmission => {
    const now = isoNow(clock);
    const after: SubmissionRow = { ...before, ...changes, decidedBy: actor, decidedAt: now, updatedAt: now, version: before.version + 1 };
    db.update(submissions).set(after).where(eq(submissions.id, before.id)).run();
    audit.record({
      actor,
      action: after.status === 'approved' ? 'submission.approve' : 'submission.reject',
      entityType: 'submission',
      entityId: before.id,
      before: toAdminSubmission(before),
      after: toAdminSubmission(after),
    });
    return toAdminSubmission(after);
  };

  const parseReason = (reason: string): string => {
    const parsed = rejectionReasonSchema.safeParse(reason);
    if (!parsed.success) {
      const detail = parsed.error.issues[0]?.message ?? 'is invalid';
      throw new ValidationError(`The rejection reason is not valid: ${detail}`, [{ pointer: '/reason', detail }]);
    }
    return parsed.data;
  };

  /** Runs `decide` for each id on its own, collecting outcomes; service errors become per-id results. */
  const decideEach = (idList: readonly string[], decide: (id: string) => BulkDecisionResult): BulkDecisionResult[] => {
    const unique = [...new Set(idList)];
    if (unique.length > MAX_BULK_DECISIONS) throw new TooManyIdsError(unique.length, MAX_BULK_DECISIONS);
    return unique.map((id) => {
      try {
        return decide(id);
      } catch (error) {
        if (!isAppError(error)) throw error;
        return { id, ok: false, code: error.code, detail: error.detail };
      }
    });
  };

  const service = {
    /**
     * Files a new agent for review. A source that is already listed, or already
     * waiting for review, is a conflict: the detail names the existing record.
     */
    submit(input: SubmissionInput): Submission {
      return inTransaction(db, () => {
        ensureNotListed(input.source_url);
        const pending = findPendingBySourceUrl(input.source_url);
        if (pending) {
          throw new ConflictError(
            `This source_url is already waiting for review as submission "${pending.id}"; follow it with GET /submissions/${pending.id}`,
          );
        }
        const now = isoNow(clock);
        const row: SubmissionRow = {
          id: ids.next('sub'),
          status: 'pending',
          name: input.name,
          tagline: input.tagline,
          sourceUrl: input.source_url,
          sourceUrlKey: sourceUrlKey(input.source_url),
          description: input.description,
          author: input.author,
          capabilities: input.capabilities,
          categories: input.categories,
          type: input.type,
          contactEmail: input.contact_email ?? null,
          agentId: null,
          reason: null,
          decidedBy: null,
          decidedAt: null,
          version: 1,
          createdAt: now,
          updatedAt: now,
        };
        db.insert(submissions).values(row).run();
        return toSubmission(row);
      });
    },

    /** What anyone may see of a submission. */
    getPublic(id: string): Submission {
      return toSubmission(requireRow(id));
    },

    /** Console: everything about a submission. */
    get(id: string): AdminSubmission {
      return toAdminSubmission(requireRow(id));
    },

    /** Console: newest first; `q` matches name, tagline or source_url. */
    list(query: ListSubmissionsQuery): Page<AdminSubmission> {
      const filters: SQL[] = [];
      if (query.status) filters.push(eq(submissions.status, query.status));
      if (query.q) {
        const pattern = containsPattern(query.q);
        filters.push(
          or(
            likeEscaped(submissions.name, pattern),
            likeEscaped(submissions.tagline, pattern),
            likeEscaped(submissions.sourceUrl, pattern),
          )!,
        );
      }
      const where = filters.length ? and(...filters) : undefined;
      const rows = db
        .select()
        .from(submissions)
        .where(where)
        .orderBy(...NEWEST_FIRST)
        .limit(query.limit)
        .offset((query.page - 1) * query.limit)
        .all();
      const total = db.select({ n: count() }).from(submissions).where(where).get()?.n ?? 0;
      return { items: rows.map(toAdminSubmission), page: query.page, limit: query.limit, total };
    },

    countPending(): number {
      return db.select({ n: count() }).from(submissions).where(eq(submissions.status, 'pending')).get()?.n ?? 0;
    },

    /**
     * Lists the submitted agent (recording `agent.registered`) and marks the
     * submission approved, in one transaction.
     */
    approve(id: string, options: DecisionOptions): AdminSubmission {
      return inTransaction(db, () => {
        const before = requireDecidable(id, options.expectedVersion);
        // The same source may have been listed (imported, or another submission approved) since it was sent.
        ensureNotListed(before.sourceUrl);
        const agent = agents.create(agentInputOf(before), { actor: options.actor, emitEvents: true });
        return recordDecision(before, { status: 'approved', agentId: agent.id, reason: null }, options.actor);
      });
    },

    /** Marks the submission rejected; the reason (1–1,000 characters) is shown to the submitter. */
    reject(id: string, reason: string, options: DecisionOptions): AdminSubmission {
      const validReason = parseReason(reason);
      return inTransaction(db, () => {
        const before = requireDecidable(id, options.expectedVersion);
        return recordDecision(before, { status: 'rejected', agentId: null, reason: validReason }, options.actor);
      });
    },

    /** Approves each id in its own transaction, so one failure does not undo the others. */
    bulkApprove(idList: readonly string[], actor: string): BulkDecisionResult[] {
      return decideEach(idList, (id) => {
        const approved = service.approve(id, { actor });
        return { id, ok: true, status: 'approved', agent_id: approved.agent_id };
      });
    },

    /** Rejects each id with the same reason, each in its own transaction. */
    bulkReject(idList: readonly string[], reason: string, actor: string): BulkDecisionResult[] {
      const validReason = parseReason(reason);
      return decideEach(idList, (id) => {
        service.reject(id, validReason, { actor });
        return { id, ok: true, status: 'rejected' };
      });
    },
  };
  return service;
}

export type SubmissionsService = ReturnType<typeof createSubmissionsService>;
