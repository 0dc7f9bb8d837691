import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentDirectoryClient, type Agent, type AgentDirectoryClient } from '../../clients/typescript/src/index';
import { readMirror, syncMirror } from '../../clients/typescript/src/sync';
import { agentInput, makeTempDir, startTestServer, type TestServer } from '../helpers/test-server';

/** The TypeScript client's syncMirror against a live server: the mirror file stays exactly the listed directory. */
let server: TestServer;
let client: AgentDirectoryClient;
let file: string;

beforeAll(async () => {
  server = await startTestServer();
  client = createAgentDirectoryClient({ baseUrl: server.apiBaseUrl });
  file = path.join(makeTempDir('agentdir-mirror-'), 'mirror.json');
});
afterAll(() => server.close());

/** Every listed agent, as the public list serves it, by id. */
async function listed(): Promise<Record<string, Agent>> {
  const all: Record<string, Agent> = {};
  for await (const agent of client.listAll({ limit: 100 })) all[agent.id] = agent;
  return all;
}

async function expectExact(): Promise<void> {
  const mirror = await readMirror(file);
  expect(Object.keys(mirror.agents).sort()).toEqual(Object.keys(await listed()).sort());
  expect(mirror.agents).toEqual(await listed());
}

describe('syncMirror', () => {
  it('builds the mirror, then keeps it exact through creates, edits, reviews, unlistings and relistings', async () => {
    const { agents, reviews } = server.services;
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push((await agents.edits.create(agentInput({ name: `Mirror Agent ${i}` }), { emitEvents: false })).id);

    const first = await syncMirror(client, file, { limit: 7 });
    expect(first).toMatchObject({ agents: 25, created: 25, updated: 0, removed: 0, pages: 4, restarted: false });
    await expectExact();

    // Nothing changed: one request, nothing applied, same cursor.
    const idle = await syncMirror(client, file);
    expect(idle).toMatchObject({ agents: 25, created: 0, updated: 0, removed: 0, pages: 1, cursor: first.cursor });

    await agents.edits.update(ids[0]!, { name: 'Mirror Agent renamed', capabilities: ['renamed'] });
    await agents.edits.setListed(ids[1]!, false);
    await agents.edits.setListed(ids[2]!, false);
    await agents.edits.setListed(ids[2]!, true);
    await agents.edits.setVerified(ids[3]!, true);
    await reviews.create(ids[4]!, { rating: 4, comment: 'fine', reviewer_name: 'Ada' }, { client: 'sync-test' });
    const added = await agents.edits.create(agentInput({ name: 'Mirror Agent late' }), { emitEvents: false });
    await agents.edits.setListed((await agents.edits.create(agentInput({ name: 'Mirror Agent gone' }), { emitEvents: false })).id, false);

    const second = await syncMirror(client, file, { limit: 3 });
    expect(second.agents).toBe(25);
    expect(second.removed).toBe(2); // ids[1] and the agent created and unlisted in between
    expect(second.created).toBe(1);
    await expectExact();
    const mirror = await readMirror(file);
    expect(mirror.agents[ids[0]!]?.name).toBe('Mirror Agent renamed');
    expect(mirror.agents[ids[1]!]).toBeUndefined();
    expect(mirror.agents[ids[2]!]).toBeDefined();
    expect(mirror.agents[ids[3]!]?.verified).toBe(true);
    expect(mirror.agents[ids[4]!]?.rating.count).toBe(1);
    expect(mirror.agents[added.id]).toBeDefined();
  });

  it('rebuilds from the start when the server refuses the stored cursor', async () => {
    const mirror = await readMirror(file);
    const forged = Buffer.from('v1.99999999').toString('base64url');
    fs.writeFileSync(file, JSON.stringify({ ...mirror, cursor: forged, agents: { ghost: mirror.agents[Object.keys(mirror.agents)[0]!] } }));
    const result = await syncMirror(client, file);
    expect(result.restarted).toBe(true);
    await expectExact();
  });

  it('refuses a file that is not a mirror', async () => {
    const other = path.join(path.dirname(file), 'other.json');
    fs.writeFileSync(other, '{"hello":1}');
    await expect(syncMirror(client, other)).rejects.toThrow(/not an agent directory mirror/);
  });
});
