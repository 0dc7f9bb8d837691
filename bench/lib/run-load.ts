/**
 * One load: autocannon cycling through a job's requests, in the process that calls it (the load process,
 * bench/lib/load-child.ts, or a bench measuring its own client). Nothing here but the load, so the load process
 * holds nothing else.
 */
import autocannon from 'autocannon';

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

export interface LoadResult {
  rps: number;
  /** Latency percentiles and maximum, ms. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Requests answered during the load. */
  total: number;
  /** Errors, timeouts and non-2xx answers. */
  failures: number;
}

export interface LoadJob {
  /** Origin of the server, e.g. http://127.0.0.1:4000. */
  url: string;
  /** Sent in order, over and over, until the load's time is up. */
  requests: RequestSpec[];
  connections: number;
  seconds: number;
}

/** Runs `job` here and answers its figures. */
export async function runLoad(job: LoadJob): Promise<LoadResult> {
  let next = 0;
  const result = await autocannon({
    url: job.url,
    connections: job.connections,
    duration: job.seconds,
    requests: [
      {
        setupRequest: (request) => {
          const spec = job.requests[next++ % job.requests.length]!;
          if (spec.method === 'GET') return { ...request, method: 'GET', path: spec.path };
          return { ...request, method: 'POST', path: spec.path, body: spec.body, headers: { 'content-type': 'application/json' } };
        },
      },
    ],
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    total: result.requests.total,
    failures: result.errors + result.timeouts + result.non2xx,
  };
}
