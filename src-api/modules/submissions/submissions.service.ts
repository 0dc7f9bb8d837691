import { and, count, desc, eq, or, type SQL } from 'drizzle-orm';
import { containsIgnoringCase, insertionOrder } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import {
  ConflictError,
  NotFoundError,
  QuotaExceededError,
  StaleVersionError,
  TooManyIdsError,
  ValidationError,
  isAppError,
} from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { Page } from '../../lib/schemas';
import { sourceUrlKey } from '../../lib/urls';
import type { AgentPatch } from '../agents/agents.schemas';
import type { AgentCardFields, AgentsService } from '../agents/agents.service';
import { fetchAgentCard } from '../agents/agent-card';
import type { SafeFetch } from '../../lib/safe-fetch';
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
import { findDuplicateHints, type DuplicateHints } from './submission-duplicates';
import { agentInputOf, toAdminSubmission, toSubmission } from './submission-views';
import type { SubmissionRow, SubmissionStatus } from './submissions.table';

export { toAdminSubmission, toSubmission } from './submission-views';

export interface SubmissionsServiceDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  agents: AgentsService;
  audit: AuditService;
  /** Enforce the pending-submissions quota of contract section 3 (off with the rate limits). */
  quotas?: boolean;
  /** Fetches Agent Cards (submissions by `agent_card_url`). */
  safeFetch?: SafeFetch;
}

/** Submissions one client (account, else IP bucket) may have waiting for review at once (contract section 3). */
export const MAX_PENDING_SUBMISSIONS_PER_CLIENT = 5;

/** The fields a moderator may correct before deciding; the source stays what was submitted. */
export type SubmissionPatch = Omit<AgentPatch, 'source_url'>;

export interface BulkOptions {
  /** Per id, the version the moderator last saw; an id whose current version differs fails with stale_version. */
  expectedVersions?: Readonly<Record<string, number>>;
}

export interface DecisionOptions {
  /** The moderator, for the audit log and `decided_by`. */
  actor: string;
  /** The version the moderator last saw; a different current version is a conflict. */
  expectedVersion?: number;
}

