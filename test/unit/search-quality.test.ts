import { describe, expect, it } from 'vitest';
import { evaluate } from '../../bench/quality/evaluate';

describe('search quality on the judged query set (bench/quality)', () => {
  it('finds a relevant agent in the top 5 for ≥ 95 % of queries, with MRR@5 ≥ 0.8', () => {
    const report = evaluate();
    expect(report.queries).toBeGreaterThanOrEqual(40);
    expect(report.misses, 'queries without a relevant agent in the top 5').toEqual(
      report.misses.slice(0, Math.floor(report.queries * 0.05)),
    );
    expect(report.hitAt5).toBeGreaterThanOrEqual(0.95);
    expect(report.mrrAt5).toBeGreaterThanOrEqual(0.8);
  });
});
