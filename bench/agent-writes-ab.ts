/**
 * The agents' writers on the data-access seam (issue 16: reviews, the owner hooks, the agent
 * edits other modules call, agents.edits.create), A/B on SQLite in one process: another
 * checkout's services next to this checkout's, over the same SQLite file, alternating round by
 * round. µs per call, median of the rounds, and the ratio this/base. Both sides' results are
 * checked first (same rating, same version steps). The base needs `agents.edits` (main since
 * the agent writers' port).
 *
 *   npx tsx bench/agent-writes-ab.ts --base <other checkout> [--agents 2000] [--rounds 15] [--ops 300]
 *
 * Not a test: the figures depend on the machine and its load (printed first and last).
 */
import fs from 'node:fs';
import { eq } from 'drizzle-orm';
import os from 'node:os';
import path from 'node:path';
import { createConfig } from '../src-api/config';
import { openDatabase } from '../src-api/db/client';
import { API_PREFIX } from '../src-api/http/app';
import type { Services } from '../src-api/services';
import { agents } from '../src-api/modules/agents/agents.table';
import { abOptions, alternate, seedAbAgents, servicesSideBySide } from './lib/alternate';
import { loadAverage } from './lib/cli';

const { base, agentCount, rounds, ops } = abOptions({ ops: 300 });

type Loose = Record<string, (...args: unknown[]) => unknown>;

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentdir-agent-writes-'));
  const config = createConfig({ dataDir: dir, demoData: false, adminToken: 'bench-admin-token-0123456789', rateLimit: { enabled: false } });
  const db = openDatabase(path.join(dir, 'agent-directory.sqlite'));
  const ids = seedAbAgents(
    db,
    agentCount,
    // Three agents per owner account among the first 300.
    (i) => (i < 300 ? { name: `Agent ${i}`, ownerAccountId: `acc_${Math.floor(i / 3)}`, ownerName: 'Owner' } : { name: `Agent ${i}` }),
  );

  const { baseServices, services, baseApp, app } = await servicesSideBySide(base, path.join(dir, 'agent-directory.sqlite'), db, config);

  // Each side writes its own agents (base: even ids, this: odd ones), so both do the same work per call.
  const pick = (side: number, i: number) => ids[((i * 7919) % (agentCount / 2)) * 2 + side]!;
  const owner = (side: number, i: number) => `acc_${((i * 31) % 50) * 2 + side}`;
  const review = { rating: 4, comment: 'Bench', reviewer_name: 'Bench' };
  const agentInput = { tagline: 'Created by the bench', description: '', author: '', capabilities: [], categories: [], type: 'other' };
  let created = 0;
  const calls = (s: Services, http: typeof app, side: number) => {
    const a = s.agents as unknown as Loose & { edits?: Loose };
    const r = s.reviews as unknown as Loose;
    let toHide: string | undefined;
    return {
      'reviews.create': (i: number) => r.create!(pick(side, i), review),
      'POST /agents/{id}/reviews': (i: number) =>
        http.inject({ method: 'POST', url: `${API_PREFIX}/agents/${pick(side, i)}/reviews`, payload: review }),
      'reviews.setHidden (hide, show)': async (i: number) => {
        toHide ??= ((await r.create!(pick(side, 1), review)) as { id: string }).id;
        await r.setHidden!(toHide, i % 2 === 0, 'bench');
      },
      // The edit owners and edit requests make (agent.updated: its event, webhook fan-out and marketing drafts).
      'agents.edits.update': (i: number) => a.edits!.update!(pick(side, i), { tagline: `Tagline ${i}` }),
      'agents.edits.create': (i: number) =>
        a.edits!.create!({
          ...agentInput,
          name: `Created ${side} ${i} ${++created}`,
          source_url: `https://example.org/c/${side}/${created}`,
        }),
      'renameOwner (3 agents)': (i: number) => a.edits!.renameOwner!(owner(side, i), `Owner ${i}`),
    };
  };
  const before = calls(baseServices, baseApp, 0);
  const after = calls(services, app, 1);

  // Same effects first: a review moves the rating and version alike on both sides.
  const row = (id: string) => db.select().from(agents).where(eq(agents.id, id)).get()!;
  await before['reviews.create'](0);
  await after['reviews.create'](0);
  const [x, y] = [row(pick(0, 0)), row(pick(1, 0))];
  if (x.ratingCount !== y.ratingCount || x.ratingSum !== y.ratingSum || x.version !== y.version || x.trustScore !== y.trustScore)
    throw new Error(`reviews.create: base and this checkout differ\n${JSON.stringify(x)}\n${JSON.stringify(y)}`);

  console.log(`node ${process.version}, ${os.cpus().length} CPUs, load average ${loadAverage()}`);
  console.log(`${agentCount} agents; base ${base}; ${rounds} rounds of ${ops} calls per variant, alternating`);
  await alternate(before, after, { rounds, ops, width: 32 });
  console.log(`load average at the end ${loadAverage()}`);
  await Promise.all([app.close(), baseApp.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
}

void main();
