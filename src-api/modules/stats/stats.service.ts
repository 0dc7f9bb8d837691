// Skeleton: this service is being written (issue 2).
// Dependencies it is given: db, clock, ids.
export function createStatsService(_deps: Record<string, unknown>) {
  return {};
}

export type StatsService = ReturnType<typeof createStatsService>;
