import { and, gte, inArray, sql } from 'drizzle-orm';
import { inTransaction, type Db } from '../../db/client';
import type { Clock } from '../../lib/clock';
import { keyUsageDaily } from './keys.table';

export interface KeyUsageDay {
  date: string;
  requests: number;
  rate_limited: number;
}

/** Counts are added up in memory and written at most this often (and before every read of them). */
const FLUSH_EVERY_MS = 5_000;

/**
 * Requests per API key per UTC day, for the dashboard's usage chart. Counting
 * must not turn every keyed read into a write, so counts wait in memory and
 * are added to the daily rows in one small transaction every few seconds.
 */
export function createKeyUsage({ db, clock }: { db: Db; clock: Clock }) {
  let pending = new Map<string, { keyId: string; day: string; requests: number; rateLimited: number }>();
  let lastFlush = clock.now().getTime();
  const upsert = db.$client.prepare(
    `INSERT INTO key_usage_daily (key_id, day, requests, rate_limited) VALUES (?, ?, ?, ?)
     ON CONFLICT (key_id, day) DO UPDATE SET requests = requests + excluded.requests, rate_limited = rate_limited + excluded.rate_limited`,
  );

  const flush = (): void => {
    lastFlush = clock.now().getTime();
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    inTransaction(db, () => {
      for (const entry of batch.values()) upsert.run(entry.keyId, entry.day, entry.requests, entry.rateLimited);
    });
  };

  return {
    /** One answered request made with a key; `rateLimited` when the answer was a 429. */
    record(keyId: string, rateLimited: boolean): void {
      const now = clock.now();
      const day = now.toISOString().slice(0, 10);
      const mapKey = `${keyId}\u0000${day}`;
      const entry = pending.get(mapKey) ?? { keyId, day, requests: 0, rateLimited: 0 };
      entry.requests++;
      if (rateLimited) entry.rateLimited++;
      pending.set(mapKey, entry);
      if (now.getTime() - lastFlush >= FLUSH_EVERY_MS) {
        try {
          flush();
        } catch {
          // Busy database: the counts stay in memory for the next flush.
        }
      }
    },

    flush,

    /** The last `days` UTC days (today included), oldest first, zero-filled, summed over `keyIds`. */
    daily(keyIds: string[], days: number): KeyUsageDay[] {
      flush();
      const today = new Date(`${clock.now().toISOString().slice(0, 10)}T00:00:00Z`);
      const dates = Array.from({ length: days }, (_, i) =>
        new Date(today.getTime() - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10),
      );
      const totals = new Map<string, KeyUsageDay>(dates.map((date) => [date, { date, requests: 0, rate_limited: 0 }]));
      if (keyIds.length > 0) {
        const rows = db
          .select({
            day: keyUsageDaily.day,
            requests: sql<number>`sum(${keyUsageDaily.requests})`,
            rateLimited: sql<number>`sum(${keyUsageDaily.rateLimited})`,
          })
          .from(keyUsageDaily)
          .where(and(inArray(keyUsageDaily.keyId, keyIds), gte(keyUsageDaily.day, dates[0]!)))
          .groupBy(keyUsageDaily.day)
          .all();
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
