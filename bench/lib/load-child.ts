/**
 * The load generator of bench/search-http-ab.ts, in its own process so that the servers' event loop is not
 * also the client's: receives { url, requests, connections, seconds } over IPC, runs autocannon cycling through
 * the requests, answers { rps, p99, failures }.
 */
import autocannon from 'autocannon';

interface Job {
  url: string;
  requests: { method: 'GET' | 'POST'; path: string; body?: string }[];
  connections: number;
  seconds: number;
}

process.on('message', (job: Job) => {
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
    process.send!({
      rps: result.requests.average,
      p99: result.latency.p99,
      total: result.requests.total,
      failures: result.errors + result.timeouts + result.non2xx,
    });
  });
});
