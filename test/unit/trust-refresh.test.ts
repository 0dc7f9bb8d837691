import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createConfig, databasePath } from '../../src-api/config';
import { openDatabase } from '../../src-api/db/client';
import type { AgentRow } from '../../src-api/modules/agents/agents.table';
import { createServices } from '../../src-api/services';
import { agentInput, makeTempDir } from '../helpers/test-server';

const DAY_MS = 24 * 60 * 60 * 1000;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Services over a fresh database whose clock the test moves. */
function servicesAt(start: Date) {
  const dataDir = makeTempDir();
  dirs.push(dataDir);
  const config = createConfig({ dataDir: path.resolve(dataDir), demoData: false });
  let now = start;
  const services = createServices({ db: openDatabase(databasePath(config)), config, clock: { now: () => now } });
  return { services, advance: (days: number) => (now = new Date(now.getTime() + days * DAY_MS)) };
}

describe('trust score refresh', () => {
  it('moves the age signal in slices of its own transactions, each change a change (change_seq)', async () => {
    const { services, advance } = servicesAt(new Date('2026-01-01T00:00:00Z'));
    const created: AgentRow[] = [];
    for (let i = 0; i < 7; i++)
      created.push(await services.agents.edits.create(agentInput({ name: `Aging Agent ${i}` }), { emitEvents: false }));
    const before = await Promise.all(created.map(async (agent) => (await services.agents.findRowAsync(agent.id))!.trustScore));
    expect(await services.agents.refreshTrustScores()).toBe(0);

    advance(200);
    const seqBefore = await services.agents.latestChangeSeqAsync();
    const slices: number[] = [];
    for (let afterId: string | undefined = ''; afterId !== undefined;) {
      const slice = await services.agents.refreshTrustScoresSlice(afterId, 3);
      slices.push(slice.changed);
      afterId = slice.lastId;
    }
    expect(slices).toEqual([3, 3, 1]);
    const after = await Promise.all(created.map(async (agent) => (await services.agents.findRowAsync(agent.id))!.trustScore));
    after.forEach((score, i) => expect(score).toBeGreaterThan(before[i]!));
    expect(await services.agents.latestChangeSeqAsync()).toBe(seqBefore + 7);
    // The public profile follows (the profile cache saw the change).
    expect(JSON.parse((await services.agents.getJson(created[0]!.id)).toString('utf8')).trust_score).toBe(after[0]);
    expect(await services.agents.refreshTrustScores()).toBe(0);
  });

  it('runs in the background to the end, one run at a time', async () => {
    const { services, advance } = servicesAt(new Date('2026-01-01T00:00:00Z'));
    for (let i = 0; i < 5; i++) await services.agents.edits.create(agentInput({ name: `Background Agent ${i}` }), { emitEvents: false });
    advance(100);
    // In the background as server.ts runs it: one run at a time, a second one asked for meanwhile is skipped.
    const [run, skipped] = await Promise.all([
      services.store.runExclusive('trust-refresh', () => services.agents.refreshTrustScores()),
      services.store.runExclusive('trust-refresh', () => services.agents.refreshTrustScores()),
    ]);
    expect([run, skipped]).toEqual([{ ran: true, value: 5 }, { ran: false }]);
    expect(await services.agents.refreshTrustScores()).toBe(0);
  });
});
