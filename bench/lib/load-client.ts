/**
 * The benches' load generator, run in a process of its own (bench/lib/load-child.ts) that holds nothing but the
 * requests of the load it is running. In the bench's own process autocannon shared a heap of ~1 GB at 1,000,000
 * agents (the generated directory and what earlier phases keep): a `--trace-gc` run showed 631 young
 * collections of ~10 ms and one full collection with 574 ms of marking on its main thread during the loads, and
 * while the client is paused the server's answers wait and count as latency.
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import { classSearches, filtersOf, type BenchAgent, type SearchClass } from './dataset';
import type { LoadJob, LoadResult, RequestSpec } from './run-load';

export type { LoadJob, LoadResult, RequestSpec };

/** Starts the load process; one load runs at a time. */
export function startLoadClient(): { run(job: LoadJob): Promise<LoadResult>; close(): void; pid: number } {
  // With this process's node flags: the tsx loader the benches run under, and any given (`npx tsx --trace-gc …`).
  const child = fork(path.join(import.meta.dirname, 'load-child.ts'), []);
  return {
    run: (job) =>
      new Promise((resolve, reject) => {
        const onExit = (code: number | null) => reject(new Error(`the load process exited (${code}) during a load`));
        child.once('exit', onExit);
        child.once('message', (result: LoadResult) => {
          child.off('exit', onExit);
          resolve(result);
        });
        child.send(job);
      }),
    close: () => child.kill(),
    /** For measuring the client's own CPU time. */
    pid: child.pid!,
  };
}

/** The search requests of one class, as the bench sends them: filtered POST as POST with its filters, the rest as GET. */
export function classRequests(agents: BenchAgent[], kind: SearchClass, count = 1000): RequestSpec[] {
  return classSearches(agents, kind, count).map((search) =>
    kind === 'filtered POST'
      ? { method: 'POST', path: '/api/v1/agents/search', body: JSON.stringify({ q: search.q, limit: 20, ...filtersOf(search) }) }
      : { method: 'GET', path: `/api/v1/agents/search?${new URLSearchParams({ q: search.q, limit: '20' })}` },
  );
}
