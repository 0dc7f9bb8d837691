/**
 * The benches' load generator, in a process of its own (bench/lib/load-client.ts starts it and says why):
 * receives a LoadJob over IPC, runs autocannon cycling through its requests, answers a LoadResult.
 */
import autocannon from 'autocannon';
import type { LoadJob, LoadResult } from './load-client';

process.on('message', (job: LoadJob) => {
  let next = 0;
  void autocannon({
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
  }).then((result) => {
    const answer: LoadResult = {
      rps: result.requests.average,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      total: result.requests.total,
      failures: result.errors + result.timeouts + result.non2xx,
    };
    process.send!(answer);
  });
});
