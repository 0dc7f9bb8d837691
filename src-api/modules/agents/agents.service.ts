import { and, asc, count, desc, eq, gt, sql, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import { inTransaction, type Db } from '../../db/client';
import { NotFoundError, StaleVersionError, TooManyIdsError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { runInSlices, type SliceHandlers } from '../../lib/in-slices';
import { JsonBytes } from '../../lib/json-bytes';
import type { Page } from '../../lib/schemas';
import { sourceUrlKey } from '../../lib/urls';
import type { AuditService } from '../audit/audit.service';
import {
  MAX_BULK_IDS,
  type AgentInput,
  type AgentPatch,
  type AgentProfile,
  type ConsoleListAgentsQuery,
  type ListAgentsQuery,
} from './agents.schemas';
import { createAgentChangeCursor } from './agent-changes';
import { createChangeFeed } from './agent-feed';
import { toAdminAgent, toAgentProfile, type AdminAgent } from './agent-profile';
import { createAgentRowStatements } from './agent-rows';
import type { AgentWrites } from './agent-writes';
import { createProfileCache, parseProfile, type ProfileJson } from './profile-cache';
import { agents, type AgentRow, type AgentSkill, type AgentStatus } from './agents.table';
import { BAYESIAN_RATING_SQL, computeTrustScore } from './trust-score';

export interface AgentsServiceDeps {
  db: Db;
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

const SORT_COLUMNS = {
  trust_score: agents.trustScore,
  name: agents.name,
  rating: sql.raw(BAYESIAN_RATING_SQL),
  created_at: agents.createdAt,
  updated_at: agents.updatedAt,
} as const;

/** Natural direction of each sort when the caller gives no `order`. */
const DEFAULT_ORDER: Record<keyof typeof SORT_COLUMNS, 'asc' | 'desc'> = {
  trust_score: 'desc',
  name: 'asc',
  rating: 'desc',
  created_at: 'desc',
  updated_at: 'desc',
};

/** Agents per trust-refresh transaction. */
const TRUST_REFRESH_SLICE = 2_000;

export function createAgentsService({ db, clock, ids, audit, writes, profileCacheEntries }: AgentsServiceDeps) {
  const rows = createAgentRowStatements(db);
  const changes = createAgentChangeCursor(db, rows);
  const profiles = createProfileCache({ rows, changes, maxEntries: profileCacheEntries });
  const feed = createChangeFeed({ db, rows, profiles });

  // Counting 100,000 listed agents walks an index each time; the count only
  // changes when some agent does, which change_seq tells (for every process).
  let countsAtSeq = Number.NaN;
  const listedCounts = new Map<string, number>();
  const listedCount = (type?: string): number => {
    const seq = changes.latest();
    if (seq !== countsAtSeq) {
      listedCounts.clear();
      countsAtSeq = seq;
    }
    const key = type ?? '';
    let total = listedCounts.get(key);
    if (total === undefined) {
      const filter = type ? and(eq(agents.listed, true), eq(agents.type, type)) : eq(agents.listed, true);
      total = db.select({ n: count() }).from(agents).where(filter).get()?.n ?? 0;
      listedCounts.set(key, total);
    }
    return total;
  };
  const findRow = (id: string): AgentRow | undefined => rows.byId(id);
  const trustSignalsAfter = db.$client
    .prepare(
      'SELECT id, verified, rating_count, rating_sum, description, author, capabilities, categories, type, created_at, trust_score FROM agents WHERE id > ? ORDER BY id LIMIT ?',
    )
    .raw();

  // The public list is the hot path: a prepared statement per shape for the page's ids, profiles from the cache.
  const listedPage = (query: ListAgentsQuery) => {
    const ids = rows.listedPageIds({
      orderBy: query.sort,
      direction: query.order ?? DEFAULT_ORDER[query.sort],
      type: query.type,
      limit: query.limit,
      offset: (query.page - 1) * query.limit,
    });
    const found = profiles.getMany(ids);
    // An agent unlisted by another process between the two reads is left out.
    const listed = ids.flatMap((id) => found.get(id) ?? []);
    return { profiles: listed, page: query.page, limit: query.limit, total: listedCount(query.type) };
  };

  const requireRow = (id: string, includeUnlisted = false): AgentRow => {
    const row = findRow(id);
    if (!row || (!row.listed && !includeUnlisted)) throw new NotFoundError('Agent', id);
    return row;
  };

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

  /**
   * One page of rows matching every filter, in the query's sort order (ties by id);
   * `knownTotal` saves the count query when the caller has it cached.
   */
  const pageOfRows = (filters: SQL[], query: ListAgentsQuery, knownTotal?: number): Page<AgentRow> => {
    const where = filters.length ? and(...filters) : undefined;
    const direction = (query.order ?? DEFAULT_ORDER[query.sort]) === 'asc' ? asc : desc;
    const sortColumn = SORT_COLUMNS[query.sort];
    // The id tie-break runs in the sort's direction, so the (listed, [type,] column, id) indexes serve it.
    const orderBy =
      query.sort === 'rating'
        ? // Unrated agents last in either direction.
          [sql`${sortColumn} IS NULL`, direction(sortColumn), direction(agents.id)]
        : [direction(sortColumn), direction(agents.id)];
    const rows = db
      .select()
      .from(agents)
      .where(where)
      .orderBy(...orderBy)
      .limit(query.limit)
      .offset((query.page - 1) * query.limit)
      .all();
    const total = knownTotal ?? db.select({ n: count() }).from(agents).where(where).get()?.n ?? 0;
    return { items: rows, page: query.page, limit: query.limit, total };
  };

  const service = {
    /** A listed agent's public profile. */
    get(id: string): AgentProfile {
      return toAgentProfile(requireRow(id));
    },

    /** A listed agent's public profile as JSON (cached); unknown and unlisted ids are a NotFoundError. */
    getJson(id: string): ProfileJson {
      const json = profiles.get(id);
      if (json === undefined) throw new NotFoundError('Agent', id);
      return json;
    },

    /** Public profiles (JSON) of the listed agents among `ids`; the others are left out. */
    profilesJson(idList: readonly string[]): Map<string, ProfileJson> {
      return profiles.getMany(idList);
    },

    /** The same profiles in the order of `idList`, as byte ranges handed to `visit` (see ProfileCache.visitMany). */
    visitProfilesJson(idList: readonly string[], visit: (index: number, bytes: Buffer, start: number, end: number) => void): void {
      profiles.visitMany(idList, visit);
    },

    /** Serializes the directory's profiles into the cache in the background (slices between requests); returns a stop function. */
    warmUpProfiles(handlers: SliceHandlers = {}): () => void {
      return runInSlices(() => profiles.fillStep(), handlers);
    },

    /** max(change_seq) of the directory, read at most once per event-loop turn unless this process writes (see agent-changes). */
    latestChangeSeq(): number {
      return changes.latest();
    },

    /** One page of the public change feed after the cursor `since` (undefined: from the start), as `AgentChanges` JSON. */
    changesJson(since: string | undefined, limit: number): Buffer {
      return feed.pageJson(since, limit);
    },

    /** Any agent, listed or not, for the console. */
    getRow(id: string): AgentRow {
      return requireRow(id, true);
    },

    findRow,

    /** A page of the public list, as objects (the console). */
    list(query: ListAgentsQuery): Page<AgentProfile> {
      const { profiles, ...page } = listedPage(query);
      return { ...page, items: profiles.map(parseProfile) };
    },

    /** The same page as the JSON of the `AgentList` schema, from the profile cache (the REST route), with its numbers for links. */
    listJson(query: ListAgentsQuery): { json: Buffer; page: number; limit: number; total: number } {
      const { profiles, ...page } = listedPage(query);
      const json = new JsonBytes()
        .raw('{"agents":[')
        .list(profiles, (profile, out) => out.bytes(profile))
        .raw(`],"page":${page.page},"limit":${page.limit},"total":${page.total}}`);
      return { ...page, json: json.toBuffer() };
    },

    /** Console: listed, unlisted or all agents with their moderation fields, optionally narrowed by a substring. */
    listForConsole(query: ConsoleListAgentsQuery): Page<AdminAgent> {
      const filters: SQL[] = [];
      if (query.visibility !== 'all') filters.push(eq(agents.listed, query.visibility === 'listed'));
      if (query.type) filters.push(eq(agents.type, query.type));
      const text = query.q?.trim();
      if (text) {
        const pattern = `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
        const like = (column: AnySQLiteColumn) => sql`${column} LIKE ${pattern} ESCAPE '\\'`;
        filters.push(sql`(${like(agents.id)} OR ${like(agents.name)} OR ${like(agents.tagline)} OR ${like(agents.author)})`);
      }
      const page = pageOfRows(filters, query);
      return { ...page, items: page.items.map(toAdminAgent) };
    },

    /**
     * Several profiles in request order, as the JSON of the `BulkAgents`
     * schema (from the profile cache); unknown (or unlisted) ids come back in `missing`.
     */
    bulkJson(requestedIds: readonly string[]): Buffer {
      const unique = [...new Set(requestedIds)];
      if (unique.length > MAX_BULK_IDS) throw new TooManyIdsError(unique.length, MAX_BULK_IDS);
      const found = profiles.getMany(unique);
      const missing = unique.filter((id) => !found.has(id));
      return new JsonBytes()
        .raw('{"agents":[')
        .list(
          unique.flatMap((id) => found.get(id) ?? []),
          (profile, out) => out.bytes(profile),
        )
        .raw(`],"missing":${JSON.stringify(missing)}}`)
        .toBuffer();
    },

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

    /** Changes profile fields; records `agent.updated` with the names of the changed fields. */
    update(id: string, patch: AgentPatch, options: WriteOptions = {}): AgentRow {
      return inTransaction(db, () => {
        const current = requireRow(id, true);
        const changes = profileChanges(patch);
        const changedFields = changedProfileFields(current, changes);
        if (changedFields.length === 0 && options.expectedVersion === undefined) return current;
        const next = writeChanges(current, changes, options, changedFields);
        if (options.actor) {
          audit.record({
            actor: options.actor,
            action: 'agent.update',
            entityType: 'agent',
            entityId: id,
            before: toAdminAgent(current),
            after: toAdminAgent(next),
          });
        }
        return next;
      });
    },

    /**
     * Marks an agent verified (records `agent.verified`) or takes the mark away (`agent.updated`).
     * `owner`: the account whose verified claim proved ownership, written in the same change.
     */
    setVerified(id: string, verified: boolean, options: WriteOptions & { via?: string; owner?: AgentOwner } = {}): AgentRow {
      return inTransaction(db, () => {
        const current = requireRow(id, true);
        const owner = options.owner;
        const ownerChanges =
          owner && (owner.accountId !== current.ownerAccountId || owner.name !== current.ownerName)
            ? { ownerAccountId: owner.accountId, ownerName: owner.name }
            : {};
        if (current.verified === verified && Object.keys(ownerChanges).length === 0) return current;
        // A verification (also of a new owner of a verified agent) is an agent.verified; taking it away an agent.updated.
        const next = writeChanges(current, { verified, ...ownerChanges }, options, ['verified']);
        if (options.actor) {
          audit.record({
            actor: options.actor,
            action: verified ? 'agent.verify' : 'agent.unverify',
            entityType: 'agent',
            entityId: id,
            before: { verified: current.verified, ...(owner && { owner_account_id: current.ownerAccountId }) },
            after: { verified, ...(owner && { owner_account_id: owner.accountId }) },
          });
        }
        return next;
      });
    },

    /** Deprecates an agent (with a message) or makes it active again; records `agent.updated`. */
    setStatus(id: string, status: AgentStatus, message: string | null, options: WriteOptions = {}): AgentRow {
      return inTransaction(db, () => {
        const current = requireRow(id, true);
        const statusMessage = status === 'active' ? null : message?.trim() || null;
        if (current.status === status && current.statusMessage === statusMessage) return current;
        const next = writeChanges(current, { status, statusMessage }, options, ['status', 'status_message']);
        if (options.actor) {
          audit.record({
            actor: options.actor,
            action: status === 'deprecated' ? 'agent.deprecate' : 'agent.activate',
            entityType: 'agent',
            entityId: id,
            before: { status: current.status, status_message: current.statusMessage },
            after: { status, status_message: statusMessage },
          });
        }
        return next;
      });
    },

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
    agentCardsDue(before: string, limit: number): Pick<AgentRow, 'id' | 'agentCardUrl' | 'agentCardEtag'>[] {
      return db
        .select({ id: agents.id, agentCardUrl: agents.agentCardUrl, agentCardEtag: agents.agentCardEtag })
        .from(agents)
        .where(and(sql`${agents.agentCardUrl} IS NOT NULL`, sql`coalesce(${agents.agentCardFetchedAt}, '') < ${before}`))
        .orderBy(asc(agents.agentCardFetchedAt))
        .limit(limit)
        .all();
    },

    /** An owner account's new name on each of its agents' profiles (no webhook: the listing itself did not change). */
    renameOwner(accountId: string, name: string): void {
      inTransaction(db, () => {
        for (const current of db.select().from(agents).where(eq(agents.ownerAccountId, accountId)).all()) {
          if (current.ownerName !== name) writeChanges(current, { ownerName: name }, { emitEvents: false });
        }
      });
    },

    /** A closed owner account: its agents stay, without an owner. Call inside the closing transaction. */
    detachOwner(accountId: string): void {
      for (const current of db.select().from(agents).where(eq(agents.ownerAccountId, accountId)).all()) {
        writeChanges(current, { ownerAccountId: null, ownerName: null }, { emitEvents: false });
      }
    },

    /** Hides an agent from the public API, or lists it again. */
    setListed(id: string, listed: boolean, options: WriteOptions = {}): AgentRow {
      return inTransaction(db, () => {
        const current = requireRow(id, true);
        if (current.listed === listed) return current;
        const next = writeChanges(current, { listed }, options, ['listed']);
        if (options.actor) {
          audit.record({
            actor: options.actor,
            action: listed ? 'agent.list' : 'agent.unlist',
            entityType: 'agent',
            entityId: id,
            before: { listed: current.listed },
            after: { listed },
          });
        }
        return next;
      });
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

    countListed(): number {
      return listedCount();
    },
  };
  return service;
}

export type AgentsService = ReturnType<typeof createAgentsService>;

const PROFILE_FIELD_NAMES: Record<string, string> = {
  name: 'name',
  tagline: 'tagline',
  description: 'description',
  author: 'author',
  capabilities: 'capabilities',
  categories: 'categories',
  type: 'type',
  sourceUrl: 'source_url',
};

/** The row columns an edit of profile fields sets. */
function profileChanges(patch: AgentPatch): Partial<AgentRow> {
  const changes: Partial<AgentRow> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.tagline !== undefined) changes.tagline = patch.tagline;
  if (patch.description !== undefined) changes.description = patch.description;
  if (patch.author !== undefined) changes.author = patch.author;
  if (patch.capabilities !== undefined) changes.capabilities = patch.capabilities;
  if (patch.categories !== undefined) changes.categories = patch.categories;
  if (patch.type !== undefined) changes.type = patch.type;
  if (patch.source_url !== undefined) changes.sourceUrl = patch.source_url;
  return changes;
}

function changedProfileFields(current: AgentRow, changes: Partial<AgentRow>): string[] {
  return Object.entries(changes)
    .filter(([key, value]) => key in PROFILE_FIELD_NAMES && JSON.stringify(current[key as keyof AgentRow]) !== JSON.stringify(value))
    .map(([key]) => PROFILE_FIELD_NAMES[key]!);
}
