import { describe, expect, it } from 'vitest';
import { dealSlots, slotRule } from '../../src-api/modules/webhooks/webhooks.fair-share';

const defaults = { concurrency: 8, perEndpointConcurrency: 4 };

describe('slotRule', () => {
  it('gives one endpoint with work its whole cap, and nothing is kept when no one else is active', () => {
    expect(slotRule(defaults, [{ held: 0, hasWork: true }], 8)).toEqual({ share: 4, limit: 8 });
  });

  it('shares the slots evenly, rounded up, among the endpoints with work', () => {
    const three = [
      { held: 2, hasWork: true },
      { held: 0, hasWork: true },
      { held: 1, hasWork: false },
    ];
    expect(slotRule(defaults, three, 5)).toEqual({ share: 3, limit: 5 });
  });

  it('keeps one free slot while an active endpoint has nothing due and nothing in flight', () => {
    const twoSlowOneIdle = [
      { held: 3, hasWork: true },
      { held: 3, hasWork: true },
      { held: 0, hasWork: false },
    ];
    expect(slotRule(defaults, twoSlowOneIdle, 2)).toEqual({ share: 4, limit: 1 });
    expect(slotRule(defaults, twoSlowOneIdle, 0)).toEqual({ share: 4, limit: 0 });
  });

  it('keeps nothing back with one slot in all: the reserve would be every slot', () => {
    const settings = { concurrency: 1, perEndpointConcurrency: 1 };
    expect(
      slotRule(
        settings,
        [
          { held: 0, hasWork: true },
          { held: 0, hasWork: false },
        ],
        1,
      ),
    ).toEqual({ share: 1, limit: 1 });
  });
});

describe('dealSlots', () => {
  it('gives each slot to the endpoint holding the fewest, ties to the earlier one', () => {
    expect(
      dealSlots(
        [
          { held: 2, due: 5 },
          { held: 0, due: 5 },
          { held: 0, due: 5 },
        ],
        3,
        4,
      ),
    ).toEqual([0, 2, 2]);
    expect(
      dealSlots(
        [
          { held: 0, due: 5 },
          { held: 0, due: 5 },
        ],
        4,
        3,
      ),
    ).toEqual([2, 1]);
  });

  it('never past the share, never more than is due, never more than the limit', () => {
    expect(
      dealSlots(
        [
          { held: 3, due: 9 },
          { held: 0, due: 1 },
        ],
        4,
        8,
      ),
    ).toEqual([1, 1]);
    expect(dealSlots([{ held: 0, due: 9 }], 4, 2)).toEqual([2]);
    expect(dealSlots([{ held: 4, due: 9 }], 4, 8)).toEqual([0]);
  });

  it('on random loads, deals as many as it may and keeps the endpoints level (max-min)', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 500; round++) {
      const endpoints = Array.from({ length: 1 + random(5) }, () => ({ held: random(5), due: random(6) }));
      const share = 1 + random(4);
      const limit = random(9);
      const taken = dealSlots(endpoints, share, limit);
      const total = taken.reduce((sum, n) => sum + n, 0);
      const capacity = endpoints.reduce((sum, { held, due }) => sum + Math.max(0, Math.min(due, share - held)), 0);
      // As many as the limit allows and the endpoints can take, each within its due and its share...
      expect(total).toBe(Math.min(limit, capacity));
      taken.forEach((n, i) => expect(n).toBeLessThanOrEqual(Math.max(0, Math.min(endpoints[i]!.due, share - endpoints[i]!.held))));
      // ...and max-min: no endpoint that could have taken one more ends below one that took its last.
      for (let i = 0; i < endpoints.length; i++) {
        const canTakeMore = taken[i]! < endpoints[i]!.due && endpoints[i]!.held + taken[i]! < share;
        if (!canTakeMore) continue;
        for (let j = 0; j < endpoints.length; j++) {
          if (taken[j]! > 0) expect(endpoints[i]!.held + taken[i]!).toBeGreaterThanOrEqual(endpoints[j]!.held + taken[j]! - 1);
        }
      }
    }
  });
});
