import { describe, expect, it } from 'vitest';
import { createBackgroundWork } from '../../src-api/lib/background-work';

describe('background work', () => {
  it('is idle when every job begun has ended, each end counting once', () => {
    const work = createBackgroundWork();
    expect(work.idle).toBe(true);
    const endFirst = work.begin();
    const endSecond = work.begin();
    expect(work.idle).toBe(false);
    endFirst();
    endFirst();
    expect(work.idle).toBe(false);
    endSecond();
    expect(work.idle).toBe(true);
  });
});
