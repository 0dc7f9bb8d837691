import { and, count, desc, eq, ne, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
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
import type { AgentInput, AgentPatch, AgentType } from '../agents/agents.schemas';
import { agents as agentsTable } from '../agents/agents.table';
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
import { submissions, type SubmissionRow, type SubmissionStatus } from './submissions.table';

export interface SubmissionsServiceDeps {
  db: Db;
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

/** Something the console shows beside a submission as a possible duplicate of it. */
export interface DuplicateHint {
  id: string;
  name: string;
  source_url: string;
  /** Only for submissions. */
  status?: SubmissionStatus;
  /** Why it is shown: a similar name, the same source host (or repository, on shared code hosts), or both. */
  matches: ('similar_name' | 'same_source')[];
}

export interface DuplicateHints {
  agents: DuplicateHint[];
  submissions: DuplicateHint[];
}

export interface BulkOptions {
  /** Per id, the version the moderator last saw; an id whose current version differs fails with stale_version. */
  expectedVersions?: Readonly<Record<string, number>>;
}

const MAX_DUPLICATE_HINTS = 5;

/**
 * Hosts where many unrelated projects live: the repository (owner and name) is the "same source"
 * key there. Two repositories of one owner are two projects, not a duplicate (a moderator was shown
 * every agent of a busy GitHub organisation as "from the same source"); strangers never match.
 */
const SHARED_HOSTS = new Set([
  'github.com',
  'gitlab.com',
  'bitbucket.org',
  'codeberg.org',
  'huggingface.co',
  'sourceforge.net',
  'npmjs.com',
  'pypi.org',
  'replit.com',
]);

/** "github.com/acme/tool" or "acme.dev": what two submissions from the same place share. */
export function sourceHostKey(urlKey: string): string {
  const [host = '', owner, repository] = urlKey.split('/');
  if (!SHARED_HOSTS.has(host) || !owner) return host;
  return repository ? `${host}/${owner.toLowerCase()}/${repository.toLowerCase().replace(/\.git$/, '')}` : `${host}/${owner.toLowerCase()}`;
}

const NAME_NOISE = new Set(['a', 'an', 'the', 'agent', 'agents', 'bot', 'ai', 'app']);

/** Keys of names seen lately: a duplicates check compares against every name, so each is normalised once. */
const nameKeyCache = new Map<string, string>();
const NAME_KEY_CACHE_SIZE = 50_000;

/** Lower case, accents and punctuation dropped, filler words ("agent", "bot", "ai") left out. */
export function nameKey(name: string): string {
  const cached = nameKeyCache.get(name);
  if (cached !== undefined) return cached;
  const key = computeNameKey(name);
  if (nameKeyCache.size >= NAME_KEY_CACHE_SIZE) nameKeyCache.clear();
  nameKeyCache.set(name, key);
  return key;
}

function computeNameKey(name: string): string {
  const words = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
  const meaningful = words.filter((word) => !NAME_NOISE.has(word));
  return (meaningful.length ? meaningful : words).join('');
}

/** Edit distance, giving up (returning max + 1) once it must exceed `max`. */
function boundedLevenshtein(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  // A shared prefix or suffix costs nothing: compare only the middles (names of one family share most of theirs).
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  a = a.slice(start, endA);
  b = b.slice(start, endB);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > max) return max + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/** Same key, one containing the other (both of some length), or a few typos apart. */
export function similarNames(a: string, b: string): boolean {
  if (!a || !b) return false;
  if (a === b) return true;
  const shorter = a.length <= b.length ? a : b;
  const longer = shorter === a ? b : a;
  if (shorter.length >= 4 && longer.includes(shorter)) return true;
  if (shorter.length < 5) return false;
  const allowed = Math.max(1, Math.floor(longer.length * 0.15));
  return boundedLevenshtein(a, b, allowed) <= allowed;
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
    ...(row.agentCardUrl !== null && { agent_card_url: row.agentCardUrl }),
    ...(row.agentId !== null && { agent_id: row.agentId }),
    ...(row.reason !== null && { reason: row.reason }),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    ...(row.decidedAt !== null && { decided_at: row.decidedAt }),
  };
}

export function toAdminSubmission(row: SubmissionRow): AdminSubmission {
  return {
    ...toSubmission(row),
    contact_email: row.contactEmail,
    decided_by: row.decidedBy,
    version: row.version,
    // The card's skills, for the moderator to read before approving (the public view keeps to the contract's fields).
    ...(row.agentCardUrl !== null && { skills: row.skills ?? [] }),
  };
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

export function createSubmissionsService({ db, clock, ids, agents, audit, quotas = false, safeFetch }: SubmissionsServiceDeps) {
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
    /**
     * `accountId` when submitted with an account (it then belongs to it); `clientKey` (the hashed
     * IP bucket) otherwise. Either may have at most 5 submissions waiting (409 quota_exceeded).
     */
    submit(input: SubmissionInput, accountId: string | null = null, clientKey?: string, card?: AgentCardFields): Submission {
      return inTransaction(db, () => {
        if (quotas && (accountId !== null || clientKey !== undefined)) {
          const who = accountId !== null ? eq(submissions.accountId, accountId) : eq(submissions.clientKey, clientKey!);
          const waiting =
            db
              .select({ n: count() })
              .from(submissions)
              .where(and(who, eq(submissions.status, 'pending')))
              .get()?.n ?? 0;
          if (waiting >= MAX_PENDING_SUBMISSIONS_PER_CLIENT) {
            throw new QuotaExceededError(
              `You have ${waiting} submissions waiting for review; at most ${MAX_PENDING_SUBMISSIONS_PER_CLIENT} may wait at once`,
            );
          }
        }
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
        db.insert(submissions).values(row).run();
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
        const card =
          before.agentCardUrl !== null ? { url: before.agentCardUrl, skills: before.skills ?? [], etag: before.agentCardEtag } : undefined;
        const agent = agents.create(agentInputOf(before), { actor: options.actor, emitEvents: true, card });
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
    bulkApprove(idList: readonly string[], actor: string, options: BulkOptions = {}): BulkDecisionResult[] {
      return decideEach(idList, (id) => {
        const approved = service.approve(id, { actor, expectedVersion: options.expectedVersions?.[id] });
        return { id, ok: true, status: 'approved', agent_id: approved.agent_id };
      });
    },

    /** Rejects each id with the same reason, each in its own transaction. */
    bulkReject(idList: readonly string[], reason: string, actor: string, options: BulkOptions = {}): BulkDecisionResult[] {
      const validReason = parseReason(reason);
      return decideEach(idList, (id) => {
        service.reject(id, validReason, { actor, expectedVersion: options.expectedVersions?.[id] });
        return { id, ok: true, status: 'rejected' };
      });
    },

    /** Console: how many submissions are in each status (the queue's tab counts). */
    countByStatus(): Record<SubmissionStatus, number> {
      const counts: Record<SubmissionStatus, number> = { pending: 0, approved: 0, rejected: 0 };
      const rows = db.select({ status: submissions.status, n: count() }).from(submissions).groupBy(submissions.status).all();
      for (const row of rows) counts[row.status] = row.n;
      return counts;
    },

    /**
     * Console: a moderator corrects a pending submission before deciding (a typo in the name,
     * a missing category). Bumps the version, so a colleague looking at the old text gets a
     * stale_version when deciding on it.
     */
    update(id: string, patch: SubmissionPatch, options: DecisionOptions): AdminSubmission {
      return inTransaction(db, () => {
        const before = requireDecidable(id, options.expectedVersion);
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
        db.update(submissions).set(after).where(eq(submissions.id, id)).run();
        audit.record({
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

    /**
     * Console: listed agents and other submissions that may be the same agent: a similar
     * name, or the same source host (the same owner on shared code hosts like GitHub).
     * At most five of each, name matches first.
     */
    findDuplicates(id: string): DuplicateHints {
      const row = requireRow(id);
      const ownName = nameKey(row.name);
      const ownSource = sourceHostKey(row.sourceUrlKey);
      const hintFor = (candidate: { name: string; sourceUrlKey: string }): DuplicateHint['matches'] => {
        const matches: DuplicateHint['matches'] = [];
        if (similarNames(ownName, nameKey(candidate.name))) matches.push('similar_name');
        if (sourceHostKey(candidate.sourceUrlKey) === ownSource) matches.push('same_source');
        return matches;
      };
      const rank = (hint: DuplicateHint): number => (hint.matches.includes('similar_name') ? 0 : 1) - hint.matches.length / 10;
      const best = (hints: DuplicateHint[]): DuplicateHint[] => hints.sort((a, b) => rank(a) - rank(b)).slice(0, MAX_DUPLICATE_HINTS);

      const agentHints: DuplicateHint[] = [];
      const agentRows = db
        .select({ id: agentsTable.id, name: agentsTable.name, sourceUrl: agentsTable.sourceUrl, sourceUrlKey: agentsTable.sourceUrlKey })
        .from(agentsTable)
        .where(eq(agentsTable.listed, true))
        .all();
      for (const candidate of agentRows) {
        // The agent this submission became is not a duplicate of it.
        if (candidate.id === row.agentId) continue;
        const matches = hintFor(candidate);
        if (matches.length) agentHints.push({ id: candidate.id, name: candidate.name, source_url: candidate.sourceUrl, matches });
      }

      // An approved submission is its listed agent: shown once, as the agent.
      const hintedAgents = new Set(agentHints.map((hint) => hint.id));
      const submissionHints: DuplicateHint[] = [];
      const submissionRows = db
        .select({
          id: submissions.id,
          agentId: submissions.agentId,
          name: submissions.name,
          status: submissions.status,
          sourceUrl: submissions.sourceUrl,
          sourceUrlKey: submissions.sourceUrlKey,
        })
        .from(submissions)
        .where(ne(submissions.id, id))
        .all();
      for (const candidate of submissionRows) {
        if (candidate.agentId !== null && hintedAgents.has(candidate.agentId)) continue;
        const matches = hintFor(candidate);
        if (matches.length) {
          submissionHints.push({
            id: candidate.id,
            name: candidate.name,
            source_url: candidate.sourceUrl,
            status: candidate.status,
            matches,
          });
        }
      }
      return { agents: best(agentHints), submissions: best(submissionHints) };
    },
  };
  return service;
}

export type SubmissionsService = ReturnType<typeof createSubmissionsService>;
