/**
 * The trust score (0–100) is computed, never typed in. Its signals and
 * weights are documented here and in the README:
 *
 * | signal        | points | how                                                        |
 * |---------------|--------|------------------------------------------------------------|
 * | verification  | 35     | the owner proved control of the source (claim verified)    |
 * | reviews       | 30     | Bayesian mean rating (prior: 5 reviews of 3.0), scaled by  |
 * |               |        | confidence min(1, count / 20)                              |
 * | completeness  | 20     | description ≥ 80 chars (6), author (4), capabilities (4),  |
 * |               |        | categories (3), a specific type (3)                        |
 * | age           | 15     | linear over the first 365 days since listing               |
 *
 * The age signal moves with time, so scores are refreshed on start-up and daily.
 */
export interface TrustSignals {
  verified: boolean;
  ratingCount: number;
  ratingSum: number;
  description: string;
  author: string;
  capabilities: string[];
  categories: string[];
  type: string;
  createdAt: string;
}

/** The Bayesian prior of ratings: 5 reviews of 3.0. Also orders `sort=rating` (see `BAYESIAN_RATING_SQL`). */
export const PRIOR_COUNT = 5;
export const PRIOR_MEAN = 3;

/**
 * The same Bayesian mean in SQL over the agents row, NULL for an unrated agent: one 5-star review
 * (5 + 15) / 6 = 3.33 does not outrank fifty 4.8s (255 / 55 = 4.64).
 */
function bayesianRatingSql(dialect: 'sqlite' | 'postgres'): string {
  // SQLite's REAL is a double, PostgreSQL's a 4-byte float (double precision is its double).
  const double = dialect === 'sqlite' ? 'REAL' : 'double precision';
  return `CASE WHEN "rating_count" = 0 THEN NULL ELSE (CAST("rating_sum" AS ${double}) + ${PRIOR_COUNT * PRIOR_MEAN}) / ("rating_count" + ${PRIOR_COUNT}) END`;
}

/**
 * The key `sort=rating` orders by, in `direction`, ties by id: the Bayesian mean, unrated agents last
 * in either direction (a rating is 1–5, so unrated counts as 0 when sorting down and 6 when sorting up).
 * The agents table indexes both keys (agents_list_rating_desc_idx / _asc_idx, written by this very
 * function), so a rating page is an index walk; the SQL text must stay exactly as the index has it.
 */
export function ratingSortSql(dialect: 'sqlite' | 'postgres', direction: 'asc' | 'desc'): string {
  return `coalesce(${bayesianRatingSql(dialect)}, ${direction === 'asc' ? 6 : 0})`;
}
const DAY_MS = 86_400_000;

export function computeTrustScore(signals: TrustSignals, now: Date): number {
  const verification = signals.verified ? 35 : 0;

  const bayesianMean = (signals.ratingSum + PRIOR_COUNT * PRIOR_MEAN) / (signals.ratingCount + PRIOR_COUNT);
  const confidence = Math.min(1, signals.ratingCount / 20);
  const reviews = 30 * ((bayesianMean - 1) / 4) * confidence;

  const completeness =
    (signals.description.trim().length >= 80 ? 6 : 0) +
    (signals.author.trim() ? 4 : 0) +
    (signals.capabilities.length > 0 ? 4 : 0) +
    (signals.categories.length > 0 ? 3 : 0) +
    (signals.type !== 'other' ? 3 : 0);

  const ageDays = Math.max(0, (now.getTime() - Date.parse(signals.createdAt)) / DAY_MS);
  const age = 15 * Math.min(1, ageDays / 365);

  return Math.round((verification + reviews + completeness + age) * 10) / 10;
}
