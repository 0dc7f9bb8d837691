/**
 * Changes per second through `GET /agents/changes`, as a mirror sees them: a generated
 * directory (100,000 agents by default) imported with the real CLI, served by the compiled
 * server, mirrored by the TypeScript client's syncMirror (a full first sync, then an
 * incremental one after edits and unlistings made by another process) and by the Python
 * client's sync_mirror, each mirror checked against the public list afterwards.
 *
 *   npx tsx bench/mirror.ts [--agents 100000] [--edits 10000] [--unlist 1000]
 *
 * Bounded: every child gets a deadline; prints a table and writes bench/results/mirror.json.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import { createAgentDirectoryClient } from '../clients/typescript/src/index';
import { readMirror, syncMirror } from '../clients/typescript/src/sync';
import { generateAgents } from './lib/dataset';

const root = path.resolve(import.meta.dirname, '..');
const options = new Command('bench-mirror')
  .option('--agents <n>', 'agents in the generated directory', (v) => Number(v), 100_000)
  .option('--edits <n>', 'agents edited before the incremental sync', (v) => Number(v), 10_000)
  .option('--unlist <n>', 'agents unlisted before the incremental sync', (v) => Number(v), 1_000)
  .option('--limit <n>', 'changes per request', (v) => Number(v), 1000)
  .parse()
  .opts<{ agents: number; edits: number; unlist: number; limit: number }>();

const CHILD_TIMEOUT_MS = 600_000;
const rows: { what: string; changes: number; seconds: number; per_second: number }[] = [];

function record(what: string, changes: number, seconds: number): void {
  const perSecond = Math.round(changes / seconds);
  rows.push({ what, changes, seconds: Number(seconds.toFixed(2)), per_second: perSecond });
  console.error(`  ${what}: ${changes.toLocaleString('en')} changes in ${seconds.toFixed(2)} s = ${perSecond.toLocaleString('en')}/s`);
}

function cli(args: string[]): void {
  execFileSync(process.execPath, ['out/api/cli.js', ...args], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: CHILD_TIMEOUT_MS,
  });
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-bench-mirror-'));
  const dataDir = path.join(work, 'data');
  let server: ChildProcess | undefined;
  try {
    const load = os.loadavg()[0]!.toFixed(2);
    console.error(`Load average ${load}; generating ${options.agents.toLocaleString('en')} agents…`);
    const agents = generateAgents(options.agents);
    const file = path.join(work, 'agents.jsonl');
    fs.writeFileSync(file, agents.map((agent) => JSON.stringify(agent)).join('\n') + '\n');
    execFileSync(process.execPath, ['scripts/ensure-build.mjs', 'api'], { cwd: root, stdio: 'inherit', timeout: CHILD_TIMEOUT_MS });
    cli(['import', file, '--data-dir', dataDir]);

    const port = await freePort();
    server = spawn(
      process.execPath,
      ['out/api/serve.js', '--port', String(port), '--data-dir', dataDir, '--no-demo-data', '--rate-limit', 'off'],
      {
        cwd: root,
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    const base = `http://127.0.0.1:${port}/api/v1`;
    await waitForHealth(`${base}/health`, 60_000);
    const client = createAgentDirectoryClient({ baseUrl: base });
    const mirrorFile = path.join(work, 'mirror.json');

    let started = performance.now();
    const full = await syncMirror(client, mirrorFile, { limit: options.limit });
    record(
      `TypeScript syncMirror, first sync (limit ${options.limit})`,
      full.created + full.updated + full.removed,
      (performance.now() - started) / 1000,
    );

    // Another process edits and unlists agents.
    const edited = agents.slice(0, options.edits).map((agent) => ({ ...agent, tagline: `${agent.tagline} (v2)` }));
    const unlisted = agents.slice(options.edits, options.edits + options.unlist).map((agent) => ({ ...agent, listed: false }));
    const changesFile = path.join(work, 'changes.jsonl');
    fs.writeFileSync(changesFile, [...edited, ...unlisted].map((agent) => JSON.stringify(agent)).join('\n') + '\n');
    cli(['import', changesFile, '--data-dir', dataDir]);

    started = performance.now();
    const incremental = await syncMirror(client, mirrorFile, { limit: options.limit });
    record(
      'TypeScript syncMirror, after edits and unlistings',
      incremental.updated + incremental.removed + incremental.created,
      (performance.now() - started) / 1000,
    );
    if (incremental.updated !== edited.length || incremental.removed !== unlisted.length) {
      throw new Error(`expected ${edited.length} updated and ${unlisted.length} removed, got ${JSON.stringify(incremental)}`);
    }

    // Exact: the mirror equals the public list, agent for agent.
    started = performance.now();
    const mirror = await readMirror(mirrorFile);
    let listed = 0;
    for await (const agent of client.listAll({ limit: 100 })) {
      listed++;
      if (JSON.stringify(mirror.agents[agent.id]) !== JSON.stringify(agent)) throw new Error(`mirror differs on ${agent.id}`);
    }
    if (listed !== Object.keys(mirror.agents).length)
      throw new Error(`mirror has ${Object.keys(mirror.agents).length} agents, the list ${listed}`);
    console.error(
      `  mirror checked against the public list: ${listed.toLocaleString('en')} agents equal (${((performance.now() - started) / 1000).toFixed(1)} s)`,
    );

    // The Python client, from scratch.
    const script = [
      'import json, sys, time',
      'from agent_directory import AgentDirectory, sync_mirror',
      't = time.perf_counter()',
      `r = sync_mirror(AgentDirectory(${JSON.stringify(base)}, timeout=60), ${JSON.stringify(path.join(work, 'mirror-py.json'))}, limit=${options.limit})`,
      'print(json.dumps({"seconds": time.perf_counter() - t, "changes": r.created + r.updated + r.removed, "agents": r.agents}))',
    ].join('\n');
    const python = JSON.parse(
      execFileSync('python3', ['-c', script], {
        cwd: root,
        env: { ...process.env, PYTHONPATH: path.join(root, 'clients/python/src') },
        encoding: 'utf8',
        timeout: CHILD_TIMEOUT_MS,
      }),
    ) as { seconds: number; changes: number; agents: number };
    record(`Python sync_mirror, first sync (limit ${options.limit})`, python.changes, python.seconds);
    if (python.agents !== listed) throw new Error(`the Python mirror has ${python.agents} agents, the list ${listed}`);

    const report = { agents: options.agents, load_average_at_start: Number(load), cpus: os.cpus().length, node: process.version, rows };
    fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
    fs.writeFileSync(path.join(root, 'bench/results/mirror.json'), `${JSON.stringify(report, null, 2)}\n`);
    console.log(JSON.stringify(report, null, 2));
  } finally {
    server?.kill('SIGTERM');
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function waitForHealth(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.once('error', reject);
  });
}

await main();
