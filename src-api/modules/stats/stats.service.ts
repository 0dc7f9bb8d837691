import { and, count, eq, sql, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../../db/client';
import type { Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { AGENT_TYPES } from '../agents/agents.schemas';
import type { AgentsService } from '../agents/agents.service';
import { agents } from '../agents/agents.table';
import { claims } from '../claims/claims.table';
import { reviews } from '../reviews/reviews.table';
import { submissions } from '../submissions/submissions.table';
import { ACTIVITY_WINDOW_DAYS, type DirectoryStats, type ModeratorOverview } from './stats.schemas';

export interface StatsServiceDeps {
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  /** The change cursor: every input of the public figures (agents listed, verified, typed; reviews through the ratings) moves it. */
  agents: Pick<AgentsService, 'latestChangeSeq'>;
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
export function createStatsService({ db, clock, agents: agentsService, cacheTtlMs }: StatsServiceDeps) {
  const listed = eq(agents.listed, true);
  let cached: { seq: number; at: number; stats: DirectoryStats } | undefined;

  const computeDirectory = (): DirectoryStats => {
    const totals = db
      .select({
        total: count(),
        verified: sql<number>`coalesce(sum(CASE WHEN ${agents.verified} THEN 1 ELSE 0 END), 0)`,
      })
      .from(agents)
      .where(listed)
      .get() ?? { total: 0, verified: 0 };

    const byType: Record<string, number> = Object.fromEntries(AGENT_TYPES.map((type) => [type, 0]));
    for (const row of db.select({ type: agents.type, n: count() }).from(agents).where(listed).groupBy(agents.type).all()) {
      byType[row.type] = (byType[row.type] ?? 0) + row.n;
    }

    const categoryRows = db.all<{ category: string; n: number }>(sql`
        SELECT category.value AS category, count(*) AS n
        FROM ${agents}, json_each(${agents.categories}) AS category
        WHERE ${agents.listed} = 1
        GROUP BY category.value
        ORDER BY n DESC, category.value ASC`);

    const reviewTotals = db
      .select({ n: count(), average: sql<number | null>`avg(${reviews.rating})` })
      .from(reviews)
      .innerJoin(agents, eq(agents.id, reviews.agentId))
      .where(and(eq(reviews.hidden, false), listed))
      .get();

    return {
      total_agents: totals.total,
      verified_agents: totals.verified,
      types: [...AGENT_TYPES],
      by_type: byType,
      by_category: Object.fromEntries(categoryRows.map((row) => [row.category, row.n])),
      reviews: {
        count: reviewTotals?.n ?? 0,
        average_rating:
          reviewTotals?.average === null || reviewTotals?.average === undefined ? null : Math.round(reviewTotals.average * 100) / 100,
      },
    };
  };

  return {
    directory(): DirectoryStats {
      const seq = agentsService.latestChangeSeq();
      const now = clock.now().getTime();
      if (!cached || cached.seq !== seq || now - cached.at >= cacheTtlMs) cached = { seq, at: now, stats: computeDirectory() };
      return cached.stats;
    },

    /** Pending queues and per-day activity (new submissions, visible reviews, new agents) for the console. */
    overview(): ModeratorOverview {
      const pendingSubmissions = db.select({ n: count() }).from(submissions).where(eq(submissions.status, 'pending')).get()?.n ?? 0;
      const pendingClaims = db.select({ n: count() }).from(claims).where(eq(claims.status, 'pending')).get()?.n ?? 0;

      const { dates, from, until } = utcDayWindow(clock.now(), ACTIVITY_WINDOW_DAYS);
      const perDay = (table: SQLiteTable, column: AnySQLiteColumn, extra: SQL = sql`1 = 1`): Map<string, number> => {
        const rows = db.all<{ day: string; n: number }>(sql`
          SELECT substr(${column}, 1, 10) AS day, count(*) AS n
          FROM ${table}
          WHERE ${column} >= ${from} AND ${column} < ${until} AND ${extra}
          GROUP BY day`);
        return new Map(rows.map((row) => [row.day, row.n]));
      };
      const submissionsPerDay = perDay(submissions, submissions.createdAt);
      const reviewsPerDay = perDay(reviews, reviews.createdAt, sql`${reviews.hidden} = 0`);
      const agentsPerDay = perDay(agents, agents.createdAt);

      return {
        pending_submissions: pendingSubmissions,
        pending_claims: pendingClaims,
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
