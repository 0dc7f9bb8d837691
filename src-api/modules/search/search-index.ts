import { compact, compactionDue } from './compaction';
import { buildImpactOrders } from './impact-orders';
import { findConnections, type ConnectionHit, type ConnectionOptions } from './connections';
import { QueryExpander } from './expansion';
import { Ingester } from './ingest';
import { IndexStore, type IndexableAgent } from './index-store';
import { browse, prepareFilter, textSearch, type ScoringMode, type SearchFilters, type SearchHits } from './scoring';
import { parseQuery } from './text';

export { allowedEdits, ONE_EDIT_MIN_LENGTH, TWO_EDITS_MIN_LENGTH } from './expansion';
export { CONNECTION_WEIGHTS, type ConnectionHit } from './connections';
export { FIELD_WEIGHTS, tagKey, type IndexableAgent } from './index-store';
export type { ScoredId, ScoringMode, SearchFilters, SearchHits } from './scoring';

export type SearchIndexOptions = ConnectionOptions;

const DEFAULT_OPTIONS: SearchIndexOptions = { connectionScanBudget: 60_000, connectionSamplePerList: 4_000 };

export const MAX_QUERY_TERMS = 16;

/**
 * The in-memory search index over listed agents: one object over the parts
 * that each do one job — storage (`index-store`), ingestion (`ingest`),
 * compaction (`compaction`), query expansion (`expansion`), scoring
 * (`scoring`), connections (`connections`) and the top-k heap (`top-k`).
 */
export class SearchIndex {
  private readonly store = new IndexStore();
  private readonly ingester = new Ingester(this.store);
  private readonly expander = new QueryExpander(this.store);
  private readonly options: SearchIndexOptions;

  constructor(options: Partial<SearchIndexOptions> = {}) {
    this.options = { ...DEFAULT_OPTIONS, ...options };
  }

  get vocabulary() {
    return this.store.vocabulary;
  }

  /** The slots' numbering (IndexStore.slotNumbering): under it, each hit's `slot` stands for its id alone. */
  get slotNumbering(): number {
    return this.store.slotNumbering;
  }

  /** Listed agents in the index. */
  get size(): number {
    return this.store.liveCount;
  }

  has(id: string): boolean {
    return this.store.slotById.has(id);
  }

  /** Adds, updates or (when unlisted) removes one agent. */
  apply(agent: IndexableAgent): void {
    this.ingester.apply(agent);
  }

  /**
   * Compacts when tombstones or tail postings have grown past their share.
   * In the middle of a large catch-up (`midBatch`) only a memory guard
   * applies, so that loading 100,000 agents compacts once, at the end.
   */
  maybeCompact(midBatch = false): void {
    if (compactionDue(this.store, midBatch)) compact(this.store, !midBatch);
    // Impact orders built mid-batch without tie order: put equal impacts in tie order at the end (at 100,000 agents
    // about 150 ms). Orders gone stale by trust changes wait for the next compaction instead (no stall after a refresh).
    else if (!midBatch && this.store.tieOrderDeferred) buildImpactOrders(this.store);
  }

  /** Rewrites the postings without tombstones, turns tails into base postings and renumbers slots densely. */
  compact(): void {
    compact(this.store);
  }

  /**
   * Agents matching `query`, best first (see `textSearch` for the score).
   * An empty query (no letters or digits) lists every agent that passes the
   * filters, by trust score, with score 0. `mode` forces the exhaustive or
   * the pruned scorer (tests compare them); by default the query decides.
   */
  search(query: string, limit: number, filters: SearchFilters = {}, mode: ScoringMode = 'auto'): SearchHits {
    const filter = prepareFilter(this.store, filters);
    if (filter === null) return { hits: [], total: 0 };
    const parsed = parseQuery(query, MAX_QUERY_TERMS);
    if (parsed.terms.length === 0) return browse(this.store, limit, filter);
    return textSearch(this.store, this.expander, parsed, limit, filter, mode);
  }

  /**
   * Agents related to `id` by shared categories, author and capabilities,
   * best first; undefined when `id` is not in the index.
   */
  connections(id: string, limit: number): ConnectionHit[] | undefined {
    const source = this.store.slotById.get(id);
    if (source === undefined) return undefined;
    return findConnections(this.store, source, limit, this.options);
  }
}
