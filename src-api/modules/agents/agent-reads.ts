import { and, asc, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import { byteOrder } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import { NotFoundError, TooManyIdsError } from '../../errors';
import { runAsyncSlices, runInSlices, type SliceHandlers } from '../../lib/in-slices';
import { JsonBytes } from '../../lib/json-bytes';
import type { Page } from '../../lib/schemas';
import { createAgentChangeCursor, pgChangeCursor, untilChanged, type AsyncChangeCursor } from './agent-changes';
import { createChangeFeed } from './agent-feed';
import { toAdminAgent, toAgentProfile, type AdminAgent } from './agent-profile';
import { createAgentRowStatements, gatedRead, sqliteAgentRowReads, type AgentRowStatements, type IndexRow, type ListedPageQuery } from './agent-rows';
import { pgAgentRowReads } from './agent-rows-pg';
import { MAX_BULK_IDS, type AgentProfile, type ConsoleListAgentsQuery, type ListAgentsQuery } from './agents.schemas';
import type { AgentRow } from './agents.table';
import { createProfileCache, parseProfile, type ProfileCache, type ProfileJson } from './profile-cache';
import { ratingSortSql } from './trust-score';

/**
 * The reads of agents (profiles, lists, bulk, the change feed, the console's
 * browse) on the data-access seam, for either store. Their hot paths keep
 * SQLite's prepared statements and synchronous profile cache, run as one
 * synchronous step through the store's gate (no await between a cache check
 * and its read); on PostgreSQL the same steps are awaited reads (agent-rows-pg.ts).
 *
 * A few reads stay synchronous, SQLite only, while their callers are not
 * ported to the Store: see `sync` below.
 */

/** Natural direction of each sort when the caller gives no `order`. */
export const DEFAULT_ORDER: Record<ListAgentsQuery['sort'], 'asc' | 'desc'> = {
  trust_score: 'desc',
  name: 'asc',
  rating: 'desc',
  created_at: 'desc',
  updated_at: 'desc',
};

type ListedPage = { profiles: ProfileJson[]; page: number; limit: number; total: number };

export function createAgentReads({ store, profileCacheEntries }: { store: Store; profileCacheEntries: number }) {
  const { agents } = store.t;
  const statements = store.dialect === 'sqlite' ? createAgentRowStatements(store.db) : undefined;
  const reads = statements ? sqliteAgentRowReads(store, statements) : pgAgentRowReads(store);
  const syncChanges = statements && createAgentChangeCursor(store.db, statements);
  const changes: AsyncChangeCursor = syncChanges
    ? { latest: () => gatedRead(store, () => syncChanges.latest()), moved: () => {} }
    : pgChangeCursor(store, reads);
  const cache = createProfileCache({ rows: statements, changes: syncChanges, reads, asyncChanges: changes, maxEntries: profileCacheEntries });
  const feed =
    statements && cache.sync
      ? createChangeFeed({ store, dialect: 'sqlite', rows: statements, profiles: cache.sync })
      : createChangeFeed({ store, dialect: 'postgres', rows: reads, profiles: cache.async });

  const listedFilter = (type?: string) => (type ? and(eq(agents.listed, true), eq(agents.type, type)) : eq(agents.listed, true));
  const countQuery = (type?: string) => store.db.select({ n: count() }).from(agents).where(listedFilter(type));
  // SQLite: counting 100,000 listed agents walks an index each time; the count only changes when
  // some agent does, which change_seq tells (for every process). Synchronous: inside the gated list step.
  let countsAtSeq = Number.NaN;
  const listedCounts = new Map<string, number>();
  const listedCountSync = (type?: string): number => {
    const seq = syncChanges!.latest();
    if (seq !== countsAtSeq) {
      listedCounts.clear();
      countsAtSeq = seq;
    }
    const key = type ?? '';
    let total = listedCounts.get(key);
    if (total === undefined) listedCounts.set(key, (total = countQuery(type).get()?.n ?? 0));
    return total;
  };
  // PostgreSQL: the counts and the pages' ids (below) kept until the cursor moves, a read shared by the
  // requests asking at once (a count of 100,000 listed agents takes 35-70 ms there).
  const pgLists = statements ? undefined : { counts: untilChanged<number>(store, changes, 64), pages: untilChanged<string[]>(store, changes, 2_000) };
  const listedCount = async (type?: string): Promise<number> => {
    if (syncChanges) return gatedRead(store, () => listedCountSync(type));
    return pgLists!.counts(type ?? '', async () => (await store.first(countQuery(type)))?.n ?? 0);
  };

  const pageQuery = (query: ListAgentsQuery): ListedPageQuery => ({
    orderBy: query.sort,
    direction: query.order ?? DEFAULT_ORDER[query.sort],
    type: query.type,
    limit: query.limit,
    offset: (query.page - 1) * query.limit,
  });
  // An agent unlisted by another process between the two reads is left out.
  const pageOf = (query: ListAgentsQuery, ids: string[], found: Map<string, ProfileJson>, total: number): ListedPage => ({
    profiles: ids.flatMap((id) => found.get(id) ?? []),
    page: query.page,
    limit: query.limit,
    total,
  });
  // The public list is the hot path: a prepared statement per shape for the page's ids, profiles from the cache.
  const listedPage = async (query: ListAgentsQuery): Promise<ListedPage> => {
    const sync = cache.sync;
    if (statements && sync) {
      return gatedRead(store, () => {
        const ids = statements.listedPageIds(pageQuery(query));
        return pageOf(query, ids, sync.getMany(ids), listedCountSync(query.type));
      });
    }
    const shape = pageQuery(query);
    const key = `${shape.orderBy} ${shape.direction} ${shape.limit} ${shape.offset} ${shape.type ?? ''}`;
    const ids = await pgLists!.pages(key, () => reads.listedPageIds(shape));
    return pageOf(query, ids, await cache.async.getMany(ids), await listedCount(query.type));
  };

  const profilesJson = (ids: readonly string[]): Promise<Map<string, ProfileJson>> => {
    const sync = cache.sync;
    return sync ? gatedRead(store, () => sync.getMany(ids)) : cache.async.getMany(ids);
  };

  const findRow = (id: string): Promise<AgentRow | undefined> => reads.byId(id);
  const requireRow = async (id: string, includeUnlisted = false): Promise<AgentRow> => requireFound(await findRow(id), id, includeUnlisted);

  /** Sorts of the console's browse: a column, or the average rating (unrated last); text in byte order on both stores. */
  const sortColumn = (sort: ListAgentsQuery['sort'], order: 'asc' | 'desc'): AnySQLiteColumn | SQL => {
    if (sort === 'name') return byteOrder(store, agents.name);
    if (sort === 'rating') return sql.raw(ratingSortSql(store.dialect, order));
    return { trust_score: agents.trustScore, created_at: agents.createdAt, updated_at: agents.updatedAt }[sort];
  };

  /** One page of rows matching every filter, in the query's sort order (ties by id). */
  const pageOfRows = async (filters: SQL[], query: ListAgentsQuery): Promise<Page<AgentRow>> => {
    const where = filters.length ? and(...filters) : undefined;
    const order = query.order ?? DEFAULT_ORDER[query.sort];
    const direction = order === 'asc' ? asc : desc;
    // The id tie-break runs in the sort's direction, so the (listed, [type,] sort key, id) indexes serve it.
    const orderBy = [direction(sortColumn(query.sort, order)), direction(byteOrder(store, agents.id))];
    const rows = await store.rows(
      store.db
        .select()
        .from(agents)
        .where(where)
        .orderBy(...orderBy)
        .limit(query.limit)
        .offset((query.page - 1) * query.limit),
    );
    const total = (await store.first(store.db.select({ n: count() }).from(agents).where(where)))?.n ?? 0;
    return { items: rows, page: query.page, limit: query.limit, total };
  };

  return {
    /** A listed agent's public profile. */
    async get(id: string): Promise<AgentProfile> {
      return toAgentProfile(await requireRow(id));
    },

    /** A listed agent's public profile as JSON (cached); unknown and unlisted ids are a NotFoundError. */
    getJson(id: string): Promise<ProfileJson> {
      const sync = cache.sync;
      // SQLite: one gated synchronous step, one promise (GET /agents/{id} is the hottest read).
      if (sync) return gatedRead(store, () => foundProfile(sync.get(id), id));
      return cache.async.get(id).then((json) => foundProfile(json, id));
    },

    /** Any agent, listed or not, for the console. */
    getRow: (id: string): Promise<AgentRow> => requireRow(id, true),

    /** Any agent by id, listed or not. */
    findRowAsync: findRow,

    /** Public profiles (JSON) of the listed agents among `ids`; the others are left out. */
    profilesJsonAsync: profilesJson,

    /** A page of the public list, as objects (the console). */
    async list(query: ListAgentsQuery): Promise<Page<AgentProfile>> {
      const { profiles, ...page } = await listedPage(query);
      return { ...page, items: profiles.map(parseProfile) };
    },

    /** The same page as the JSON of the `AgentList` schema, from the profile cache (the REST route), with its numbers for links. */
    async listJson(query: ListAgentsQuery): Promise<{ json: Buffer; page: number; limit: number; total: number }> {
      const { profiles, ...page } = await listedPage(query);
      const json = new JsonBytes()
        .raw('{"agents":[')
        .list(profiles, (profile, out) => out.bytes(profile))
        .raw(`],"page":${page.page},"limit":${page.limit},"total":${page.total}}`);
      return { ...page, json: json.toBuffer() };
    },

    /** Console: listed, unlisted or all agents with their moderation fields, optionally narrowed by a substring. */
    async listForConsole(query: ConsoleListAgentsQuery): Promise<Page<AdminAgent>> {
      const filters: SQL[] = [];
      if (query.visibility !== 'all') filters.push(eq(agents.listed, query.visibility === 'listed'));
      if (query.type) filters.push(eq(agents.type, query.type));
      const text = query.q?.trim();
      if (text) {
        const pattern = `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
        // SQLite's LIKE ignores ASCII case; PostgreSQL's ILIKE does the same (and beyond ASCII).
        const like = store.dialect === 'sqlite' ? sql`LIKE` : sql`ILIKE`;
        const match = (column: AnySQLiteColumn) => sql`${column} ${like} ${pattern} ESCAPE '\\'`;
        filters.push(sql`(${match(agents.id)} OR ${match(agents.name)} OR ${match(agents.tagline)} OR ${match(agents.author)})`);
      }
      const page = await pageOfRows(filters, query);
      return { ...page, items: page.items.map(toAdminAgent) };
    },

    /**
     * Several profiles in request order, as the JSON of the `BulkAgents`
     * schema (from the profile cache); unknown (or unlisted) ids come back in `missing`.
     */
    async bulkJson(requestedIds: readonly string[]): Promise<Buffer> {
      const unique = [...new Set(requestedIds)];
      if (unique.length > MAX_BULK_IDS) throw new TooManyIdsError(unique.length, MAX_BULK_IDS);
      const found = await profilesJson(unique);
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

    /** One page of the public change feed after the cursor `since` (undefined: from the start), as `AgentChanges` JSON. */
    changesJson: (since: string | undefined, limit: number): Promise<Buffer> => feed.pageJson(since, limit),

    /** max(change_seq) of the directory (see agent-changes). */
    latestChangeSeqAsync: (): Promise<number> => changes.latest(),

    /** Listed agents (of one type), cached by the change cursor. */
    listedCount,

    /** Serializes the directory's profiles into the cache in the background (slices between requests); returns a stop function. */
    warmUpProfiles(handlers: SliceHandlers = {}): () => void {
      const sync = cache.sync;
      if (sync) return runInSlices(() => sync.fillStep(), handlers);
      return runAsyncSlices(() => cache.async.fillStep(), handlers);
    },

    /** This process wrote agents: readers see it from the next read on (PostgreSQL; SQLite's cursor sees it itself). */
    changed: (): void => changes.moved(),

    /** Index rows (the search index's columns) changed after `afterSeq`, oldest change first: search's catch-up. */
    changedSince: (afterSeq: number, limit: number): Promise<IndexRow[]> => reads.changedSince(afterSeq, limit),

    /**
     * SQLite only (undefined on PostgreSQL): the synchronous reads search takes in one gated step
     * (catch-up, ranking and the hits' profiles with no await between them; see search.service).
     */
    searchSync: (statements && syncChanges && cache.sync
      ? { latestChangeSeq: () => syncChanges.latest(), rows: statements, profiles: cache.sync }
      : undefined) as SyncSearchReads | undefined,

    /** SQLite's prepared row statements (undefined on PostgreSQL): agent-edits reads the row it locks by id through them. */
    sync: {
      statements: statements as AgentRowStatements | undefined,
    },
  };
}

export type AgentReads = ReturnType<typeof createAgentReads>;

/** SQLite's synchronous reads for a search in one step: the change cursor (see agent-changes), the index rows, the profile cache. */
export interface SyncSearchReads {
  latestChangeSeq(): number;
  rows: Pick<AgentRowStatements, 'changedSince' | 'byId'>;
  profiles: ProfileCache;
}

function foundProfile(json: ProfileJson | undefined, id: string): ProfileJson {
  if (json === undefined) throw new NotFoundError('Agent', id);
  return json;
}

function requireFound(row: AgentRow | undefined, id: string, includeUnlisted: boolean): AgentRow {
  if (!row || (!row.listed && !includeUnlisted)) throw new NotFoundError('Agent', id);
  return row;
}
