import { asc, sql } from 'drizzle-orm';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/client';
import { byteOrder } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import type { Clock } from '../../lib/clock';
import { gatedRead } from './agent-rows';
import type { AgentWrites } from './agent-writes';
import { computeTrustScore } from './trust-score';

/** What the trust score is computed from, and the score stored now. */
type AgentTrustSignals = Parameters<typeof computeTrustScore>[0] & { id: string; stored: number };
type RawTrustSignals = [string, number, number, number, string, string, string, string, string, string, number];

/** Agents per trust-refresh transaction. */
const TRUST_REFRESH_SLICE = 2_000;

/**
 * The trust score's age signal moves with time: this brings every stored score up to date, a slice
 * of agents per transaction (on start-up and daily, in the background: server.ts).
 */
export function createTrustRefresh({ db, store, clock, writes }: { db: Db | undefined; store: Store; clock: Clock; writes: AgentWrites }) {
  /**
   * What the trust score reads of each agent with an id after `afterId`, in id (byte) order. SQLite:
   * raw, through a statement prepared once, without parsing the JSON arrays (only their emptiness
   * counts), so that 100,000 agents take a fraction of a second. PostgreSQL: the slice's rows locked.
   */
  let trustSignalsStatement: Statement | undefined;
  const trustSignalsAfter = async (afterId: string, limit: number): Promise<AgentTrustSignals[]> => {
    if (store.dialect === 'sqlite') {
      const statement = (trustSignalsStatement ??= db!.$client
        .prepare(
          'SELECT id, verified, rating_count, rating_sum, description, author, capabilities, categories, type, created_at, trust_score FROM agents WHERE id > ? ORDER BY id LIMIT ?',
        )
        .raw());
      const rows = await gatedRead(store, () => statement.all(afterId, limit) as RawTrustSignals[]);
      return rows.map(([id, verified, ratingCount, ratingSum, description, author, capabilities, categories, type, createdAt, stored]) => ({
        id,
        verified: verified === 1,
        ratingCount,
        ratingSum,
        description,
        author,
        capabilities: capabilities === '[]' ? [] : [''],
        categories: categories === '[]' ? [] : [''],
        type,
        createdAt,
        stored,
      }));
    }
    const { agents } = store.t;
    const rows = await store.rows(
      store.forUpdate(
        store.db
          .select({
            id: agents.id,
            verified: agents.verified,
            ratingCount: agents.ratingCount,
            ratingSum: agents.ratingSum,
            description: agents.description,
            author: agents.author,
            capabilities: agents.capabilities,
            categories: agents.categories,
            type: agents.type,
            createdAt: agents.createdAt,
            stored: agents.trustScore,
          })
          .from(agents)
          .where(sql`${byteOrder(store, agents.id)} > ${afterId}`)
          .orderBy(asc(byteOrder(store, agents.id)))
          .limit(limit),
      ),
    );
    return rows;
  };


  const refresh = {
    /**
     * Recomputes the trust score (its age part moves daily) of up to `limit` agents with an id after
     * `afterId` (byte order), in one transaction with the slice's rows locked (PostgreSQL), so a score
     * is never written from signals a concurrent write has changed; a changed score is a change like
     * any other (change_seq). Returns how many changed and the last id seen, or undefined once past the last agent.
     */
    refreshTrustScoresSlice(afterId: string, limit = TRUST_REFRESH_SLICE): Promise<{ changed: number; lastId: string | undefined }> {
      return store.transaction(async () => {
        const slice = await trustSignalsAfter(afterId, limit);
        const now = clock.now();
        const changed: { id: string; score: number }[] = [];
        for (const signals of slice) {
          const score = computeTrustScore(signals, now);
          if (score !== signals.stored) changed.push({ id: signals.id, score });
        }
        await writes.setTrustScores(changed);
        return { changed: changed.length, lastId: slice.length < limit ? undefined : slice.at(-1)!.id };
      });
    },

    /**
     * Every agent's trust score, a slice (its own transaction) per event-loop turn, so requests are
     * served in between (about 7 ms a slice at 2,000 agents on SQLite); returns how many changed.
     * `stop.stopped` set to true ends it after the slice in progress. In the background through
     * `store.runExclusive('trust-refresh', …)` (server.ts): one process at a time on PostgreSQL.
     */
    async refreshTrustScores(stop: { stopped: boolean } = { stopped: false }): Promise<number> {
      let changed = 0;
      for (let afterId: string | undefined = ''; afterId !== undefined && !stop.stopped; ) {
        const slice = await refresh.refreshTrustScoresSlice(afterId);
        changed += slice.changed;
        afterId = slice.lastId;
        if (afterId !== undefined) await new Promise((resolve) => setImmediate(resolve));
      }
      return changed;
    },
  };
  return refresh;
}