export function createSubmissionsService({ store, clock, ids, agents, audit, quotas = false, safeFetch }: SubmissionsServiceDeps) {
  /** The row; inside a decision's transaction locked until it ends (PostgreSQL: two moderators decide one after the other). */
  const loadRow = async (id: string, options: { lock?: boolean } = {}): Promise<SubmissionRow> => {
    const { submissions } = store.t;
    const query = store.db.select().from(submissions).where(eq(submissions.id, id)).limit(1);
    const row = await store.first(options.lock ? store.forUpdate(query) : query);
    if (!row) throw new NotFoundError('Submission', id);
    return row;
  };

  /** The one pending submission of the same source, if any. */
  const findPendingBySourceUrl = (url: string): Promise<SubmissionRow | undefined> => {
    const { submissions } = store.t;
    return store.first(
      store.db
        .select()
        .from(submissions)
        .where(and(eq(submissions.sourceUrlKey, sourceUrlKey(url)), eq(submissions.status, 'pending')))
        .limit(1),
    );
  };

  /** No listed agent has this source (but `except`, the one an approval has just listed). */
  const ensureNotListed = async (url: string, except?: string): Promise<void> => {
    const listed = await agents.findBySourceUrl(url, except);
    if (listed) {
      throw new ConflictError(`This source_url is already listed as agent "${listed.id}" (${listed.name})`);
    }
  };

  /** The row, if it can still be decided on by someone who last saw `expectedVersion`. */
  const requireDecidable = async (id: string, expectedVersion: number | undefined): Promise<SubmissionRow> => {
    const row = await loadRow(id, { lock: true });
    if (row.status !== 'pending') {
      throw new ConflictError(`Submission "${id}" is already ${row.status}; only pending submissions can be approved or rejected`);
    }
    if (expectedVersion !== undefined && expectedVersion !== row.version) throw new StaleVersionError('Submission', id);
    return row;
  };

  /** Writes the decision (bumping the version) and its audit entry; call inside the decision's transaction. */
  const recordDecision = async (
    before: SubmissionRow,
    changes: Pick<SubmissionRow, 'status' | 'agentId' | 'reason'>,
    actor: string,
  ): Promise<AdminSubmission> => {
    const now = isoNow(clock);
    const after: SubmissionRow = { ...before, ...changes, decidedBy: actor, decidedAt: now, updatedAt: now, version: before.version + 1 };
    await store.run(store.db.update(store.t.submissions).set(after).where(eq(store.t.submissions.id, before.id)));
    await audit.recordInTransaction({
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

  /** Runs `decide` for each id on its own, one after another, collecting outcomes; service errors become per-id results. */
  const decideEach = async (
    idList: readonly string[],
    decide: (id: string) => Promise<BulkDecisionResult>,
  ): Promise<BulkDecisionResult[]> => {
    const unique = [...new Set(idList)];
    if (unique.length > MAX_BULK_DECISIONS) throw new TooManyIdsError(unique.length, MAX_BULK_DECISIONS);
    const results: BulkDecisionResult[] = [];
    for (const id of unique) {
      try {
        results.push(await decide(id));
      } catch (error) {
        if (!isAppError(error)) throw error;
        results.push({ id, ok: false, code: error.code, detail: error.detail });
      }
    }
    return results;
  };

  const service = {
    /**
     * Files a new agent for review. A source that is already listed, or already
     * waiting for review, is a conflict: the detail names the existing record.
     */
    /**
     * `accountId` when submitted with an account (it then belongs to it); `clientKey` (the hashed
     * IP bucket) otherwise. Either may have at most 5 submissions waiting (409 quota_exceeded).
     */
    submit(input: SubmissionInput, accountId: string | null = null, clientKey?: string, card?: AgentCardFields): Promise<Submission> {
      return store.transaction(async () => {
        const { submissions } = store.t;
        if (quotas && (accountId !== null || clientKey !== undefined)) {
          const who = accountId !== null ? eq(submissions.accountId, accountId) : eq(submissions.clientKey, clientKey!);
          const waiting =
            (
              await store.first(
                store.db
                  .select({ n: count() })
                  .from(submissions)
                  .where(and(who, eq(submissions.status, 'pending'))),
              )
            )?.n ?? 0;
          if (waiting >= MAX_PENDING_SUBMISSIONS_PER_CLIENT) {
            throw new QuotaExceededError(
              `You have ${waiting} submissions waiting for review; at most ${MAX_PENDING_SUBMISSIONS_PER_CLIENT} may wait at once`,
            );
          }
        }
        await ensureNotListed(input.source_url);
        const pending = await findPendingBySourceUrl(input.source_url);
        if (pending) {
          throw new ConflictError(
            `This source_url is already waiting for review as submission "${pending.id}"; follow it with GET /submissions/${pending.id}`,
          );
        }
        const now = isoNow(clock);
        const row: SubmissionRow = {
          id: ids.next('sub'),
          accountId,
          clientKey: accountId === null ? (clientKey ?? null) : null,
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
          agentCardUrl: card?.url ?? null,
          skills: card?.skills ?? null,
          agentCardEtag: card?.etag ?? null,
          agentId: null,
          reason: null,
          decidedBy: null,
          decidedAt: null,
          version: 1,
          createdAt: now,
          updatedAt: now,
        };
        await store.run(store.db.insert(submissions).values(row));
        return toSubmission(row);
      });
    },

    /**
     * Files an agent described by its A2A Agent Card (contract §9): the card is fetched with the
     * safe fetch and validated (422 `invalid_agent_card` with the failing fields), then submitted
     * like any other, keeping the card's URL, skills and ETag for the agent it becomes.
     */
    async submitAgentCard(
      cardUrl: string,
      contactEmail: string | undefined,
      accountId: string | null = null,
      clientKey?: string,
    ): Promise<Submission> {
      if (!safeFetch) throw new Error('submitAgentCard needs the safe fetch');
      const fetched = await fetchAgentCard(safeFetch, cardUrl);
      if (fetched.status !== 'ok') throw new Error('unreachable: no ETag was sent');
      return service.submit({ ...fetched.profile, contact_email: contactEmail }, accountId, clientKey, {
        url: cardUrl,
        skills: fetched.skills,
        etag: fetched.etag,
      });
    },

    /** What anyone may see of a submission. */
    async getPublic(id: string): Promise<Submission> {
      return toSubmission(await loadRow(id));
    },

    /** Console: everything about a submission. */
    async get(id: string): Promise<AdminSubmission> {
      return toAdminSubmission(await loadRow(id));
    },

    /** Console: newest first (the same millisecond in insertion order); `q` matches name, tagline or source_url. */
    async list(query: ListSubmissionsQuery): Promise<Page<AdminSubmission>> {
      const { submissions } = store.t;
      const filters: SQL[] = [];
      if (query.status) filters.push(eq(submissions.status, query.status));
      if (query.q) {
        const q = query.q;
        filters.push(
          or(
            containsIgnoringCase(store, submissions.name, q),
            containsIgnoringCase(store, submissions.tagline, q),
            containsIgnoringCase(store, submissions.sourceUrl, q),
          )!,
        );
      }
      const where = filters.length ? and(...filters) : undefined;
      const rows = await store.rows(
        store.db
          .select()
          .from(submissions)
          .where(where)
          .orderBy(desc(submissions.createdAt), desc(insertionOrder(store, submissions)))
          .limit(query.limit)
          .offset((query.page - 1) * query.limit),
      );
      const total = (await store.first(store.db.select({ n: count() }).from(submissions).where(where)))?.n ?? 0;
      return { items: rows.map(toAdminSubmission), page: query.page, limit: query.limit, total };
    },

    async countPending(): Promise<number> {
      const { submissions } = store.t;
      return (await store.first(store.db.select({ n: count() }).from(submissions).where(eq(submissions.status, 'pending'))))?.n ?? 0;
    },

    /**
     * Lists the submitted agent (recording `agent.registered`) and marks the
     * submission approved, in one transaction.
     */
    approve(id: string, options: DecisionOptions): Promise<AdminSubmission> {
      return store.transaction(async () => {
        const before = await requireDecidable(id, options.expectedVersion);
        // The same source may have been listed (imported, or another submission approved) since it was sent.
        await ensureNotListed(before.sourceUrl);
        const card =
          before.agentCardUrl !== null ? { url: before.agentCardUrl, skills: before.skills ?? [], etag: before.agentCardEtag } : undefined;
        // In this transaction: the agent, its agent.registered event and audit entry, and the decision commit together.
        const agent = await agents.edits.create(agentInputOf(before), { actor: options.actor, emitEvents: true, card });
        // Again once listed, holding the agents' change cursor to the commit (PostgreSQL: agent writes commit under
        // it), so an approval of the same source running alongside has committed by now and is seen here (this one
        // then rolls back), or waits for this one to commit and sees it.
        await agents.edits.holdChangeCursor();
        await ensureNotListed(before.sourceUrl, agent.id);
        return recordDecision(before, { status: 'approved', agentId: agent.id, reason: null }, options.actor);
      });
    },

    /** Marks the submission rejected; the reason (1–1,000 characters) is shown to the submitter. */
    async reject(id: string, reason: string, options: DecisionOptions): Promise<AdminSubmission> {
      const validReason = parseReason(reason);
      return store.transaction(async () => {
        const before = await requireDecidable(id, options.expectedVersion);
        return recordDecision(before, { status: 'rejected', agentId: null, reason: validReason }, options.actor);
      });
    },

    /** Approves each id in its own transaction, so one failure does not undo the others. */
    bulkApprove(idList: readonly string[], actor: string, options: BulkOptions = {}): Promise<BulkDecisionResult[]> {
      return decideEach(idList, async (id) => {
        const approved = await service.approve(id, { actor, expectedVersion: options.expectedVersions?.[id] });
        return { id, ok: true, status: 'approved', agent_id: approved.agent_id };
      });
    },

    /** Rejects each id with the same reason, each in its own transaction. */
    async bulkReject(idList: readonly string[], reason: string, actor: string, options: BulkOptions = {}): Promise<BulkDecisionResult[]> {
      const validReason = parseReason(reason);
      return decideEach(idList, async (id) => {
        await service.reject(id, validReason, { actor, expectedVersion: options.expectedVersions?.[id] });
        return { id, ok: true, status: 'rejected' };
      });
    },

    /** Console: how many submissions are in each status (the queue's tab counts). */
    async countByStatus(): Promise<Record<SubmissionStatus, number>> {
      const { submissions } = store.t;
      const counts: Record<SubmissionStatus, number> = { pending: 0, approved: 0, rejected: 0 };
      const rows = await store.rows(
        store.db.select({ status: submissions.status, n: count() }).from(submissions).groupBy(submissions.status),
      );
      for (const row of rows) counts[row.status] = row.n;
      return counts;
    },

    /**
     * Console: a moderator corrects a pending submission before deciding (a typo in the name,
     * a missing category). Bumps the version, so a colleague looking at the old text gets a
     * stale_version when deciding on it.
     */
    update(id: string, patch: SubmissionPatch, options: DecisionOptions): Promise<AdminSubmission> {
      return store.transaction(async () => {
        const before = await requireDecidable(id, options.expectedVersion);
        const now = isoNow(clock);
        const after: SubmissionRow = {
          ...before,
          ...(patch.name !== undefined && { name: patch.name }),
          ...(patch.tagline !== undefined && { tagline: patch.tagline }),
          ...(patch.description !== undefined && { description: patch.description }),
          ...(patch.author !== undefined && { author: patch.author }),
          ...(patch.capabilities !== undefined && { capabilities: patch.capabilities }),
          ...(patch.categories !== undefined && { categories: patch.categories }),
          ...(patch.type !== undefined && { type: patch.type }),
          updatedAt: now,
          version: before.version + 1,
        };
        await store.run(store.db.update(store.t.submissions).set(after).where(eq(store.t.submissions.id, id)));
        await audit.recordInTransaction({
          actor: options.actor,
          action: 'submission.update',
          entityType: 'submission',
          entityId: id,
          before: toAdminSubmission(before),
          after: toAdminSubmission(after),
        });
        return toAdminSubmission(after);
      });
    },

    /** Console: listed agents and other submissions that may be the same agent (submission-duplicates.ts). */
    async findDuplicates(id: string): Promise<DuplicateHints> {
      return findDuplicateHints(store, await loadRow(id));
    },
  };
  return service;
}

export type SubmissionsService = ReturnType<typeof createSubmissionsService>;
