import { describe, expect, it } from 'vitest';
import {
  erf,
  erfc,
  evaluateAbTest,
  MIN_IMPRESSIONS_FOR_WINNER,
  normalCdf,
  twoProportionZTest,
  wilsonInterval,
} from '../../src-api/modules/marketing/ab-test-stats';

/**
 * Two-sided tail P(|Z| ≥ z) computed a different way from the code under
 * test: composite Simpson integration of the standard normal density over
 * [z, z + 12], doubled.
 */
function twoSidedTailBySimpson(z: number): number {
  const steps = 20_000;
  const a = Math.abs(z);
  const b = a + 12;
  const h = (b - a) / steps;
  const density = (x: number) => Math.exp(-(x * x) / 2) / Math.sqrt(2 * Math.PI);
  let sum = density(a) + density(b);
  for (let i = 1; i < steps; i++) sum += (i % 2 === 0 ? 2 : 4) * density(a + i * h);
  return 2 * ((h / 3) * sum);
}

/** The textbook pooled two-proportion z statistic, written out independently. */
function pooledZ(x1: number, n1: number, x2: number, n2: number): number {
  const p1 = x1 / n1;
  const p2 = x2 / n2;
  const p = (x1 + x2) / (n1 + n2);
  return (p2 - p1) / Math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2));
}

describe('erf, erfc and the normal CDF', () => {
  it('match published values to better than 1e-7', () => {
    // Abramowitz & Stegun, table 7.1, and standard normal quantiles.
    const erfValues: Array<[number, number]> = [
      [0, 0],
      [0.1, 0.1124629160182849],
      [0.5, 0.5204998778130465],
      [1, 0.8427007929497149],
      [1.5, 0.9661051464753108],
      [2, 0.9953222650189527],
      [3, 0.9999779095030014],
    ];
    for (const [x, value] of erfValues) {
      expect(Math.abs(erf(x) - value)).toBeLessThan(1e-12);
      expect(Math.abs(erf(-x) + value)).toBeLessThan(1e-12);
    }
    expect(erfc(3) / 2.209049699858544e-5).toBeCloseTo(1, 10);
    expect(erfc(5) / 1.5374597944280349e-12).toBeCloseTo(1, 9);
    expect(normalCdf(1.959963984540054)).toBeCloseTo(0.975, 12);
    expect(normalCdf(-1)).toBeCloseTo(0.15865525393145707, 12);
    expect(normalCdf(0)).toBe(0.5);
  });

  it('is continuous where the series hands over to the continued fraction', () => {
    expect(Math.abs(erfc(2.5 - 1e-12) - erfc(2.5))).toBeLessThan(1e-13);
    expect(erfc(2.5)).toBeCloseTo(4.06952017444959e-4, 15);
  });
});

describe('twoProportionZTest', () => {
  it('gives p ≈ 0.0074 for 200/1000 vs 250/1000, matching an independent computation', () => {
    const result = twoProportionZTest({ impressions: 1000, conversions: 200 }, { impressions: 1000, conversions: 250 });
    expect(result).not.toBeNull();
    const z = pooledZ(200, 1000, 250, 1000);
    expect(result!.z).toBeCloseTo(z, 12);
    expect(result!.z).toBeCloseTo(2.6774, 4);
    expect(Math.abs(result!.pValue - twoSidedTailBySimpson(z))).toBeLessThan(1e-9);
    expect(result!.pValue).toBeCloseTo(0.00742, 5);
  });

  it('agrees with the independent computation across many counts, and is symmetric', () => {
    const cases: Array<[number, number, number, number]> = [
      [30, 1000, 45, 1000],
      [5, 60, 12, 70],
      [410, 5000, 390, 5100],
      [1, 31, 9, 33],
      [120, 2400, 180, 2500],
    ];
    for (const [x1, n1, x2, n2] of cases) {
      const forward = twoProportionZTest({ impressions: n1, conversions: x1 }, { impressions: n2, conversions: x2 })!;
      const backward = twoProportionZTest({ impressions: n2, conversions: x2 }, { impressions: n1, conversions: x1 })!;
      expect(Math.abs(forward.pValue - twoSidedTailBySimpson(pooledZ(x1, n1, x2, n2)))).toBeLessThan(1e-9);
      expect(backward.pValue).toBeCloseTo(forward.pValue, 14);
      expect(backward.z).toBeCloseTo(-forward.z, 12);
    }
  });

  it('is undefined without impressions and p = 1 when nothing can differ', () => {
    expect(twoProportionZTest({ impressions: 0, conversions: 0 }, { impressions: 10, conversions: 1 })).toBeNull();
    expect(twoProportionZTest({ impressions: 50, conversions: 0 }, { impressions: 40, conversions: 0 })).toEqual({ z: 0, pValue: 1 });
    expect(twoProportionZTest({ impressions: 5, conversions: 5 }, { impressions: 8, conversions: 8 })).toEqual({ z: 0, pValue: 1 });
  });
});

describe('wilsonInterval', () => {
  it('matches published 95 % Wilson intervals', () => {
    const half = wilsonInterval({ impressions: 10, conversions: 5 });
    expect(half.low).toBeCloseTo(0.2366, 4);
    expect(half.high).toBeCloseTo(0.7634, 4);
    const none = wilsonInterval({ impressions: 10, conversions: 0 });
    expect(none.low).toBe(0);
    expect(none.high).toBeCloseTo(0.2775, 4);
    const large = wilsonInterval({ impressions: 1000, conversions: 200 });
    expect(large.low).toBeCloseTo(0.1764, 4);
    expect(large.high).toBeCloseTo(0.2259, 4);
  });

  it('is the whole of [0, 1] before any impression', () => {
    expect(wilsonInterval({ impressions: 0, conversions: 0 })).toEqual({ low: 0, high: 1 });
  });
});

describe('evaluateAbTest (the winner rule)', () => {
  it('names the higher-rate variant when p < 0.05 and both have enough impressions', () => {
    const result = evaluateAbTest([
      { label: 'A', impressions: 1000, conversions: 200 },
      { label: 'B', impressions: 1000, conversions: 250 },
    ]);
    expect(result.winner).toBe('B');
    expect(result.pValue).toBeLessThan(0.05);
  });

  it('names no winner when the difference is not significant', () => {
    const result = evaluateAbTest([
      { label: 'A', impressions: 1000, conversions: 200 },
      { label: 'B', impressions: 1000, conversions: 210 },
    ]);
    expect(result.pValue).toBeGreaterThan(0.05);
    expect(result.winner).toBeNull();
  });

  it(`names no winner while a variant has fewer than ${MIN_IMPRESSIONS_FOR_WINNER} impressions, however small p is`, () => {
    const result = evaluateAbTest([
      { label: 'A', impressions: 29, conversions: 0 },
      { label: 'B', impressions: 29, conversions: 20 },
    ]);
    expect(result.pValue).toBeLessThan(0.001);
    expect(result.winner).toBeNull();
    const enough = evaluateAbTest([
      { label: 'A', impressions: 30, conversions: 0 },
      { label: 'B', impressions: 30, conversions: 20 },
    ]);
    expect(enough.winner).toBe('B');
  });

  it('reports nothing before both variants have impressions', () => {
    expect(
      evaluateAbTest([
        { label: 'A', impressions: 0, conversions: 0 },
        { label: 'B', impressions: 0, conversions: 0 },
      ]),
    ).toEqual({ z: null, pValue: null, winner: null });
  });
});
