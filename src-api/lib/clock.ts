/** The source of "now", passed to services so tests and demo data can control time. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** ISO 8601 UTC with a trailing Z, the one time format of the API. */
export function isoNow(clock: Clock): string {
  return clock.now().toISOString();
}
