/**
 * PostgreSQL reads under load, A/B: one PostgreSQL 15 (as the bench starts it), one imported
 * directory, and the `serve` of this checkout and of another (`--base /work/wt/base-x`, built with
 * `npm run build:api`) started one after the other on it, in alternating rounds. Each round loads
 * GET /agents/{id}, list pages and a one-word search (cache off) with autocannon, and counts the
 * statements PostgreSQL ran per request (pg_stat_statements). `--cpu-prof dir` writes a CPU profile
 * of each server run there. Without `--base` it measures this checkout only (profiling).
 *
 *   npx tsx bench/pg-reads-ab.ts --agents 100000 --base /work/wt/base-x --rounds 3 --seconds 5
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Command } from 'commander';
import { startPostgres } from '../test/helpers/postgres-server';
import { createRandom, generateAgents, listPagePath, writeAgentsJsonl } from './lib/dataset';
import { freePort, health, runToEnd, spawnServer, waitFor, waitForHealth } from './lib/server-process';

const options = new Command()
  .option('--agents <n>', 'agents imported', (v) => Number(v), 100_000)
  .option('--base <dir>', 'the other checkout (built)')
  .option('--base2 <dir>', 'a third checkout (built), measured beside the two')
  .option('--rounds <n>', 'rounds of A then B', (v) => Number(v), 3)
  .option('--seconds <n>', 'seconds per load', (v) => Number(v), 5)
  .option('--connections <n>', 'autocannon connections', (v) => Number(v), 50)
  .option('--cpu-prof <dir>', 'write a CPU profile of each server run there')
  .option('--only <loads>', 'comma-separated loads: byId,list,search')
  .option('--statements', 'print the statements PostgreSQL spent most time on, per load')
  .parse()
  .opts<{
    agents: number;
    base?: string;
    base2?: string;
    rounds: number;
    seconds: number;
    connections: number;
    cpuProf?: string;
    only?: string;
    statements?: boolean;
  }>();

const root = path.resolve(import.meta.dirname, '..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-reads-ab-'));
const postgres = await startPostgres({
  settings: { fsync: 'on', synchronous_commit: 'off', shared_buffers: '512MB', shared_preload_libraries: 'pg_stat_statements' },
});
const children: ChildProcess[] = [];
try {
  postgres.query(`CREATE DATABASE bench TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
  postgres.query('CREATE EXTENSION pg_stat_statements', 'bench');
  const url = postgres.urlOf('bench');
  const agents = generateAgents(options.agents);
  const file = path.join(work, 'agents.jsonl');
  await writeAgentsJsonl(file, agents);
  await runToEnd('node', ['out/api/cli.js', 'import', file, '--data-dir', work, '--database', url]);
  const random = createRandom(99);
  const pickId = () => agents[random.int(agents.length)]!.id;
  const words = ['agent', 'data', 'workflow', 'model', 'platform', 'secure'];
  const loads: Record<string, () => string> = {
    byId: () => `/api/v1/agents/${pickId()}`,
    list: () => listPagePath(random),
    search: () => `/api/v1/agents/search?q=${random.pick(words)}&limit=20`,
  };
  const chosen = options.only ? options.only.split(',') : Object.keys(loads);
  const sides = [
    { name: 'new', dir: root },
    ...(options.base ? [{ name: 'base', dir: options.base }] : []),
    ...(options.base2 ? [{ name: 'base2', dir: options.base2 }] : []),
  ];
  const results = new Map<string, { rps: number[]; statements: number[] }>();

  const statements = () =>
    Number(
      postgres.query(
        `SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'bench')`,
        'bench',
      ),
    );
  for (let round = 0; round < options.rounds; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const port = await freePort();
      const prof = options.cpuProf
        ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(options.cpuProf), '--cpu-prof-name', `${side.name}-${round}.cpuprofile`]
        : [];
      const server = spawnServer(port, work, { nodeArgs: prof, root: side.dir, databaseArgs: ['--database', url] });
      children.push(server);
      const base = `http://127.0.0.1:${port}/api/v1`;
      await waitForHealth(`${base}/health`, 60_000);
      await waitFor(base, (body) => body.idle);
      await health(base);
      for (const name of chosen) {
        postgres.query('SELECT pg_stat_statements_reset()', 'bench');
        const before = statements();
        const result = await autocannon({
          url: `http://127.0.0.1:${port}`,
          connections: options.connections,
          duration: options.seconds,
          requests: [{ setupRequest: (request) => ({ ...request, method: 'GET', path: loads[name]!() }) }],
        });
        const requests = result.requests.total;
        const perRequest = (statements() - before - 1) / Math.max(1, requests);
        const key = `${name} ${side.name}`;
        if (options.statements) {
          const top = postgres.query(
            `SELECT calls, round(mean_exec_time::numeric, 3), round(total_exec_time::numeric), left(regexp_replace(query, '\\s+', ' ', 'g'), 160) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'bench') ORDER BY total_exec_time DESC LIMIT 6`,
            'bench',
          );
          console.error(`${key} statements (calls|mean ms|total ms|query):\n${top}`);
        }
        const entry = results.get(key) ?? { rps: [], statements: [] };
        entry.rps.push(result.requests.average);
        entry.statements.push(perRequest);
        results.set(key, entry);
        console.error(
          `round ${round} ${key}: ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, ${perRequest.toFixed(2)} statements/request, non2xx ${result.non2xx}, load ${os.loadavg()[0]!.toFixed(2)}`,
        );
      }
      server.kill('SIGINT');
      await new Promise((resolve) => server.once('exit', resolve));
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  for (const name of chosen) {
    const mine = results.get(`${name} new`)!;
    let line = `${name}: new ${Math.round(median(mine.rps))} req/s (${median(mine.statements).toFixed(2)} statements/request)`;
    for (const other of ['base', 'base2']) {
      const theirs = results.get(`${name} ${other}`);
      if (theirs)
        line += `, ${other} ${Math.round(median(theirs.rps))} (${median(theirs.statements).toFixed(2)}): ${(median(mine.rps) / median(theirs.rps)).toFixed(2)}×`;
    }
    console.log(line);
  }
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  for (const child of children) child.kill('SIGKILL');
  postgres.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
