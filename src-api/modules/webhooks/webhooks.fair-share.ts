import type { Config } from '../../config';

/** What the fair share looks at for one active endpoint: its in-flight deliveries (every process) and whether it has work due. */
export interface EndpointLoad {
  held: number;
  hasWork: boolean;
}

/**
 * The one rule for who may take a free slot, given every active endpoint's load
 * and this process's free slots. It returns
 * - `share`: the most one endpoint may hold while several have work, an even
 *   share of this process's slots (rounded up, so no slot idles for rounding),
 *   never more than `perEndpointConcurrency`. With a fixed cap alone, two slow
 *   endpoints at 4 each took all 8 slots and a third, fast one waited behind
 *   them (the soak saw 8,735 deliveries still queued after 10 minutes);
 * - `limit`: how many of the free slots may be dealt. While some active
 *   endpoint has nothing due and nothing in flight, one stays free for it: two
 *   slow endpoints sharing the slots between themselves would otherwise fill
 *   all of them in the moment a fast one is between events, and its next
 *   delivery would wait up to a whole timeout for a slot (CI saw it on
 *   PostgreSQL, where events come in further apart). With one slot in all,
 *   nothing is kept: the reserve would be everything.
 */
export function slotRule(
  settings: Pick<Config['webhooks'], 'concurrency' | 'perEndpointConcurrency'>,
  endpoints: readonly EndpointLoad[],
  free: number,
): { share: number; limit: number } {
  const busy = endpoints.filter(({ held, hasWork }) => held > 0 || hasWork).length;
  const share =
    busy <= 1
      ? settings.perEndpointConcurrency // alone, nobody waits for its slots
      : Math.min(settings.perEndpointConcurrency, Math.ceil(settings.concurrency / busy));
  const someoneIdle = busy < endpoints.length && settings.concurrency > 1;
  return { share, limit: Math.max(0, someoneIdle ? free - 1 : free) };
}

/**
 * Deals free slots max-min: each goes to the endpoint with work that holds the
 * fewest (ties to the earlier in `endpoints`, which the caller rotates), none
 * past `share`, at most `limit` in all. A fast endpoint, whose slots come back in
 * milliseconds, then wins them back before slow or failing endpoints with long
 * backlogs can pile onto them. Returns, per endpoint in the given order, how
 * many of its due deliveries to take.
 */
export function dealSlots(endpoints: ReadonlyArray<{ held: number; due: number }>, share: number, limit: number): number[] {
  const taken = endpoints.map(() => 0);
  for (let dealt = 0; dealt < limit; dealt++) {
    let pick = -1;
    for (let i = 0; i < endpoints.length; i++) {
      const { held, due } = endpoints[i]!;
      if (taken[i]! >= due || held + taken[i]! >= share) continue;
      if (pick < 0 || held + taken[i]! < endpoints[pick]!.held + taken[pick]!) pick = i;
    }
    if (pick < 0) break;
    taken[pick]!++;
  }
  return taken;
}
