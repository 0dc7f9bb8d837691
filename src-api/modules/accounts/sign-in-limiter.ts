/**
 * Failed sign-ins per account (by e-mail, known or not, so the answer says
 * nothing about who exists) and per client IP in a sliding window. In memory:
 * like the rate limits, per process.
 */
export function createSignInLimiter(options: { maxFailures: number; windowMs: number; enabled: boolean }, now: () => number = Date.now) {
  const failures = new Map<string, number[]>();

  const recent = (key: string, time: number): number[] => {
    const list = (failures.get(key) ?? []).filter((at) => at > time - options.windowMs);
    if (list.length === 0) failures.delete(key);
    else failures.set(key, list);
    return list;
  };

  return {
    /** Seconds until the next attempt is allowed, or 0 when it is allowed now. */
    retryAfterSeconds(keys: string[]): number {
      if (!options.enabled) return 0;
      const time = now();
      let wait = 0;
      for (const key of keys) {
        const list = recent(key, time);
        if (list.length >= options.maxFailures) wait = Math.max(wait, Math.ceil((list[0]! + options.windowMs - time) / 1000));
      }
      return wait;
    },

    recordFailure(keys: string[]): void {
      if (!options.enabled) return;
      const time = now();
      for (const key of keys) failures.set(key, [...recent(key, time), time]);
      if (failures.size > 100_000) for (const key of failures.keys()) recent(key, time); // drop stale keys under a flood
    },

    /** A successful sign-in clears the account's count (not the IP's). */
    recordSuccess(accountKey: string): void {
      failures.delete(accountKey);
    },
  };
}

export type SignInLimiter = ReturnType<typeof createSignInLimiter>;
