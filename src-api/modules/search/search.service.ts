import type { Db } from '../../db/client';
import { NotFoundError } from '../../errors';
import type { Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { runInSlices, type SliceHandlers } from '../../lib/in-slices';
import type { AgentsService } from '../agents/agents.service';
import type { AgentRow } from '../agents/agents.table';
import { createAgentRowStatements } from '../agents/agent-rows';
import { parseProfile } from '../agents/profile-cache';
import { JsonBytes } from '../../lib/json-bytes';
import { ResultCache } from './result-cache';
import { CONNECTION_WEIGHTS, SearchIndex, tagKey, type ConnectionHit, type SearchFilters } from './search-index';
import { DEFAULT_SEARCH_LIMIT, type Connection, type ConnectionsResult, type SearchParams, type SearchResult } from './search.schemas';

export interface SearchServiceDeps {
  db: Db;
  clock: Clock;
  ids?: IdGenerator;
  agents: AgentsService;
  /** Keep answers to repeated searches until the next change (config.searchCache). */
  cache?: boolean;
}

/** A page of hits as the JSON of the `SearchResult` schema, with its paging figures (for the `Link` header). */
interface SearchPage {
  json: Buffer;
  page: number;
  limit: number;
  total: number;
}

/** Answers kept by the result cache. */
const RESULT_CACHE_ENTRIES = 1_000;

/** Rows read per catch-up query; a large backlog (first build, a big import) takes several. */
const CATCH_UP_BATCH = 2_000;

/**
 * Search and connections over an in-memory index of listed agents.
 *
 * The index follows the database, not this process's writes: every agents
 * row carries `change_seq` (max + 1 on every write, from any process). Before
 * each query the service asks the agents' change cursor for max(change_seq)
 * (read once per event-loop turn, and again after any write by this
 * process); when it is past the last row applied, the rows changed since are
 * read and applied. A `cli import` running beside the server is therefore
 * visible on the next request. The first use builds the index from every
 * row, so processes that never search (the CLI) never pay for it.
 *
 * The index holds no profiles (that would double its memory); the page of
 * hits takes its profiles from the agents' profile cache, which follows the
 * same cursor.
 */
export function createSearchService({ db, agents, cache = false }: SearchServiceDeps) {
  const index = new SearchIndex();
  // Per search: the page of hits as JSON.
  const results = cache ? new ResultCache<SearchPage>(RESULT_CACHE_ENTRIES) : undefined;
  const rows = createAgentRowStatements(db);
  let lastSeenSeq = -1;
  /** When the index last took in a change (ms since the epoch; 0 before the first), for /metrics. */
  let lastRefreshMs = 0;

  /** True while a background warm-up (`warmUp`) is loading the index slice by slice. */
  let warming = false;

  /**
   * Applies up to `maxBatches` batches of changed rows; true when the index has
   * caught up (then compacts if due). Mid-way, only the memory guard compacts,
   * so a bulk load compacts once, at the end.
   */
  function applyBatches(maxBatches: number): boolean {
    for (let done = 0; done < maxBatches; done++) {
      const batch = rows.changedSince(lastSeenSeq, CATCH_UP_BATCH);
      if (batch.length > 0) lastRefreshMs = Date.now();
      for (const row of batch) {
        index.apply(row);
        if (row.changeSeq > lastSeenSeq) lastSeenSeq = row.changeSeq;
      }
      if (batch.length < CATCH_UP_BATCH) {
        index.maybeCompact();
        return true;
      }
      index.maybeCompact(true);
    }
    return false;
  }

  /** Applies every agent change the index has not seen yet. */
  function catchUp(): void {
    if (agents.latestChangeSeq() <= lastSeenSeq) return;
    applyBatches(Infinity);
  }

  /** The page of hits for `params` (from the result cache when on and current). */
  function cachedHits(params: SearchParams): SearchPage {
    catchUp();
    if (!results) return findHits(params);
    const key = JSON.stringify([
      (params.query ?? params.q ?? '').trim(),
      params.page ?? 1,
      params.limit ?? DEFAULT_SEARCH_LIMIT,
      params.type,
      params.min_trust,
      params.capabilities,
    ]);
    // lastSeenSeq is the change cursor the index (and so every answer computed now) has caught up to.
    const hit = results.get(key, lastSeenSeq);
    if (hit) return hit;
    const entry = findHits(params);
    results.set(key, lastSeenSeq, entry);
    return entry;
  }

  /** The page of hits for `params` as JSON: each agent's profile JSON with its score. */
  function findHits(params: SearchParams): SearchPage {
    catchUp();
    const query = (params.query ?? params.q ?? '').trim();
    const page = params.page ?? 1;
    const limit = params.limit ?? DEFAULT_SEARCH_LIMIT;
    const filters: SearchFilters = { type: params.type, minTrust: params.min_trust, capabilities: params.capabilities };
    // The index ranks the best page × limit; the page is the last `limit` of them.
    const ranked = index.search(query, page * limit, filters);
    const first = (page - 1) * limit;
    const ids: string[] = [];
    for (let i = first; i < ranked.hits.length; i++) ids.push(ranked.hits[i]!.id);
    // The index and the profile cache follow the same change cursor, so a hit has a profile unless
    // another process unlisted the agent this very turn; then it is left out of both.
    // Each profile's bytes go straight from the profile cache into the answer, its closing brace (a profile is a
    // JSON object) replaced by the score: no view, Map or object per hit (they were a fifth of a cheap search).
    const json = new JsonBytes().raw(`{"query":${JSON.stringify(query)},"agents":[`);
    let written = 0;
    agents.visitProfilesJson(ids, (i, bytes, start, end) => {
      if (written++ > 0) json.raw(',');
      json.range(bytes, start, end - 1).raw(`,"score":${ranked.hits[first + i]!.score}}`);
    });
    const total = ranked.total - (ids.length - written);
    json.raw(`],"page":${page},"limit":${limit},"total":${total}}`);
    return { json: json.toBuffer(), page, limit, total };
  }

  /** Agents related to `id`, best first, with their profile JSON and what they share with it. */
  function findConnections(id: string, limit: number) {
    catchUp();
    const related = index.connections(id, limit);
    const source = related && agents.findRow(id);
    if (!related || !source || !source.listed) throw new NotFoundError('Agent', id);
    const profiles = agents.profilesJson(related.map((hit) => hit.id));
    const connections = related.flatMap((hit) => {
      const profile = profiles.get(hit.id);
      const why = describeConnection(source, hit.shared);
      return profile === undefined || why.score === 0 ? [] : [{ profile, ...why }];
    });
    return { agent_id: id, connections };
  }

  return {
    /**
     * Listed agents in the index (for /health). During a background warm-up
     * this is the part loaded so far, without forcing the rest; otherwise the
     * index catches up first.
     */
    indexedCount(): number {
      if (!warming) catchUp();
      return index.size;
    },

    /** As indexedCount, and when the index last took in a change (for /metrics). */
    indexStatus(): { documents: number; lastRefreshMs: number } {
      if (!warming) catchUp();
      return { documents: index.size, lastRefreshMs };
    },

    /** Brings the index up to date now, e.g. at start-up so the first request does not pay for the build. */
    refresh(): void {
      catchUp();
    },

    /**
     * Builds the index in the background: one batch of rows now, then one per
     * event-loop turn (setImmediate), so requests are served in between. A
     * search or connections request meanwhile finishes the catch-up itself, so
     * its results are complete. `onDone` runs once the index has caught up;
     * `onError` if a slice fails (without it, the error is thrown).
     * Returns a function that stops the warm-up (on close).
     */
    warmUp({ onDone, onError }: SliceHandlers = {}): () => void {
      warming = true;
      const stop = runInSlices(() => applyBatches(1), {
        onDone: () => {
          warming = false;
          onDone?.();
        },
        onError: (error) => {
          // E.g. the database closed under us: later requests catch up synchronously as before.
          warming = false;
          if (onError) onError(error);
          else throw error;
        },
      });
      return () => {
        warming = false;
        stop();
      };
    },

    /** Search results as objects (the console's tRPC procedure, in-process callers): the JSON below, parsed. */
    search(params: SearchParams): SearchResult {
      return JSON.parse(cachedHits(params).json.toString('utf8')) as SearchResult;
    },

    /**
     * The same results as the JSON of the `SearchResult` schema, from the profile cache (the REST
     * routes), with the paging figures for the `Link` header.
     */
    searchJson(params: SearchParams): { json: Buffer; page: number; limit: number; total: number } {
      return cachedHits(params);
    },

    /** Listed agents related to `id` (shared categories, author, capabilities), best first. */
    connections(id: string, limit: number): ConnectionsResult {
      const found = findConnections(id, limit);
      return {
        agent_id: found.agent_id,
        connections: found.connections.map(({ profile, ...why }) => ({ agent: parseProfile(profile), ...why })),
      };
    },

    /** The same as the JSON of the `ConnectionsResult` schema, from the profile cache (the REST route). */
    connectionsJson(id: string, limit: number): Buffer {
      const found = findConnections(id, limit);
      return new JsonBytes()
        .raw(`{"agent_id":${JSON.stringify(found.agent_id)},"connections":[`)
        .list(found.connections, ({ profile, ...why }, out) =>
          out
            .raw('{"agent":')
            .bytes(profile)
            .raw(
              `,"score":${why.score},"shared_categories":${JSON.stringify(why.shared_categories)},` +
                `"shared_capabilities":${JSON.stringify(why.shared_capabilities)},"same_author":${why.same_author}}`,
            ),
        )
        .raw(']}')
        .toBuffer();
    },
  };
}

/**
 * Why two agents are related, from the tags the index says they share: the
 * requested agent's own spelling of each shared category and capability.
 */
function describeConnection(from: AgentRow, shared: ConnectionHit['shared']): Omit<Connection, 'agent'> {
  const sharedKeys = (kind: ConnectionHit['shared'][number]['kind']) =>
    new Set(shared.filter((tag) => tag.kind === kind).map((tag) => tag.key));
  const spelled = (mine: string[], keys: Set<string>): string[] => {
    const seen = new Set<string>();
    return mine.filter((value) => {
      const key = tagKey(value);
      if (!keys.has(key) || seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  };
  const sharedCategories = spelled(from.categories, sharedKeys('category'));
  const sharedCapabilities = spelled(from.capabilities, sharedKeys('capability'));
  const sameAuthor = shared.some((tag) => tag.kind === 'author');
  return {
    score:
      CONNECTION_WEIGHTS.category * sharedCategories.length +
      (sameAuthor ? CONNECTION_WEIGHTS.author : 0) +
      CONNECTION_WEIGHTS.capability * sharedCapabilities.length,
    shared_categories: sharedCategories,
    shared_capabilities: sharedCapabilities,
    same_author: sameAuthor,
  };
}

export type SearchService = ReturnType<typeof createSearchService>;
