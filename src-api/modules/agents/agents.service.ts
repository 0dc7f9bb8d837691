import { and, asc, eq, gt, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import { byteOrder } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import { StaleVersionError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { runInSlices, type SliceHandlers } from '../../lib/in-slices';
import { sourceUrlKey } from '../../lib/urls';
import type { AuditService } from '../audit/audit.service';
import type { AgentInput, AgentPatch } from './agents.schemas';
import { toAdminAgent } from './agent-profile';
import {
  changedProfileFields,
  changeOf,
  createAgentEdits,
  listedEdit,
  profileChanges,
  statusEdit,
  updateEdit,
  verifiedEdit,
  type Edit,
  type EditOptions,
} from './agent-edits';
import { createAgentReads } from './agent-reads';
import type { AgentWrites } from './agent-writes';
import { agents, type AgentRow, type AgentSkill, type AgentStatus } from './agents.table';
import { computeTrustScore } from './trust-score';

export interface AgentsServiceDeps {
  db: Db;
  /** The data-access seam the ported reads (agent-reads.ts) run on: on SQLite, over the same connection as `db`. */
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  audit: AuditService;
  /** The one write path of agents (rules, change cursor, events). */
  writes: AgentWrites;
  /**
   * Serialized public profiles kept in memory (`config.profileCacheEntries`): a
   * directory that fits is read without touching SQLite once warm.
   */
  profileCacheEntries: number;
}

/** What an agent submitted by Agent Card keeps of it. */
export interface AgentCardFields {
  url: string;
  skills: AgentSkill[];
  etag: string | null;
}

/** The account that owns an agent, and its name as profiles show it. */
export interface AgentOwner {
  accountId: string;
  name: string;
}

export interface WriteOptions {
  /** Who did it, for the audit log; omitted for public and system writes. */
  actor?: string;
  /** Record the contract's webhook event (false for demo seeding and plain imports). */
  emitEvents?: boolean;
  /** The version the caller last saw; a different current version is a conflict. */
  expectedVersion?: number;
}

/** Agents per trust-refresh transaction. */
const TRUST_REFRESH_SLICE = 2_000;

export function createAgentsService({ db, store, clock, ids, audit, writes, profileCacheEntries }: AgentsServiceDeps) {
  const reads = createAgentReads({ store, profileCacheEntries });
  // The writes below are still synchronous (inside callers' sync transactions), so they read synchronously.
  const findRow = reads.sync.findRow;
  const requireRow = reads.sync.requireRow;
  const trustSignalsAfter = db.$client
    .prepare(
      'SELECT id, verified, rating_count, rating_sum, description, author, capabilities, categories, type, created_at, trust_score FROM agents WHERE id > ? ORDER BY id LIMIT ?',
    )
    .raw();

  /**
   * Writes `changes` to an agent through the write path (version, change_seq, updated_at, trust score),
   * with the events of `changedFields` unless `emitEvents` is false.
   */
  const writeChanges = (
    current: AgentRow,
    changes: Partial<AgentRow>,
    options: WriteOptions & { via?: string },
    changedFields: readonly string[] = [],
  ): AgentRow => {
    if (options.expectedVersion !== undefined && options.expectedVersion !== current.version) {
      throw new StaleVersionError('Agent', current.id);
    }
    const next = writes.changedRow(current, changes);
    return writes.update({ current, next, changedFields }, { emitEvents: options.emitEvents !== false, via: options.via });
  };

  /** Carries out an edit's plan (agent-edits.ts) synchronously, for callers inside sync transactions. */
  const applyEdit = (id: string, edit: Edit, options: EditOptions): AgentRow =>
    inTransaction(db, () => {
      const current = requireRow(id, true);
      const plan = edit(current);
      const change = changeOf(writes, current, plan, options);
      if (!change) return current;
      const next = writes.update(change, { emitEvents: options.emitEvents !== false, via: options.via });
      if (plan.audit) audit.record(plan.audit(next));
      return next;
    });

  /** An owner's agents (sync: the owner hooks' sync forms). */

  const { sync, ...asyncReads } = reads;
  const service = {
    /** The ported reads (async, either store): get, getJson, getRow, list, listJson, listForConsole, bulkJson, changesJson, … */
    ...asyncReads,

    /** Any agent by id, listed or not. Sync (SQLite) for the callers inside sync transactions: claims, owners, edit requests, reports, search. */
    findRow,

    /** A listed agent (or any, with `includeUnlisted`), else a NotFoundError. Sync (SQLite): reviews checks it inside its transactions. */
    requireRowSync: requireRow,

    /** Public profiles (JSON) of the listed agents among `ids`. Sync (SQLite): search.service's hits, in a synchronous search. */
    profilesJson: sync.profilesJson,

    /** The same profiles in the order of `idList`, as byte ranges handed to `visit` (see ProfileCache.visitMany). Sync (SQLite): search answers. */
    visitProfilesJson(idList: readonly string[], visit: (index: number, bytes: Buffer, start: number, end: number) => void): void {
      if (!sync.profiles) throw new Error('agents.visitProfilesJson is synchronous, SQLite only, until search is ported to the Store');
      sync.profiles.visitMany(idList, visit);
    },

    /** max(change_seq), read at most once per event-loop turn unless this process writes (see agent-changes). Sync (SQLite): search, stats. */
    latestChangeSeq: sync.latestChangeSeq,

    /** Listed agents. Sync (SQLite): server.ts's demo seed check runs inside a sync transaction. */
    countListed: (): number => sync.listedCount(),

    /** A listed agent whose source is the same as `url`, if any. */
    findBySourceUrl(url: string): AgentRow | undefined {
      return db
        .select()
        .from(agents)
        .where(and(eq(agents.sourceUrlKey, sourceUrlKey(url)), eq(agents.listed, true)))
        .get();
    },

    /**
     * Lists a new agent. Call inside a transaction when other writes belong
     * with it (approving a submission); on its own it opens one.
     */
    create(input: AgentInput, options: WriteOptions & { id?: string; createdAt?: string; card?: AgentCardFields } = {}): AgentRow {
      return inTransaction(db, () => {
        const now = isoNow(clock);
        const row = writes.create(
          writes.newRow({
            id: options.id ?? ids.agent(input.name),
            name: input.name,
            tagline: input.tagline,
            description: input.description,
            author: input.author,
            capabilities: input.capabilities,
            categories: input.categories,
            type: input.type,
            sourceUrl: input.source_url,
            agentCardUrl: options.card?.url ?? null,
            skills: options.card?.skills ?? null,
            agentCardEtag: options.card?.etag ?? null,
            agentCardFetchedAt: options.card ? now : null,
            ...(options.createdAt && { createdAt: options.createdAt }),
          }),
          { emitEvents: options.emitEvents !== false },
        );
        if (options.actor) {
          audit.record({ actor: options.actor, action: 'agent.create', entityType: 'agent', entityId: row.id, after: toAdminAgent(row) });
        }
        return row;
      });
    },

    /**
     * Changes profile fields; records `agent.updated` with the names of the changed fields.
     * Sync form of `edits.update`, for its sync callers: owners.update, edit-requests' approve, reports.resolve.
     */
    update(id: string, patch: AgentPatch, options: WriteOptions = {}): AgentRow {
      return applyEdit(id, updateEdit(patch, options), options);
    },

    /**
     * Marks an agent verified (records `agent.verified`) or takes the mark away (`agent.updated`).
     * `owner`: the account whose verified claim proved ownership, written in the same change.
     * Sync form of `edits.setVerified`, for its sync callers: claim-decisions (approve), ownership-recheck.
     */
    setVerified(id: string, verified: boolean, options: WriteOptions & { via?: string; owner?: AgentOwner } = {}): AgentRow {
      return applyEdit(id, verifiedEdit(verified, options), options);
    },

    /** Deprecates an agent (with a message) or makes it active again; records `agent.updated`. Sync form of `edits.setStatus`, for owners.setStatus. */
    setStatus(id: string, status: AgentStatus, message: string | null, options: WriteOptions = {}): AgentRow {
      return applyEdit(id, statusEdit(status, message, options), options);
    },

    /**
     * The agent writes other modules call, async on either store, in the caller's store transaction
     * (a savepoint) or one of their own: update, setVerified, setStatus, setListed (the console's tRPC
     * procedures), renameOwner, detachOwner. See agent-edits.ts.
     */
    edits: createAgentEdits({ store, writes, audit }),

    /**
     * A re-fetched Agent Card: its profile fields and skills; a change is an `agent.updated`
     * (with the changed fields, `skills` among them). The fetch time and ETag are kept either way.
     * `actor`: the moderator who asked for the fetch (audited); none for the weekly re-fetch.
     */
    applyAgentCard(id: string, patch: AgentPatch, card: AgentCardFields, { actor }: { actor?: string } = {}): AgentRow {
      return inTransaction(db, () => {
        const current = requireRow(id, true);
        const changes = profileChanges(patch);
        const fields = changedProfileFields(current, changes);
        const skillsChanged = JSON.stringify(current.skills ?? []) !== JSON.stringify(card.skills);
        const bookkeeping = { agentCardEtag: card.etag, agentCardFetchedAt: isoNow(clock) };
        const changedFields = [...fields, ...(skillsChanged ? ['skills'] : [])];
        if (changedFields.length === 0) {
          const touched = { ...current, ...bookkeeping };
          writes.touch(touched);
          return touched;
        }
        const written = writeChanges(
          current,
          { ...changes, ...(skillsChanged && { skills: card.skills }), ...bookkeeping },
          {},
          changedFields,
        );
        if (actor && fields.length > 0) {
          audit.record({
            actor,
            action: 'agent.update',
            entityType: 'agent',
            entityId: id,
            before: toAdminAgent(current),
            after: toAdminAgent(written),
          });
        }
        return written;
      });
    },

    /** An Agent Card that answered 304 (or failed): only when it was last looked at changes, not the profile. */
    touchAgentCard(id: string): void {
      const current = findRow(id);
      if (current) writes.touch({ ...current, agentCardFetchedAt: isoNow(clock) });
    },

    /** Agents whose Agent Card was last fetched before `before` (oldest first): the weekly re-fetch. */
    agentCardsDue(before: string, limit: number): Promise<Pick<AgentRow, 'id' | 'agentCardUrl' | 'agentCardEtag'>[]> {
      const { agents } = store.t;
      return store.rows(
        store.db
          .select({ id: agents.id, agentCardUrl: agents.agentCardUrl, agentCardEtag: agents.agentCardEtag })
          .from(agents)
          .where(and(sql`${agents.agentCardUrl} IS NOT NULL`, sql`coalesce(${agents.agentCardFetchedAt}, '') < ${before}`))
          .orderBy(asc(byteOrder(store, agents.agentCardFetchedAt)))
          .limit(limit),
      );
    },

    /** Hides an agent from the public API, or lists it again. Sync form of `edits.setListed`, for reports.resolve. */
    setListed(id: string, listed: boolean, options: WriteOptions = {}): AgentRow {
      return applyEdit(id, listedEdit(listed, options), options);
    },

    /** Folds a review into the rating aggregate and trust score. Call inside the review's transaction. */
    applyRating(id: string, deltaCount: number, deltaSum: number): AgentRow {
      const current = requireRow(id, true);
      return writeChanges(
        current,
        { ratingCount: current.ratingCount + deltaCount, ratingSum: current.ratingSum + deltaSum },
        { emitEvents: false },
      );
    },

    /** Rows changed after `afterSeq`, oldest first: how search indexes keep up with every process's writes. */
    changedSince(afterSeq: number, limit = 5000): AgentRow[] {
      return db.select().from(agents).where(gt(agents.changeSeq, afterSeq)).orderBy(asc(agents.changeSeq)).limit(limit).all();
    },

    /**
     * The trust score's age signal moves with time; this brings every stored
     * score up to date. It reads only the columns the score needs (raw, no
     * drizzle mapping) so that 100,000 agents take a fraction of a second.
     */
    /**
     * Recomputes the trust score (its age part moves daily) of up to `limit`
     * agents with an id after `afterId`, in one transaction; a changed score
     * is a change like any other (change_seq). Returns how many changed and
     * the last id seen, or undefined once past the last agent.
     */
    refreshTrustScoresSlice(afterId: string, limit = TRUST_REFRESH_SLICE): { changed: number; lastId: string | undefined } {
      return inTransaction(db, () => {
        const slice = trustSignalsAfter.all(afterId, limit) as [
          string,
          number,
          number,
          number,
          string,
          string,
          string,
          string,
          string,
          string,
          number,
        ][];
        const now = clock.now();
        const changed: { id: string; score: number }[] = [];
        for (const [
          id,
          verified,
          ratingCount,
          ratingSum,
          description,
          author,
          capabilities,
          categories,
          type,
          createdAt,
          stored,
        ] of slice) {
          const score = computeTrustScore(
            {
              verified: verified === 1,
              ratingCount,
              ratingSum,
              description,
              author,
              // Only emptiness matters to the score: skip parsing the JSON.
              capabilities: capabilities === '[]' ? [] : [''],
              categories: categories === '[]' ? [] : [''],
              type,
              createdAt,
            },
            now,
          );
          if (score !== stored) changed.push({ id, score });
        }
        writes.setTrustScores(changed);
        return { changed: changed.length, lastId: slice.length < limit ? undefined : slice.at(-1)![0] };
      });
    },

    /** Every agent's trust score, at once; returns how many changed. */
    refreshTrustScores(): number {
      let changed = 0;
      for (let afterId: string | undefined = ''; afterId !== undefined;) {
        const slice = service.refreshTrustScoresSlice(afterId);
        changed += slice.changed;
        afterId = slice.lastId;
      }
      return changed;
    },

    /** The same in the background, a slice per event-loop turn (about 7 ms each at 2,000 agents); returns a stop function. */
    refreshTrustScoresInBackground(handlers: SliceHandlers = {}): () => void {
      let afterId = '';
      return runInSlices(() => {
        const slice = service.refreshTrustScoresSlice(afterId);
        afterId = slice.lastId ?? '';
        return slice.lastId === undefined;
      }, handlers);
    },

  };
  return service;
}

export type AgentsService = ReturnType<typeof createAgentsService>;
