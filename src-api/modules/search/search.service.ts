import type { Store } from '../../db/store';
import { NotFoundError } from '../../errors';
import type { SliceHandlers } from '../../lib/in-slices';
import { JsonBytes } from '../../lib/json-bytes';
import { gatedRead } from '../agents/agent-rows';
import type { AgentsService } from '../agents/agents.service';
import type { AgentRow } from '../agents/agents.table';
import { parseProfile, type ProfileJson } from '../agents/profile-cache';
import { createIndexFollower } from './index-follower';
import { ResultCache } from './result-cache';
import { CONNECTION_WEIGHTS, SearchIndex, tagKey, type ConnectionHit, type SearchFilters, type SearchHits } from './search-index';
import { DEFAULT_SEARCH_LIMIT, type Connection, type ConnectionsResult, type SearchParams, type SearchResult } from './search.schemas';

export interface SearchServiceDeps {
  /** The data-access seam: SQLite or PostgreSQL. */
  store: Store;
  /** The agents' reads: the change cursor, the changed rows and the profiles (async), and SQLite's synchronous ones (`searchSync`). */
  agents: Pick<AgentsService, 'searchSync' | 'latestChangeSeqAsync' | 'changedSince' | 'findRowAsync' | 'profilesJsonAsync'>;
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

/** A page's ranking, before its profiles are read. */
interface Ranked {
  query: string;
  page: number;
  limit: number;
  /** The index's ranking of the best page × limit; the page is from `first` on. */
  hits: SearchHits;
  first: number;
  ids: string[];
  /** The hits' slots in the index, as handles for the profile cache, under the index's slot numbering when ranked. */
  slots: number[];
  slotNumbering: number;
}

/** Hands the profiles of `ids` that exist, in order, to `visit` as byte ranges (see ProfileCache.visitMany). */
type VisitProfiles = (
  ids: readonly string[],
  handles: { readonly slots: readonly number[]; readonly tag: number },
  visit: (index: number, bytes: Buffer, start: number, end: number) => void,
) => void;

/** Answers kept by the result cache. */
const RESULT_CACHE_ENTRIES = 1_000;

/**
 * Search and connections over an in-memory index of listed agents.
 *
 * The index follows the database, not this process's writes (index-follower.ts):
 * before each query the service asks the agents' change cursor for
 * max(change_seq) (read once per event-loop turn, and again after any write by
 * this process); when it is past the last row applied, the rows changed since
 * are read and applied. A `cli import` running beside the server is therefore
 * visible on the next request. The first use builds the index from every row,
 * so processes that never search (the CLI) never pay for it.
 *
 * The index holds no profiles (that would double its memory); the page of
 * hits takes its profiles from the agents' profile cache, which follows the
 * same cursor.
 *
 * On SQLite a search is one synchronous step through the store's gate
 * (catch-up, ranking and the hits' profile bytes, no await between them), as
 * fast as a synchronous call. On PostgreSQL the catch-up, the ranking and the
 * profiles are awaited in turn.
 */
export function createSearchService({ store, agents, cache = false }: SearchServiceDeps) {
  const index = new SearchIndex();
  // Per search: the page of hits as JSON.
  const results = cache ? new ResultCache<SearchPage>(RESULT_CACHE_ENTRIES) : undefined;
  const fast = agents.searchSync;
  const follower = createIndexFollower(
    index,
    { latest: () => agents.latestChangeSeqAsync(), changedSince: (afterSeq, limit) => agents.changedSince(afterSeq, limit) },
    fast && {
      latest: () => fast.latestChangeSeq(),
      changedSince: (afterSeq, limit) => fast.rows.changedSince(afterSeq, limit),
      gate: (step) => gatedRead(store, step),
    },
  );
  /** SQLite: `step` in one synchronous step through the store's gate. */
  const gated = <T>(step: () => T): Promise<T> => gatedRead(store, step);

  /** True while a background warm-up (`warmUp`) is loading the index slice by slice. */
  let warming = false;

  /** The result cache's key of a search. */
  const keyOf = (params: SearchParams): string =>
    JSON.stringify([
      (params.query ?? params.q ?? '').trim(),
      params.page ?? 1,
      params.limit ?? DEFAULT_SEARCH_LIMIT,
      params.type,
      params.min_trust,
      params.capabilities,
    ]);

  /** The best page × limit for `params` from the index as it is now. */
  function rank(params: SearchParams): Ranked {
    const query = (params.query ?? params.q ?? '').trim();
    const page = params.page ?? 1;
    const limit = params.limit ?? DEFAULT_SEARCH_LIMIT;
    const filters: SearchFilters = { type: params.type, minTrust: params.min_trust, capabilities: params.capabilities };
    // The index ranks the best page × limit; the page is the last `limit` of them.
    const hits = index.search(query, page * limit, filters);
    const first = (page - 1) * limit;
    const ids: string[] = [];
    const slots: number[] = [];
    for (let i = first; i < hits.hits.length; i++) {
      ids.push(hits.hits[i]!.id);
      slots.push(hits.hits[i]!.slot);
    }
    return { query, page, limit, hits, first, ids, slots, slotNumbering: index.slotNumbering };
  }

  /**
   * The page as JSON: each hit's profile JSON with its score. The index and the profile cache follow the
   * same change cursor, so a hit has a profile unless another process unlisted the agent meanwhile; then
   * it is left out of both. Each profile's bytes go straight from the profile cache into the answer, its
   * closing brace (a profile is a JSON object) replaced by the score: no view, Map or object per hit.
   */
  function pageJson({ query, page, limit, hits, first, ids, slots, slotNumbering }: Ranked, visitProfiles: VisitProfiles): SearchPage {
    const json = new JsonBytes().raw(`{"query":${JSON.stringify(query)},"agents":[`);
    let written = 0;
    visitProfiles(ids, { slots, tag: slotNumbering }, (i, bytes, start, end) => {
      if (written++ > 0) json.raw(',');
      json.range(bytes, start, end - 1).raw(`,"score":${hits.hits[first + i]!.score}}`);
    });
    const total = hits.total - (ids.length - written);
    json.raw(`],"page":${page},"limit":${limit},"total":${total}}`);
    return { json: json.toBuffer(), page, limit, total };
  }

  /** SQLite: the page of hits for `params` in one synchronous step (from the result cache when on and current). */
  function hitsSync(params: SearchParams, profiles: NonNullable<typeof fast>['profiles']): SearchPage {
    follower.catchUpSync();
    const key = results && keyOf(params);
    // follower.seq is the change cursor the index (and so every answer computed now) has caught up to.
    const hit = key === undefined ? undefined : results!.get(key, follower.seq);
    if (hit) return hit;
    const entry = pageJson(rank(params), (ids, handles, visit) => profiles.visitMany(ids, visit, handles));
    if (key !== undefined) results!.set(key, follower.seq, entry);
    return entry;
  }

  /** PostgreSQL (any store): catch up, rank, then read the hits' profiles from the async profile cache. */
  async function hits(params: SearchParams): Promise<SearchPage> {
    await follower.catchUp();
    const seq = follower.seq;
    const key = results && keyOf(params);
    const hit = key === undefined ? undefined : results!.get(key, seq);
    if (hit) return hit;
    const ranked = rank(params);
    const profiles = await agents.profilesJsonAsync(ranked.ids);
    const entry = pageJson(ranked, (ids, _handles, visit) =>
      ids.forEach((id, i) => {
        const bytes = profiles.get(id);
        if (bytes !== undefined) visit(i, bytes, 0, bytes.length);
      }),
    );
    // Kept only if no catch-up moved the index on meanwhile (the cache would go back to an older cursor).
    if (key !== undefined && follower.seq === seq) results!.set(key, seq, entry);
    return entry;
  }

  const searchPage = (params: SearchParams): Promise<SearchPage> => {
    const profiles = fast?.profiles;
    return profiles ? gated(() => hitsSync(params, profiles)) : hits(params);
  };

  /** Agents related to `id`, best first, with their profile JSON and what they share with it. */
  const connectionsOf = (id: string, related: ConnectionHit[], source: AgentRow | undefined, profiles: Map<string, ProfileJson>) => {
    if (!source || !source.listed) throw new NotFoundError('Agent', id);
    const connections = related.flatMap((hit) => {
      const profile = profiles.get(hit.id);
      const why = describeConnection(source, hit.shared);
      return profile === undefined || why.score === 0 ? [] : [{ profile, ...why }];
    });
    return { agent_id: id, connections };
  };
  async function findConnections(id: string, limit: number) {
    if (fast) {
      return gated(() => {
        follower.catchUpSync();
        const related = index.connections(id, limit);
        if (!related) throw new NotFoundError('Agent', id);
        return connectionsOf(id, related, fast.rows.byId(id), fast.profiles.getMany(related.map((hit) => hit.id)));
      });
    }
    await follower.catchUp();
    const related = index.connections(id, limit);
    if (!related) throw new NotFoundError('Agent', id);
    const source = await agents.findRowAsync(id);
    return connectionsOf(id, related, source, await agents.profilesJsonAsync(related.map((hit) => hit.id)));
  }

  /** Catches up unless a warm-up is under way (then the part loaded so far). */
  const caughtUp = async (): Promise<void> => {
    if (warming) return;
    if (fast) await gated(() => follower.catchUpSync());
    else await follower.catchUp();
  };

  return {
    /**
     * Listed agents in the index (for /health). During a background warm-up
     * this is the part loaded so far, without forcing the rest; otherwise the
     * index catches up first.
     */
    async indexedCount(): Promise<number> {
      await caughtUp();
      return index.size;
    },

    /** As indexedCount, and when the index last took in a change (for /metrics). */
    async indexStatus(): Promise<{ documents: number; lastRefreshMs: number }> {
      await caughtUp();
      return { documents: index.size, lastRefreshMs: follower.lastRefreshMs };
    },

    /** Brings the index up to date now, e.g. at start-up so the first request does not pay for the build. */
    async refresh(): Promise<void> {
      if (fast) await gated(() => follower.catchUpSync());
      else await follower.catchUp();
    },

    /**
     * Builds the index in the background: one batch of rows now, then one per
     * event-loop turn, so requests are served in between. A search or
     * connections request meanwhile finishes the catch-up itself, so its
     * results are complete. `onDone` runs once the index has caught up;
     * `onError` if a slice fails (without it, the error is thrown).
     * Returns a function that stops the warm-up (on close).
     */
    warmUp({ onDone, onError }: SliceHandlers = {}): () => void {
      warming = true;
      const stop = follower.warmUp({
        onDone: () => {
          warming = false;
          onDone?.();
        },
        onError: (error) => {
          // E.g. the database closed under us: later requests catch up themselves as before.
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

    /** Search results as objects (the console's tRPC procedure, MCP, in-process callers): the JSON below, parsed. */
    async search(params: SearchParams): Promise<SearchResult> {
      return JSON.parse((await searchPage(params)).json.toString('utf8')) as SearchResult;
    },

    /**
     * The same results as the JSON of the `SearchResult` schema, from the profile cache (the REST
     * routes), with the paging figures for the `Link` header.
     */
    searchJson(params: SearchParams): Promise<{ json: Buffer; page: number; limit: number; total: number }> {
      return searchPage(params);
    },

    /** Listed agents related to `id` (shared categories, author, capabilities), best first. */
    async connections(id: string, limit: number): Promise<ConnectionsResult> {
      const found = await findConnections(id, limit);
      return {
        agent_id: found.agent_id,
        connections: found.connections.map(({ profile, ...why }) => ({ agent: parseProfile(profile), ...why })),
      };
    },

    /** The same as the JSON of the `ConnectionsResult` schema, from the profile cache (the REST route). */
    async connectionsJson(id: string, limit: number): Promise<Buffer> {
      const found = await findConnections(id, limit);
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
