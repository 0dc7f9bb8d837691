// Skeleton: this service is being written (issue 2).
// Dependencies it is given: db, clock, ids, events.
export function createMarketingService(_deps: Record<string, unknown>) {
  return {};
}

export type MarketingService = ReturnType<typeof createMarketingService>;
