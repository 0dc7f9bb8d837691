import type { Metric, Registry } from 'prom-client';

/**
 * The per-request counter and latency histogram, kept as plain numbers and
 * handed to prom-client only when scraped. prom-client's own `inc`/`observe`
 * hash the label object on every call (microseconds on a loaded machine),
 * which the hot read paths (~50k req/s) would feel; here a request costs one
 * Map lookup, a short bucket scan and a few additions.
 */

type Labels = { method: string; route: string; status_code: string };

interface Series {
  labels: Labels;
  count: number;
  sum: number;
  /** Observations per bucket, not cumulative (the last one is +Inf). */
  buckets: number[];
}

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

export function createRequestSeries({
  registry,
  prefix,
  bucketsSeconds,
}: {
  registry: Registry;
  /** e.g. agentdir_http_request: gives <prefix>s_total and <prefix>_duration_seconds. */
  prefix: string;
  bucketsSeconds: number[];
}) {
  // route → method → status: the keys are strings Fastify and node:http already hold (their hashes are cached) and a number.
  const series = new Map<string, Map<string, Map<number, Series>>>();
  const countName = `${prefix}s_total`;
  const durationName = `${prefix}_duration_seconds`;
  const bounds = bucketsSeconds;

  const all = (): Series[] =>
    [...series.values()].flatMap((byMethod) => [...byMethod.values()].flatMap((byStatus) => [...byStatus.values()]));

  // Objects of prom-client's collector shape (name, help, type, get), formatted by the registry like its own.
  const counter = {
    name: countName,
    help: 'HTTP requests answered, by method, route pattern and status code.',
    type: 'counter',
    aggregator: 'sum',
    get: () => ({
      name: countName,
      help: counter.help,
      type: 'counter',
      aggregator: 'sum',
      values: all().map((s): MetricValue => ({ value: s.count, labels: s.labels })),
    }),
  };
  const histogram = {
    name: durationName,
    help: 'Time from the request arriving to the response being sent, by method, route pattern and status code.',
    type: 'histogram',
    aggregator: 'sum',
    get: () => ({
      name: durationName,
      help: histogram.help,
      type: 'histogram',
      aggregator: 'sum',
      values: all().flatMap((s): MetricValue[] => {
        let cumulative = 0;
        const lines = s.buckets.map((n, i): MetricValue => {
          cumulative += n;
          return {
            metricName: `${durationName}_bucket`,
            value: cumulative,
            labels: { ...s.labels, le: i < bounds.length ? bounds[i]! : '+Inf' },
          };
        });
        lines.push({ metricName: `${durationName}_sum`, value: s.sum, labels: s.labels });
        lines.push({ metricName: `${durationName}_count`, value: s.count, labels: s.labels });
        return lines;
      }),
    }),
  };
  registry.registerMetric(counter as unknown as Metric);
  registry.registerMetric(histogram as unknown as Metric);

  return {
    observe(method: string, route: string, statusCode: number, seconds: number): void {
      let byMethod = series.get(route);
      if (byMethod === undefined) series.set(route, (byMethod = new Map()));
      let byStatus = byMethod.get(method);
      if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
      let s = byStatus.get(statusCode);
      if (s === undefined) {
        s = {
          labels: { method, route, status_code: String(statusCode) },
          count: 0,
          sum: 0,
          buckets: new Array<number>(bounds.length + 1).fill(0),
        };
        byStatus.set(statusCode, s);
      }
      s.count++;
      s.sum += seconds;
      let i = 0;
      while (i < bounds.length && seconds > bounds[i]!) i++;
      s.buckets[i]!++;
    },
  };
}
