import { and, count, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Store } from '../../db/store';
import type { Clock } from '../../lib/clock';
import { AGENT_TYPES } from '../agents/agents.schemas';
import { ACTIVITY_WINDOW_DAYS, type DirectoryStats, type ModeratorOverview } from './stats.schemas';

export interface StatsServiceDeps {
  /** The data-access seam (db/store.ts): the queries below run on SQLite and PostgreSQL alike. */
  store: Store;
  clock: Clock;
  /** The change cursor: every input of the public figures (agents listed, verified, typed; reviews through the ratings) moves it. */
  agents: { latestChangeSeqAsync(): Promise<number> };
  /** Backstop: the longest a cached answer is kept even when the cursor did not move (`config.statsCacheTtlMs`). */
  cacheTtlMs: number;
}

const DAY_MS = 86_400_000;

/** The last `days` UTC dates (YYYY-MM-DD), oldest first, ending with today's; and the half-open time range they cover. */
function utcDayWindow(now: Date, days: number): { dates: string[]; from: string; until: string } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const dates = Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10));
  return { dates, from: new Date(today - (days - 1) * DAY_MS).toISOString(), until: new Date(today + DAY_MS).toISOString() };
}

/**
 * Directory statistics, computed with SQL from listed agents and visible reviews.
 *
 * The public figures are cached by the agents' change cursor (max change_seq): agent writes move it,
 * and so do review writes and moderation, since they update the agent's rating aggregate in the same
 * transaction; writes by other processes (cli import) move it too. So a cached answer is never stale
 * while the scans (several full passes over agents and reviews) run once per change rather than per
 * request. The TTL is only a backstop for writes that bypass the services.
 */
export function createStatsService({ store, clock, agents: agentsService, cacheTtlMs }: StatsServiceDeps) {
  const { agents, reviews, submissions, claims } = store.t;
  const listed = eq(agents.listed, true);
  let cached: { seq: number; at: number; stats: DirectoryStats } | undefined;

  /** Listed agents per category, most first: json_each is SQLite's, json_array_elements_text PostgreSQL's, so written twice. */
  const categoryCounts = (): Promise<Array<{ category: string; n: number | string }>> =>
    store.all(
      store.dialect === 'sqlite'
        ? sql`SELECT category.value AS category, count(*) AS n
            FROM ${agents}, json_each(${agents.categories}) AS category
            WHERE ${listed}
            GROUP BY category.value
            ORDER BY n DESC, category.value ASC`
        : // COLLATE "C": the byte order SQLite sorts text in, whatever the database's locale.
          sql`SELECT category AS category, count(*) AS n
            FROM ${agents}, json_array_elements_text(${agents.categories}) AS category
            WHERE ${listed}
            GROUP BY category
            ORDER BY n DESC, category COLLATE "C" ASC`,
    );

  const computeDirectory = async (): Promise<DirectoryStats> => {
    const totals = (await store.first(
      store.db
        .select({
          total: count(),
          verified: sql<number>`coalesce(sum(CASE WHEN ${agents.verified} THEN 1 ELSE 0 END), 0)`.mapWith(Number),
        })
        .from(agents)
        .where(listed),
    )) ?? { total: 0, verified: 0 };

    const byType: Record<string, number> = Object.fromEntries(AGENT_TYPES.map((type) => [type, 0]));
    for (const row of await store.rows(
      store.db.select({ type: agents.type, n: count() }).from(agents).where(listed).groupBy(agents.type),
    )) {
      byType[row.type] = (byType[row.type] ?? 0) + row.n;
    }

    const categoryRows = await categoryCounts();

    const reviewTotals = await store.first(
      store.db
        .select({ n: count(), average: sql<number | null>`avg(${reviews.rating})`.mapWith(Number) })
        .from(reviews)
        .innerJoin(agents, eq(agents.id, reviews.agentId))
        .where(and(eq(reviews.hidden, false), listed)),
    );

    return {
      total_agents: totals.total,
      verified_agents: totals.verified,
      types: [...AGENT_TYPES],
      by_type: byType,
      by_category: Object.fromEntries(categoryRows.map((row) => [row.category, Number(row.n)])),
      reviews: {
        count: reviewTotals?.n ?? 0,
        average_rating:
          reviewTotals?.average === null || reviewTotals?.average === undefined ? null : Math.round(reviewTotals.average * 100) / 100,
      },
    };
  };

  /** Rows of `table` per UTC day of `column` (an ISO timestamp) in [from, until). */
  const perDay = async (
    table: SQLiteTable,
    column: AnySQLiteColumn,
    from: string,
    until: string,
    extra?: SQL,
  ): Promise<Map<string, number>> => {
    const day = sql<string>`substr(${column}, 1, 10)`;
    const rows = await store.rows(
      store.db
        .select({ day, n: count() })
        .from(table)
        .where(and(gte(column, from), lt(column, until), extra))
        .groupBy(day),
    );
    return new Map(rows.map((row) => [row.day, row.n]));
  };

  const pending = async (table: typeof submissions | typeof claims): Promise<number> =>
    (await store.first(store.db.select({ n: count() }).from(table).where(eq(table.status, 'pending'))))?.n ?? 0;

  return {
    async directory(): Promise<DirectoryStats> {
      const seq = await agentsService.latestChangeSeqAsync();
      const now = clock.now().getTime();
      if (!cached || cached.seq !== seq || now - cached.at >= cacheTtlMs) cached = { seq, at: now, stats: await computeDirectory() };
      return cached.stats;
    },

    /** Pending queues and per-day activity (new submissions, visible reviews, new agents) for the console. */
    async overview(): Promise<ModeratorOverview> {
      const { dates, from, until } = utcDayWindow(clock.now(), ACTIVITY_WINDOW_DAYS);
      const submissionsPerDay = await perDay(submissions, submissions.createdAt, from, until);
      const reviewsPerDay = await perDay(reviews, reviews.createdAt, from, until, eq(reviews.hidden, false));
      const agentsPerDay = await perDay(agents, agents.createdAt, from, until);

      return {
        pending_submissions: await pending(submissions),
        pending_claims: await pending(claims),
        activity: dates.map((date) => ({
          date,
          submissions: submissionsPerDay.get(date) ?? 0,
          reviews: reviewsPerDay.get(date) ?? 0,
          agents: agentsPerDay.get(date) ?? 0,
        })),
      };
    },
  };
}

export type StatsService = ReturnType<typeof createStatsService>;
