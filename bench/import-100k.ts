/**
 * Times `cli import` / `cli export` on 100,000 generated agents, running the real CLI
 * as a child process on a fresh temp data dir, as a user would.
 *
 *   npx tsx bench/import-100k.ts [count] [--with-events]
 *
 * Steps: import N new agents (JSONL), re-import the same file with every tagline
 * changed (N updates), re-import it unchanged (N unchanged), import the same
 * agents as one JSON array into another empty dir, re-import that dir with
 * changes and --emit-events (N updates + N agent.updated events), and export.
 * --with-events adds N new agents with --emit-events: N agent.registered events,
 * each of which the marketing listener turns into generated posts (slow).
 * The target is well under 30 s for each import of 100,000.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const count = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 100_000);
const withEvents = args.includes('--with-events');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-bench-import-'));

const TYPES = ['assistant', 'coding', 'research', 'data', 'devops', 'security', 'writing', 'design', 'workflow', 'other'];
const WORDS = ['code', 'review', 'search', 'data', 'deploy', 'triage', 'summarise', 'translate', 'schedule', 'monitor', 'test', 'draft'];

function agent(i: number, taglineSuffix = '') {
  const word = (k: number) => WORDS[(i * 7 + k * 3) % WORDS.length]!;
  return {
    id: `bench-agent-${i}`,
    name: `${word(0)} ${word(1)} agent ${i}`,
    tagline: `Helps teams ${word(2)} and ${word(3)}${taglineSuffix}`,
    description: `Agent number ${i}: it can ${word(0)}, ${word(1)} and ${word(2)} across large code bases, with audit logs and retries.`,
    author: `author-${i % 500}`,
    capabilities: [word(0), word(1), word(4)],
    categories: [word(5), word(6)],
    type: TYPES[i % TYPES.length],
    source_url: `https://github.com/bench-org-${i % 1000}/agent-${i}`,
  };
}

function writeJsonl(file: string, taglineSuffix = ''): void {
  const fd = fs.openSync(file, 'w');
  let chunk = '';
  for (let i = 0; i < count; i++) {
    chunk += `${JSON.stringify(agent(i, taglineSuffix))}\n`;
    if (chunk.length > 1 << 20) {
      fs.writeSync(fd, chunk);
      chunk = '';
    }
  }
  fs.writeSync(fd, chunk);
  fs.closeSync(fd);
}

function cli(args: string[]): { seconds: number; stdout: string } {
  const started = performance.now();
  const stdout = execFileSync(process.execPath, ['out/api/cli.js', ...args], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 30,
  });
  return { seconds: (performance.now() - started) / 1000, stdout: stdout.trim() };
}

function step(label: string, args: string[]): void {
  const { seconds, stdout } = cli(args);
  console.log(`${label.padEnd(34)} ${seconds.toFixed(2).padStart(6)} s wall   ${stdout}`);
}

const dataA = path.join(work, 'data-a');
const dataB = path.join(work, 'data-b');
const fresh = path.join(work, 'agents.jsonl');
const changed = path.join(work, 'agents-changed.jsonl');
const asArray = path.join(work, 'agents.json');

writeJsonl(fresh);
writeJsonl(changed, ' (v2)');
fs.writeFileSync(asArray, `[\n${fs.readFileSync(fresh, 'utf8').trimEnd().split('\n').join(',\n')}\n]\n`);
console.log(
  `${count.toLocaleString('en-US')} agents, JSONL ${(fs.statSync(fresh).size / 1e6).toFixed(1)} MB, in ${work}` +
    `\nNode ${process.version}, ${os.cpus().length} CPU(s). Wall time includes process start-up (~0.5–1 s).\n`,
);

// The compiled CLI, as `npm run cli` runs it: built first if needed.
execFileSync(process.execPath, ['scripts/ensure-build.mjs', 'api'], { cwd: root, stdio: 'inherit' });
step('import (all new, JSONL)', ['import', fresh, '--data-dir', dataA]);
step('import (all updated)', ['import', changed, '--data-dir', dataA]);
step('import (all unchanged)', ['import', changed, '--data-dir', dataA]);
step('import (all new, JSON array)', ['import', asArray, '--data-dir', dataB]);
step('import --emit-events (all updated)', ['import', changed, '--data-dir', dataB, '--emit-events']);
step('export', ['export', path.join(work, 'export.jsonl'), '--data-dir', dataA]);
if (withEvents) step('import --emit-events (all new)', ['import', fresh, '--data-dir', path.join(work, 'data-c'), '--emit-events']);

fs.rmSync(work, { recursive: true, force: true });
