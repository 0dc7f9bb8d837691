import { and, count, gte, lt, sql } from 'drizzle-orm';
import type { Store } from '../../db/store';
import type { Clock } from '../../lib/clock';
import { CHANNELS, TONES } from './marketing.generator';
import { METRICS_WINDOW_DAYS, POST_STATUSES, type MarketingMetrics } from './marketing.schemas';

/** The last `days` UTC dates (YYYY-MM-DD), oldest first, ending with today's. */
function lastUtcDays(now: Date, days: number): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

function countsByKey(rows: Array<{ key: string | null; n: number }>, keys: readonly string[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(keys.map((key) => [key, 0]));
  for (const row of rows) if (row.key !== null) out[row.key] = (out[row.key] ?? 0) + row.n;
  return out;
}

/** Tone and channel distributions and publish counts, all from stored posts. */
export async function marketingMetrics(store: Store, clock: Clock): Promise<MarketingMetrics> {
  const { marketingPosts } = store.t;
  const byTone = await store.rows(
    store.db.select({ key: marketingPosts.tone, n: count() }).from(marketingPosts).groupBy(marketingPosts.tone),
  );
  const byChannel = await store.rows(
    store.db.select({ key: marketingPosts.channel, n: count() }).from(marketingPosts).groupBy(marketingPosts.channel),
  );
  const byStatus = await store.rows(
    store.db.select({ key: marketingPosts.status, n: count() }).from(marketingPosts).groupBy(marketingPosts.status),
  );

  // A post published on a day counts for that day even if it was archived later.
  const days = lastUtcDays(clock.now(), METRICS_WINDOW_DAYS);
  const from = `${days[0]}T00:00:00.000Z`;
  const until = new Date(Date.parse(`${days[days.length - 1]}T00:00:00.000Z`) + 86_400_000).toISOString();
  const publishedDay = sql<string>`substr(${marketingPosts.publishedAt}, 1, 10)`;
  const perDay = await store.rows(
    store.db
      .select({ day: publishedDay, n: count() })
      .from(marketingPosts)
      .where(and(gte(marketingPosts.publishedAt, from), lt(marketingPosts.publishedAt, until)))
      .groupBy(publishedDay),
  );
  const countOfDay = new Map(perDay.map((row) => [row.day, row.n]));

  const byStatusCounts = countsByKey(byStatus, POST_STATUSES);
  return {
    tone_distribution: countsByKey(byTone, TONES),
    channel_distribution: countsByKey(byChannel, CHANNELS),
    publish_counts: {
      total: Object.values(byStatusCounts).reduce((sum, n) => sum + n, 0),
      by_status: byStatusCounts,
      by_day: days.map((date) => ({ date, count: countOfDay.get(date) ?? 0 })),
    },
  };
}
