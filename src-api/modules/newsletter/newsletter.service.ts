// Skeleton: this service is being written (issue 2).
// Dependencies it is given: db, clock, ids.
export function createNewsletterService(_deps: Record<string, unknown>) {
  return {};
}

export type NewsletterService = ReturnType<typeof createNewsletterService>;
