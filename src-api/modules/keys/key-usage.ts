import { and, gte, inArray, sql } from 'drizzle-orm';
import type { Store } from '../../db/store';
import type { Clock } from '../../lib/clock';

export interface KeyUsageDay {
  date: string;
  requests: number;
  rate_limited: number;
}

/** Counts are added up in memory and written at most this often (and before every read of them). */
const FLUSH_EVERY_MS = 5_000;
/** Rows per upsert: on PostgreSQL one statement of 4 parameters a row (its bound is 65,535). */
const ROWS_PER_STATEMENT = 1_000;

interface PendingCount {
  keyId: string;
  day: string;
  requests: number;
  rateLimited: number;
}

/**
 * Requests per API key per UTC day, for the dashboard's usage chart. Counting
 * must not turn every keyed read into a write, so counts wait in memory (the hot
 * path: `record` touches no database) and are added to the daily rows every few
 * seconds through the data-access seam, by an upsert (ON CONFLICT … DO UPDATE with
 * `excluded`) whose increments are atomic, so processes flushing at once lose nothing.
 */
/**
 * SQLite: one prepared upsert per row, in one store transaction whose body does not
 * await, so it holds the connection's lock for one synchronous stretch.
 */
function sqliteUpsert(store: Store): (rows: PendingCount[]) => Promise<unknown> {
  const statement = store.db.$client.prepare(
    `INSERT INTO key_usage_daily (key_id, day, requests, rate_limited) VALUES (?, ?, ?, ?)
     ON CONFLICT (key_id, day) DO UPDATE SET requests = requests + excluded.requests, rate_limited = rate_limited + excluded.rate_limited`,
  );
  return (rows) =>
    store.transaction(async () => {
      for (const row of rows) statement.run(row.keyId, row.day, row.requests, row.rateLimited);
    });
}

export function createKeyUsage({ store, clock }: { store: Store; clock: Clock }) {
  let pending = new Map<string, PendingCount>();
  let lastFlush = clock.now().getTime();
  const mapKey = (keyId: string, day: string) => `${keyId}\u0000${day}`;

  const add = (keyId: string, day: string, requests: number, rateLimited: number): void => {
    const key = mapKey(keyId, day);
    const entry = pending.get(key) ?? { keyId, day, requests: 0, rateLimited: 0 };
    entry.requests += requests;
    entry.rateLimited += rateLimited;
    pending.set(key, entry);
  };

  /**
   * Adds `rows` to the daily rows, all of them or none. Written per dialect: drizzle
   * takes about 10 µs a row to build a multi-row insert, several times what SQLite
   * spends running a prepared statement per row (bench/ported-reads-ab.ts), while on
   * PostgreSQL one statement is one round trip instead of one per row.
   */
  const upsert: (rows: PendingCount[]) => Promise<unknown> =
    store.dialect === 'sqlite'
      ? sqliteUpsert(store)
      : (rows) => {
          const { keyUsageDaily } = store.t;
          return store.run(
            store.db
              .insert(keyUsageDaily)
              .values(rows)
              .onConflictDoUpdate({
                target: [keyUsageDaily.keyId, keyUsageDaily.day],
                set: {
                  requests: sql`${keyUsageDaily.requests} + excluded.requests`,
                  rateLimited: sql`${keyUsageDaily.rateLimited} + excluded.rate_limited`,
                },
              }),
          );
        };

  /**
   * Writes the counts waiting in memory; those a failed upsert did not write (a busy
   * database) go back to memory for the next flush.
   */
  const flush = async (): Promise<void> => {
    lastFlush = clock.now().getTime();
    if (pending.size === 0) return;
    const batch = [...pending.values()];
    pending = new Map();
    for (let start = 0; start < batch.length; start += ROWS_PER_STATEMENT) {
      try {
        await upsert(batch.slice(start, start + ROWS_PER_STATEMENT));
      } catch (error) {
        for (const entry of batch.slice(start)) add(entry.keyId, entry.day, entry.requests, entry.rateLimited);
        throw error;
      }
    }
  };

  return {
    /** One answered request made with a key; `rateLimited` when the answer was a 429. */
    record(keyId: string, rateLimited: boolean): void {
      const now = clock.now();
      add(keyId, now.toISOString().slice(0, 10), 1, rateLimited ? 1 : 0);
      if (now.getTime() - lastFlush >= FLUSH_EVERY_MS)
        flush().catch(() => {
          // Busy database: the counts are back in memory for the next flush.
        });
    },

    flush,

    /** The last `days` UTC days (today included), oldest first, zero-filled, summed over `keyIds`. */
    async daily(keyIds: string[], days: number): Promise<KeyUsageDay[]> {
      await flush();
      const today = new Date(`${clock.now().toISOString().slice(0, 10)}T00:00:00Z`);
      const dates = Array.from({ length: days }, (_, i) =>
        new Date(today.getTime() - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10),
      );
      const totals = new Map<string, KeyUsageDay>(dates.map((date) => [date, { date, requests: 0, rate_limited: 0 }]));
      if (keyIds.length > 0) {
        const { keyUsageDaily } = store.t;
        const rows = await store.rows(
          store.db
            .select({
              day: keyUsageDaily.day,
              // PostgreSQL's sum() of integers is a bigint, which node-postgres gives as a string.
              requests: sql<number>`sum(${keyUsageDaily.requests})`.mapWith(Number),
              rateLimited: sql<number>`sum(${keyUsageDaily.rateLimited})`.mapWith(Number),
            })
            .from(keyUsageDaily)
            .where(and(inArray(keyUsageDaily.keyId, keyIds), gte(keyUsageDaily.day, dates[0]!)))
            .groupBy(keyUsageDaily.day),
        );
        for (const row of rows) {
          const total = totals.get(row.day);
          if (total) Object.assign(total, { requests: row.requests, rate_limited: row.rateLimited });
        }
      }
      return [...totals.values()];
    },
  };
}

export type KeyUsage = ReturnType<typeof createKeyUsage>;
