// Skeleton: this service is being written (issue 2).
// Dependencies it is given: db, clock, ids, agents, audit, allowPrivateUrls.
export function createClaimsService(_deps: Record<string, unknown>) {
  return {};
}

export type ClaimsService = ReturnType<typeof createClaimsService>;
