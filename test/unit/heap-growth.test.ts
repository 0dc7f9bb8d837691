import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { capHeapGrowth, SERVER_HEAP_GROWING_PERCENT } from '../../src-api/lib/heap-growth';

describe('capHeapGrowth', () => {
  it("sets V8's heap growing percent when the process was started without one", () => {
    const set: string[] = [];
    expect(capHeapGrowth(undefined, { execArgv: ['--enable-source-maps'], nodeOptions: '', setFlags: (flags) => set.push(flags) })).toBe(true);
    expect(set).toEqual([`--heap-growing-percent=${SERVER_HEAP_GROWING_PERCENT}`]);
  });

  it("leaves the operator's own value, from node's command line or NODE_OPTIONS", () => {
    const set: string[] = [];
    const setFlags = (flags: string) => set.push(flags);
    expect(capHeapGrowth(100, { execArgv: ['--heap-growing-percent=300'], nodeOptions: '', setFlags })).toBe(false);
    expect(capHeapGrowth(100, { execArgv: [], nodeOptions: '--max-old-space-size=4096 --heap_growing_percent=50', setFlags })).toBe(false);
    expect(set).toEqual([]);
  });

  it('takes effect in a running process: the next full collections set their limits with the capped factor', () => {
    // What capHeapGrowth relies on: V8 reads the flag at every full collection, also when set after start-up.
    const script = `
      require('node:v8').setFlagsFromString('--heap-growing-percent=${SERVER_HEAP_GROWING_PERCENT}');
      let keep = [];
      for (let i = 0; i < 4e6; i++) { keep.push({ i }); if (keep.length > 5e5) keep = []; }
    `;
    const run = spawnSync(process.execPath, ['--trace-gc-verbose', '-e', script], { encoding: 'utf8' });
    const factors = [...run.stdout.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)/g)].map((match) => Number(match[1]));
    expect(factors.length).toBeGreaterThan(0);
    expect(new Set(factors)).toEqual(new Set([1 + SERVER_HEAP_GROWING_PERCENT / 100]));
  });
});
