import { describe, expect, it } from 'vitest';
import { createBackgroundWork } from '../../src-api/lib/background-work';

describe('background work', () => {
  it('is idle when every job begun has ended, each end counting once', () => {
    const work = createBackgroundWork();
    expect(work.running).toBe(0);
    const endFirst = work.begin();
    const endSecond = work.begin();
    expect(work.running).toBeGreaterThan(0);
    endFirst();
    endFirst();
    expect(work.running).toBeGreaterThan(0);
    endSecond();
    expect(work.running).toBe(0);
  });
});
