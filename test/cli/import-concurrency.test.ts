import { afterEach, describe, expect, it } from 'vitest';
import { createConfig } from '../../src-api/config';
import { openStore, type OpenedStore } from '../../src-api/db/open-store';
import { importAgents } from '../../src-api/modules/agents/agents-import';
import { ImportRejectedError } from '../../src-api/modules/agents/import-records';
import { createServices, type Services } from '../../src-api/services';
import { agentInput, makeTempDir } from '../helpers/test-server';
import { databaseOf, onPostgres } from '../helpers/test-store';
import { record } from './cli-helpers';

/**
 * The import plans holding no lock, then takes the write lock. These tests
 * make another connection (standing in for a server process on the same data dir)
 * write in between (the import's `afterPlan`, awaited before its write transaction),
 * and check that the import notices and plans again instead of writing a stale plan.
 * With AGENTDIR_TEST_STORE=postgres the two are two pools on the data dir's PostgreSQL database.
 */
const opened: OpenedStore[] = [];
afterEach(async () => {
  for (const database of opened.splice(0)) await database.close();
});

async function twoConnections(): Promise<{ cli: Services; server: Services }> {
  const dataDir = makeTempDir('agentdir-import-race-');
  const config = createConfig({ dataDir, ...(onPostgres && { databaseUrl: await databaseOf(dataDir) }) });
  const connect = async () => {
    const database = await openStore(config);
    opened.push(database);
    return createServices({ store: database.store, config });
  };
  return { cli: await connect(), server: await connect() };
}

describe('import racing another writer', () => {
  it('re-checks under the write lock: a source_url taken in the meantime rejects the import, nothing written', async () => {
    const { cli, server } = await twoConnections();
    const records = [
      { value: record(1), line: 1 },
      { value: record(2), line: 2 },
    ];
    const afterPlan = async () => {
      await server.agents.edits.create(agentInput({ name: 'Rival', source_url: 'https://example.com/agents/agent-2' }), {
        emitEvents: false,
      });
    };

    const error = await importAgents(cli, records, { afterPlan }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ImportRejectedError);
    expect((error as ImportRejectedError).issues).toEqual([
      {
        line: 2,
        index: undefined,
        pointer: '/source_url',
        detail: expect.stringMatching(/^"https:\/\/example\.com\/agents\/agent-2" is already the source of agent "rival-[a-z0-9]{6}"$/),
      },
    ]);
    expect(await cli.agents.listedCount()).toBe(1); // only the rival
  });

  it('plans again on fresh rows: a concurrent edit is kept, and change_seq stays unique', async () => {
    const { cli, server } = await twoConnections();
    await importAgents(cli, [{ value: record(1, { id: 'shared' }), line: 1 }]);

    const afterPlan = async () => {
      await server.agents.edits.update('shared', { name: 'Renamed by the server' }, { emitEvents: false });
      await server.agents.edits.create(agentInput({ name: 'Created meanwhile' }), { emitEvents: false });
    };
    const summary = await importAgents(
      cli,
      [
        { value: { id: 'shared', tagline: 'Tagline from the import' }, line: 1 },
        { value: record(3), line: 2 },
      ],
      { afterPlan },
    );

    expect(summary).toEqual({ total: 2, created: 1, updated: 1, unchanged: 0 });
    expect(await cli.agents.getRow('shared')).toMatchObject({
      name: 'Renamed by the server',
      tagline: 'Tagline from the import',
      version: 3,
    });
    // 1: the first import; 2, 3: the server's two writes; 4, 5: this import, counted on from what it re-read.
    const { store } = cli;
    const seqs = await store.rows(
      store.db.select({ seq: store.t.agents.changeSeq }).from(store.t.agents).orderBy(store.t.agents.changeSeq),
    );
    expect(seqs.map((row) => row.seq)).toEqual([3, 4, 5]);
    expect((await cli.agents.getRow('shared')).changeSeq).toBe(4);
  });
});
