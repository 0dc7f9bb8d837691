// Skeleton: this service is being written (issue 2).
// Dependencies it is given: db, clock, ids, agents, events, audit.
export function createReviewsService(_deps: Record<string, unknown>) {
  return {};
}

export type ReviewsService = ReturnType<typeof createReviewsService>;
