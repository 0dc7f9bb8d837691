import { runAsyncSlices, type SliceHandlers } from '../../lib/in-slices';
import type { IndexRow } from '../agents/agent-rows';
import type { SearchIndex } from './search-index';

/** Rows read per catch-up query; a large backlog (first build, a big import) takes several. */
const CATCH_UP_BATCH = 2_000;

/** Where the index reads the directory's changes: the change cursor and the rows changed since a change_seq. */
export interface IndexFeed {
  /** max(change_seq), -1 for none (read at most once per event-loop turn: see agent-changes). */
  latest(): Promise<number>;
  /** Index rows changed after `afterSeq`, oldest change first. */
  changedSince(afterSeq: number, limit: number): Promise<IndexRow[]>;
}

/** The same reads, synchronous (SQLite's prepared statements), and the store's gate to run a synchronous step through. */
export interface SyncIndexFeed {
  latest(): number;
  changedSince(afterSeq: number, limit: number): IndexRow[];
  /** Runs `step` at once unless another caller's store transaction is open, then once it has ended (gatedRead). */
  gate<T>(step: () => T): Promise<T>;
}

/**
 * Keeps the in-memory index up to date with the agents table: every row
 * carries `change_seq` (a write by any process moves it), and the rows
 * changed after the last one applied are read and applied, in change order.
 *
 * Two ways to catch up, one state: `catchUpSync` (SQLite's prepared
 * statements, inside a caller's synchronous step) and `catchUp` (async, either
 * store). Async catch-ups run one at a time: a caller that finds one under way
 * waits for it and then looks again, so no row is applied twice or out of
 * order by two catch-ups at once.
 */
export function createIndexFollower(index: SearchIndex, feed: IndexFeed, syncFeed?: SyncIndexFeed) {
  let lastSeenSeq = -1;
  /** When the index last took in a change (ms since the epoch; 0 before the first), for /metrics. */
  let lastRefreshMs = 0;

  /**
   * Applies one batch of changed rows; true when it was the last (the index has
   * caught up: then compacts if due). Mid-way, only the memory guard compacts,
   * so a bulk load compacts once, at the end.
   */
  const take = (batch: readonly IndexRow[]): boolean => {
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
    return false;
  };

  const requireSync = (): SyncIndexFeed => {
    if (!syncFeed) throw new Error('the search index catches up synchronously on SQLite only');
    return syncFeed;
  };
  /** Up to `maxBatches` batches, synchronously; true once caught up. */
  const applySync = (maxBatches: number): boolean => {
    const rows = requireSync();
    for (let done = 0; done < maxBatches; done++) if (take(rows.changedSince(lastSeenSeq, CATCH_UP_BATCH))) return true;
    return false;
  };
  /** The same, awaiting each batch. Only inside `serially`. */
  const applyAsync = async (maxBatches: number): Promise<boolean> => {
    for (let done = 0; done < maxBatches; done++) if (take(await feed.changedSince(lastSeenSeq, CATCH_UP_BATCH))) return true;
    return false;
  };

  // The async catch-ups and warm-up slices, one after another.
  let tail: Promise<unknown> = Promise.resolve();
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work);
    tail = run.catch(() => undefined);
    return run;
  };

  return {
    /** The change_seq the index has caught up to (the result cache's key). */
    get seq(): number {
      return lastSeenSeq;
    },
    get lastRefreshMs(): number {
      return lastRefreshMs;
    },

    /** Applies every change not seen yet, synchronously (SQLite, inside a gated step). */
    catchUpSync(): void {
      if (requireSync().latest() > lastSeenSeq) applySync(Infinity);
    },

    /** Applies every change not seen yet: up to the cursor as read now (or later). */
    async catchUp(): Promise<void> {
      const seq = await feed.latest();
      if (seq <= lastSeenSeq) return;
      await serially(async () => {
        // Another catch-up may have gone past `seq` while this one waited.
        if (seq > lastSeenSeq) await applyAsync(Infinity);
      });
    },

    /**
     * One batch per event-loop turn until caught up (SQLite: each a synchronous step through the gate;
     * PostgreSQL: in turn with the catch-ups). Returns a stop function.
     */
    warmUp(handlers: SliceHandlers): () => void {
      const sync = syncFeed;
      return runAsyncSlices(sync ? () => sync.gate(() => applySync(1)) : () => serially(() => applyAsync(1)), handlers);
    },
  };
}

export type IndexFollower = ReturnType<typeof createIndexFollower>;
