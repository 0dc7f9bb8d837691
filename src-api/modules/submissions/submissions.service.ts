// Skeleton: this service is being written (issue 2).
// Dependencies it is given: db, clock, ids, agents, audit.
export function createSubmissionsService(_deps: Record<string, unknown>) {
  return {};
}

export type SubmissionsService = ReturnType<typeof createSubmissionsService>;
