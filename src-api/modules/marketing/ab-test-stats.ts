/**
 * The statistics behind A/B test results: a pooled two-proportion z-test
 * (two-sided) and Wilson score intervals, from stored impressions and
 * conversions. Plain functions, no dependencies, so they are easy to check.
 */

export interface VariantCounts {
  impressions: number;
  conversions: number;
}

export interface ZTestResult {
  /** (rate B − rate A) / pooled standard error. */
  z: number;
  /** Two-sided p-value. */
  pValue: number;
}

export interface Interval {
  low: number;
  high: number;
}

/** Significance level of the winner rule. */
export const SIGNIFICANCE_LEVEL = 0.05;
/** Each variant needs this many impressions before a winner is declared: the normal approximation needs data. */
export const MIN_IMPRESSIONS_FOR_WINNER = 30;
/** z for a two-sided 95 % interval. */
export const Z_95 = 1.959963984540054;

const TWO_OVER_SQRT_PI = 1.1283791670955126;
const ONE_OVER_SQRT_PI = 0.5641895835477563;
/** Below this, the power series; above, the continued fraction (both converge fast there). */
const SERIES_LIMIT = 2.5;

/**
 * erf(x) = 2/√π · e^(−x²) · Σ 2ⁿ x^(2n+1) / (1·3·…·(2n+1)): every term is
 * positive, so there is no cancellation; relative error near 1e-15.
 */
function erfSeries(x: number): number {
  const x2 = x * x;
  let term = x;
  let sum = x;
  for (let n = 1; n < 500; n++) {
    term *= (2 * x2) / (2 * n + 1);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return TWO_OVER_SQRT_PI * Math.exp(-x2) * sum;
}

/**
 * erfc(x) for x ≥ 2.5 by the Laplace continued fraction
 * erfc(x) = e^(−x²)/√π · 1/(x + ½/(x + 1/(x + 3⁄2/(x + …)))), evaluated with
 * the modified Lentz method; keeps full relative precision for tiny p-values.
 */
function erfcContinuedFraction(x: number): number {
  const tiny = 1e-300;
  let f = x;
  let c = x;
  let d = 0;
  for (let n = 1; n < 500; n++) {
    const a = n / 2;
    d = x + a * d;
    d = Math.abs(d) < tiny ? 1 / tiny : 1 / d;
    c = x + a / c;
    if (Math.abs(c) < tiny) c = tiny;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return (ONE_OVER_SQRT_PI * Math.exp(-x * x)) / f;
}

/** The error function, accurate to about 1e-15 (far inside the 1e-7 the p-values need). */
export function erf(x: number): number {
  if (Number.isNaN(x)) return Number.NaN;
  if (x < 0) return -erf(-x);
  if (x === Infinity) return 1;
  return x < SERIES_LIMIT ? erfSeries(x) : 1 - erfcContinuedFraction(x);
}

/** The complementary error function 1 − erf(x), computed directly so that small values keep their precision. */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return Number.NaN;
  if (x < 0) return 2 - erfc(-x);
  if (x === Infinity) return 0;
  return x < SERIES_LIMIT ? 1 - erfSeries(x) : erfcContinuedFraction(x);
}

/** Standard normal cumulative distribution function Φ(z). */
export function normalCdf(z: number): number {
  return 0.5 * erfc(-z / Math.SQRT2);
}

/** Conversion rate; 0 for a variant nobody has seen yet. */
export function conversionRate(counts: VariantCounts): number {
  return counts.impressions > 0 ? counts.conversions / counts.impressions : 0;
}

/**
 * Pooled two-proportion z-test, two-sided. Undefined (null) until both
 * variants have impressions. When the pooled rate is 0 or 1 the two rates are
 * necessarily equal: z = 0, p = 1.
 */
export function twoProportionZTest(a: VariantCounts, b: VariantCounts): ZTestResult | null {
  if (a.impressions <= 0 || b.impressions <= 0) return null;
  const rateA = a.conversions / a.impressions;
  const rateB = b.conversions / b.impressions;
  const pooled = (a.conversions + b.conversions) / (a.impressions + b.impressions);
  const standardError = Math.sqrt(pooled * (1 - pooled) * (1 / a.impressions + 1 / b.impressions));
  if (standardError === 0) return { z: 0, pValue: 1 };
  const z = (rateB - rateA) / standardError;
  // Two-sided: P(|Z| ≥ |z|) = 2·(1 − Φ(|z|)) = erfc(|z|/√2).
  return { z, pValue: Math.min(1, erfc(Math.abs(z) / Math.SQRT2)) };
}

/**
 * Wilson score interval for a binomial proportion (95 % by default). With no
 * impressions nothing is known, so the interval is the whole of [0, 1].
 */
export function wilsonInterval(counts: VariantCounts, z = Z_95): Interval {
  const n = counts.impressions;
  if (n <= 0) return { low: 0, high: 1 };
  const p = counts.conversions / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denominator;
  const halfWidth = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { low: Math.max(0, center - halfWidth), high: Math.min(1, center + halfWidth) };
}

export interface AbEvaluation {
  z: number | null;
  pValue: number | null;
  /** Label of the better variant, only when the difference is significant and both have enough impressions. */
  winner: string | null;
}

/**
 * The winner rule: the variant with the higher rate wins when the z-test
 * gives p < 0.05 and each variant has at least 30 impressions. Tests with
 * other than two variants are reported without a p-value.
 */
export function evaluateAbTest(variants: ReadonlyArray<VariantCounts & { label: string }>): AbEvaluation {
  if (variants.length !== 2) return { z: null, pValue: null, winner: null };
  const [a, b] = variants as [VariantCounts & { label: string }, VariantCounts & { label: string }];
  const test = twoProportionZTest(a, b);
  if (!test) return { z: null, pValue: null, winner: null };
  const enoughData = a.impressions >= MIN_IMPRESSIONS_FOR_WINNER && b.impressions >= MIN_IMPRESSIONS_FOR_WINNER;
  const rateA = conversionRate(a);
  const rateB = conversionRate(b);
  const winner = enoughData && test.pValue < SIGNIFICANCE_LEVEL && rateA !== rateB ? (rateA > rateB ? a.label : b.label) : null;
  return { z: test.z, pValue: test.pValue, winner };
}
