/**
 * The agents' reads on the data-access seam (issue 16, agents step 1), A/B on
 * SQLite in one process: another checkout's services (default /work/main,
 * before the port: synchronous reads) next to this checkout's (async, through
 * the Store), over the same SQLite file, alternating round by round. Service
 * calls (getJson, listJson, bulkJson, changesJson, a search page) and whole
 * injected requests (GET /agents/{id}, GET /agents?limit=20); µs per call,
 * median of the rounds, and the ratio this/base. Same answers are checked first.
 *
 *   npx tsx bench/agent-reads-ab.ts [--base /work/main] [--agents 2000] [--rounds 15] [--ops 400]
 *
 * Not a test: the figures depend on the machine and its load (printed first and last).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createConfig } from '../src-api/config';
import { openDatabase } from '../src-api/db/client';
import { API_PREFIX } from '../src-api/http/app';
import type { Services } from '../src-api/services';
import { AB_WORDS, abOptions, alternate, seedAbAgents, servicesSideBySide } from './lib/alternate';
import { loadAverage } from './lib/cli';

const { base, agentCount, rounds, ops } = abOptions({ ops: 400 });

type Loose = Record<string, (...args: unknown[]) => unknown>;

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-agent-reads-'));
  const config = createConfig({ dataDir: dir, demoData: false, adminToken: 'bench-admin-token-0123456789', rateLimit: { enabled: false } });
  const words = AB_WORDS;
  const db = openDatabase(path.join(dir, 'agent-directory.sqlite'));
  const ids = seedAbAgents(db, agentCount);

  const { baseServices, services, baseApp, app } = await servicesSideBySide(base, path.join(dir, 'agent-directory.sqlite'), db, config);
  const listQuery = { sort: 'trust_score' as const, page: 3, limit: 20 };

  const pick = (i: number) => ids[(i * 7919) % ids.length]!;
  const bulk = (i: number) => Array.from({ length: 20 }, (_, k) => pick(i + k));
  const calls = (s: Services, http: typeof app) => {
    const a = s.agents as unknown as Loose;
    return {
      'getJson (cached)': (i: number) => a.getJson!(pick(i)),
      'listJson page 3 x 20': () => a.listJson!(listQuery),
      'bulkJson 20 ids': (i: number) => a.bulkJson!(bulk(i)),
      'changesJson 100 from seq i': (i: number) => a.changesJson!(undefined, 100 + (i % 2)),
      'search page (2 words)': (i: number) => s.search.search({ q: `${words[i % 8]} ${words[(i + 3) % 8]}`, limit: 20 }),
      'GET /agents/{id}': (i: number) => http.inject({ method: 'GET', url: `${API_PREFIX}/agents/${pick(i)}` }),
      'GET /agents?limit=20': (i: number) => http.inject({ method: 'GET', url: `${API_PREFIX}/agents?limit=20&page=${1 + (i % 5)}` }),
    };
  };
  const before = calls(baseServices, baseApp);
  const after = calls(services, app);
  const names = Object.keys(before) as (keyof typeof before)[];

  // Same answers first (bytes for the JSON ones, bodies for the requests).
  const text = (value: unknown) =>
    Buffer.isBuffer(value)
      ? value.toString()
      : typeof value === 'object' && value && 'body' in value
        ? String(value.body)
        : JSON.stringify(value);
  for (const name of names)
    for (const i of [0, 1, 5]) {
      const [x, y] = [text(await before[name](i)), text(await after[name](i))];
      if (x !== y) throw new Error(`${name}: base and this checkout differ\n${x.slice(0, 300)}\n${y.slice(0, 300)}`);
    }

  console.log(`node ${process.version}, ${os.cpus().length} CPUs, load average ${loadAverage()}`);
  console.log(`${agentCount} agents; base ${base}; ${rounds} rounds of ${ops} calls per variant, alternating`);
  await alternate(before, after, { rounds, ops });
  console.log(`load average at the end ${loadAverage()}`);
  await Promise.all([app.close(), baseApp.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
}

void main();
