import type { Db } from '../../db/client';
import { NotFoundError } from '../../errors';
import type { Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { AgentsService } from '../agents/agents.service';
import type { AgentProfile } from '../agents/agents.schemas';
import type { AgentRow } from '../agents/agents.table';
import { createAgentRowStatements } from '../agents/agent-rows';
import { CONNECTION_WEIGHTS, SearchIndex, tagKey, type SearchFilters } from './search-index';
import {
  DEFAULT_SEARCH_LIMIT,
  type Connection,
  type ConnectionsResult,
  type SearchHit,
  type SearchParams,
  type SearchResult,
} from './search.schemas';

export interface SearchServiceDeps {
  db: Db;
  clock: Clock;
  ids?: IdGenerator;
  agents: AgentsService;
}

/** Rows read per catch-up query; a large backlog (first build, a big import) takes several. */
const CATCH_UP_BATCH = 2_000;

/**
 * Search and connections over an in-memory index of listed agents.
 *
 * The index follows the database, not this process's writes: every agents
 * row carries `change_seq` (max + 1 on every write, from any process). Before
 * each query the service reads max(change_seq), an index lookup of a few
 * microseconds; when it is past the last row applied, the rows changed since
 * are read and applied. A `cli import` running beside the server is
 * therefore visible on the very next request. The first use builds the index
 * from every row, so processes that never search (the CLI) never pay for it.
 *
 * The index holds no profiles (that would double its memory); the page of
 * hits is read by primary key, and re-checked against the filters in case
 * another process changed an agent in between.
 */
export function createSearchService({ db, agents }: SearchServiceDeps) {
  const index = new SearchIndex();
  const rows = createAgentRowStatements(db);
  let lastSeenSeq = -1;

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
    if (rows.latestChangeSeq() <= lastSeenSeq) return;
    applyBatches(Infinity);
  }

  /** Current rows of `hits`, in their order, still listed and passing the filters. */
  function rowsOf<T extends { id: string }>(hits: readonly T[], filters: SearchFilters = {}): { hit: T; row: AgentRow }[] {
    const byId = new Map(rows.byIds(hits.map((hit) => hit.id)).map((row) => [row.id, row]));
    const found: { hit: T; row: AgentRow }[] = [];
    for (const hit of hits) {
      const row = byId.get(hit.id);
      if (row && passesFilters(row, filters)) found.push({ hit, row });
    }
    return found;
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

    /** Brings the index up to date now, e.g. at start-up so the first request does not pay for the build. */
    refresh(): void {
      catchUp();
    },

    /**
     * Builds the index in the background: one batch of rows now, then one per
     * event-loop turn (setImmediate), so requests are served in between. A
     * search or connections request meanwhile finishes the catch-up itself, so
     * its results are complete. `onDone` runs once the index has caught up.
     * Returns a function that stops the warm-up (on close).
     */
    warmUp(onDone?: () => void): () => void {
      let handle: NodeJS.Immediate | undefined;
      let stopped = false;
      const step = () => {
        handle = undefined;
        if (stopped) return;
        let caughtUp: boolean;
        try {
          caughtUp = applyBatches(1);
        } catch (error) {
          // E.g. the database closed under us: later requests catch up synchronously as before.
          warming = false;
          throw error;
        }
        if (!caughtUp) {
          handle = setImmediate(step);
          return;
        }
        warming = false;
        onDone?.();
      };
      warming = true;
      step();
      return () => {
        stopped = true;
        warming = false;
        if (handle) clearImmediate(handle);
      };
    },

    search(params: SearchParams): SearchResult {
      catchUp();
      const query = (params.query ?? '').trim();
      const filters: SearchFilters = { type: params.type, minTrust: params.min_trust, capabilities: params.capabilities };
      const { hits, total } = index.search(query, params.limit ?? DEFAULT_SEARCH_LIMIT, filters);
      const found = rowsOf(hits, filters);
      return {
        query,
        agents: found.map(({ hit, row }): SearchHit => ({ ...agents.toProfile(row), score: hit.score })),
        // Agents changed by another process since the catch-up moments ago are left out of both.
        total: total - (hits.length - found.length),
      };
    },

    /** Listed agents related to `id` (shared categories, author, capabilities), best first. */
    connections(id: string, limit: number): ConnectionsResult {
      catchUp();
      const related = index.connections(id, limit);
      const source = related && rows.byIds([id])[0];
      if (!related || !source || !source.listed) throw new NotFoundError('Agent', id);
      const connections = rowsOf(related)
        .map(({ row }) => describeConnection(source, row, agents.toProfile(row)))
        .filter((connection) => connection.score > 0)
        .sort((a, b) => b.score - a.score || b.agent.trust_score - a.agent.trust_score || compareStrings(a.agent.id, b.agent.id));
      return { agent_id: id, connections };
    },
  };
}

/**
 * Why two agents are related, and the score that follows from it (the same
 * weights the index ranks with, recomputed from the rows just read).
 */
function describeConnection(from: AgentRow, to: AgentRow, profile: AgentProfile): Connection {
  const shared = (mine: string[], theirs: string[]): string[] => {
    const theirKeys = new Set(theirs.map(tagKey));
    const seen = new Set<string>();
    return mine.filter((value) => {
      const key = tagKey(value);
      if (!key || !theirKeys.has(key) || seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  };
  const sharedCategories = shared(from.categories, to.categories);
  const sharedCapabilities = shared(from.capabilities, to.capabilities);
  const sameAuthor = tagKey(from.author) !== '' && tagKey(from.author) === tagKey(to.author);
  return {
    agent: profile,
    score:
      CONNECTION_WEIGHTS.category * sharedCategories.length +
      (sameAuthor ? CONNECTION_WEIGHTS.author : 0) +
      CONNECTION_WEIGHTS.capability * sharedCapabilities.length,
    shared_categories: sharedCategories,
    shared_capabilities: sharedCapabilities,
    same_author: sameAuthor,
  };
}

function passesFilters(row: AgentRow, filters: SearchFilters): boolean {
  if (!row.listed) return false;
  if (filters.type !== undefined && row.type !== filters.type) return false;
  if (filters.minTrust !== undefined && row.trustScore < filters.minTrust) return false;
  const required = (filters.capabilities ?? []).map(tagKey).filter((key) => key.length > 0);
  if (required.length > 0) {
    const own = new Set(row.capabilities.map(tagKey));
    if (!required.every((key) => own.has(key))) return false;
  }
  return true;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export type SearchService = ReturnType<typeof createSearchService>;
