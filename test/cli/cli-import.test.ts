import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { databasePath } from '../../src-api/config';
import { untilSeen } from '../helpers/change-seen';
import { json, startTestServer, type TestServer } from '../helpers/test-server';
import { databaseOf, onPostgres } from '../helpers/test-store';
import { count, jsonl, makeTempDir, record, runCli, select, SUMMARY, writeFile, CLI_TEST_TIMEOUT } from './cli-helpers';

/** The data dir's agents table, row by row (by id). */
const agentRows = (dataDir: string) => select(dataDir, ({ db, t }) => db.select().from(t.agents).orderBy(t.agents.id));

/** A data dir holding agent-one, agent-two and agent-three, imported by the CLI. */
async function seededDataDir(): Promise<{ dataDir: string; dir: string }> {
  const dir = makeTempDir('agentdir-cli-import-');
  const dataDir = path.join(dir, 'data');
  const file = writeFile(
    dir,
    'seed.jsonl',
    jsonl([record(1, { id: 'agent-one' }), record(2, { id: 'agent-two' }), record(3, { id: 'agent-three' })]),
  );
  const result = await runCli(['import', file, '--data-dir', dataDir]);
  expect(result.code).toBe(0);
  return { dataDir, dir };
}

describe('cli import', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('imports a JSON array: ids kept or generated, a summary line, nothing on stderr', async () => {
    const dir = makeTempDir('agentdir-cli-import-');
    const dataDir = path.join(dir, 'data');
    const file = writeFile(
      dir,
      'agents.json',
      JSON.stringify(
        [
          record(1, { id: 'agent-one' }),
          record(2),
          record(3, { verified: true, created_at: '2020-01-01T00:00:00Z', trust_score: 99, rating: { average: 5, count: 3 } }),
        ],
        null,
        2,
      ),
    );

    const result = await runCli(['import', file, '--data-dir', dataDir]);

    expect(result.stderr).toBe(''); // no progress bar when stderr is not a terminal
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(SUMMARY);
    expect(result.stdout).toMatch(/^Imported 3 agents: 3 created, 0 updated, 0 unchanged \(/);
    // SQLite: the data dir's file, created and migrated on first use; PostgreSQL: no file, the rows are in the database.
    expect(fs.existsSync(databasePath({ dataDir }))).toBe(!onPostgres);

    const rows = await select(dataDir, ({ db, t }) => db.select().from(t.agents).orderBy(t.agents.name));
    expect(rows.map((row) => row.name)).toEqual(['Agent 1', 'Agent 2', 'Agent 3']);
    expect(rows[0]!.id).toBe('agent-one');
    expect(rows[1]!.id).toMatch(/^agent-2-[a-z0-9]{6}$/);
    expect(rows[2]).toMatchObject({ verified: true, listed: true, createdAt: '2020-01-01T00:00:00.000Z', ratingCount: 0 });
    // trust_score is computed (35 verified + 15 age + 20 completeness), never taken from the file.
    expect(rows[2]!.trustScore).toBe(70);
    expect(new Set(rows.map((row) => row.changeSeq)).size).toBe(3);
    expect(await count(dataDir, 'events')).toBe(0);
  });

  it('imports JSONL: updates by id (only the given fields), creates unknown ids, counts unchanged records', async () => {
    const { dataDir, dir } = await seededDataDir();
    const before = new Map((await agentRows(dataDir)).map((row) => [row.id, row]));
    const file = writeFile(
      dir,
      'changes.jsonl',
      [
        JSON.stringify({ id: 'agent-one', tagline: 'A brand new tagline' }),
        '',
        JSON.stringify(record(2, { id: 'agent-two' })),
        '   ',
        JSON.stringify(record(4, { id: 'chosen-id_4' })),
        JSON.stringify(record(5)),
        '',
      ].join('\n'),
    );

    const result = await runCli(['import', file, '--data-dir', dataDir]);

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Imported 4 agents: 2 created, 1 updated, 1 unchanged \(\d+\.\d s\)\n$/);
    const after = new Map((await agentRows(dataDir)).map((row) => [row.id, row]));
    expect(after.size).toBe(5);
    const one = after.get('agent-one')!;
    const oneBefore = before.get('agent-one')!;
    expect(one).toMatchObject({ tagline: 'A brand new tagline', name: 'Agent 1', description: oneBefore.description, version: 2 });
    expect(one.changeSeq).toBeGreaterThan(Math.max(...[...before.values()].map((row) => row.changeSeq)));
    expect(one.updatedAt > oneBefore.updatedAt).toBe(true);
    expect(one.createdAt).toBe(oneBefore.createdAt);
    expect(after.get('agent-two')).toEqual(before.get('agent-two')); // unchanged: not written at all
    expect(after.get('chosen-id_4')).toMatchObject({ name: 'Agent 4', version: 1 });
    expect([...after.values()].find((row) => row.name === 'Agent 5')?.id).toMatch(/^agent-5-[a-z0-9]{6}$/);
  });

  it('reports an invalid record with its exact line, writes nothing and exits 1', async () => {
    const { dataDir, dir } = await seededDataDir();
    const before = await agentRows(dataDir);
    const lines = [
      JSON.stringify({ id: 'agent-one', tagline: 'Changed, but must not be written' }), // line 1
      JSON.stringify(record(10)), // line 2
      '', // line 3
      JSON.stringify(record(11)), // line 4
      JSON.stringify(record(12)), // line 5
      JSON.stringify(record(13)), // line 6
      JSON.stringify(record(14, { source_url: 'ftp://example.com/agent-14' })), // line 7
      JSON.stringify(record(15)), // line 8
      JSON.stringify({ id: 'no-such-agent', tagline: 'an update of an unknown id' }), // line 9
    ];
    const file = writeFile(dir, 'bad.jsonl', lines.join('\n') + '\n');

    const result = await runCli(['import', file, '--data-dir', dataDir]);

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')).toEqual([
      'line 7: /source_url must be an absolute http or https URL',
      'line 9: /name is required for a new agent (no agent has the id "no-such-agent")',
      'line 9: /source_url is required for a new agent (no agent has the id "no-such-agent")',
      `error: ${file}: 2 of 8 records are invalid; nothing was imported`,
      '',
    ]);
    expect(await agentRows(dataDir)).toEqual(before);
    expect(await count(dataDir, 'agents')).toBe(3);
  });

  it('reports invalid elements of a JSON array with their index and line', async () => {
    const { dataDir, dir } = await seededDataDir();
    const file = writeFile(
      dir,
      'bad.json',
      [
        '[',
        `  ${JSON.stringify(record(20))},`, // line 2, index 0
        '  {', // line 3, index 1
        '    "name": "",',
        '    "tagline": "fine",',
        '    "type": "robot",',
        '    "source_url": "https://example.com/agents/agent-21",',
        '    "colour": "blue"',
        '  },',
        `  ${JSON.stringify(record(22, { id: 'not a valid id!' }))}`, // line 10, index 2
        ']',
      ].join('\n'),
    );

    const result = await runCli(['import', file, '--data-dir', dataDir]);

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('line 3 (index 1): /name must not be empty\n');
    expect(result.stderr).toContain('line 3 (index 1): /type must be one of "assistant", "coding"');
    expect(result.stderr).toContain('line 3 (index 1): /colour is not a field of an agent\n');
    expect(result.stderr).toContain('line 10 (index 2): /id must contain only letters, digits, "-" and "_"\n');
    expect(result.stderr).toContain('2 of 3 records are invalid; nothing was imported');
    expect(result.stderr).not.toMatch(/^\s+at /m); // no stack trace
    expect(await count(dataDir, 'agents')).toBe(3);
  });

  it('rejects malformed JSONL and JSON with the line of the error', async () => {
    const { dataDir, dir } = await seededDataDir();
    const brokenJsonl = writeFile(
      dir,
      'broken.jsonl',
      [JSON.stringify(record(30)), JSON.stringify(record(31)), '{"name": "Agent 32", "tagline": "x",}', JSON.stringify(record(33))].join(
        '\n',
      ),
    );
    const jsonlResult = await runCli(['import', brokenJsonl, '--data-dir', dataDir]);
    expect(jsonlResult.code).toBe(1);
    expect(jsonlResult.stdout).toBe('');
    expect(jsonlResult.stderr).toMatch(
      /^line 3: invalid JSON: .+\nerror: .*broken\.jsonl is not valid JSONL \(1 error\); nothing was imported\n$/,
    );

    const brokenArray = writeFile(
      dir,
      'broken.json',
      [
        '[',
        `  ${JSON.stringify(record(40))},`,
        '  {"name": "Agent 41",',
        '   "tagline": "x"',
        '   "type": "coding"},',
        `  ${JSON.stringify(record(42))}`,
      ].join('\n'),
    );
    const arrayResult = await runCli(['import', brokenArray, '--data-dir', dataDir]);
    expect(arrayResult.code).toBe(1);
    // The comma missing after line 4 is found at the next token, on line 5 (as any JSON parser reports it).
    expect(arrayResult.stderr).toMatch(/^line 5 \(index 1\): invalid JSON: \S.*$/m);
    expect(arrayResult.stderr).toMatch(/line \d+: invalid JSON: the array is not closed/);
    expect(arrayResult.stderr).toContain('is not valid JSON (2 errors); nothing was imported');
    expect(await count(dataDir, 'agents')).toBe(3);
  });

  it('rejects a source_url used twice in the file or by another agent, but allows moving one between agents', async () => {
    const { dataDir, dir } = await seededDataDir();
    const clashing = writeFile(
      dir,
      'clash.jsonl',
      jsonl([
        record(50, { source_url: 'https://www.example.com/agents/agent-1/' }), // the source of agent-one, spelt differently
        record(51),
        record(52, { source_url: 'https://EXAMPLE.com/agents/agent-51.git' }), // the same as line 2
      ]),
    );
    const result = await runCli(['import', clashing, '--data-dir', dataDir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'line 1: /source_url "https://www.example.com/agents/agent-1/" is already the source of agent "agent-one"\n',
    );
    expect(result.stderr).toContain(
      'line 3: /source_url "https://EXAMPLE.com/agents/agent-51.git" is the same source as the record at line 2\n',
    );
    expect(result.stderr).toContain('2 of 3 records are invalid');
    expect(await count(dataDir, 'agents')).toBe(3);

    // agent-one takes agent-two's source while agent-two moves on: valid once the import is done.
    const swap = writeFile(
      dir,
      'swap.jsonl',
      jsonl([
        { id: 'agent-one', source_url: 'https://example.com/agents/agent-2' },
        { id: 'agent-two', source_url: 'https://example.com/agents/agent-2-moved' },
      ]),
    );
    const swapped = await runCli(['import', swap, '--data-dir', dataDir]);
    expect(swapped.stderr).toBe('');
    expect(swapped.stdout).toMatch(/^Imported 2 agents: 0 created, 2 updated, 0 unchanged/);
    expect(
      await select(dataDir, ({ db, t }) => db.select({ sourceUrl: t.agents.sourceUrl }).from(t.agents).where(eq(t.agents.id, 'agent-one'))),
    ).toEqual([{ sourceUrl: 'https://example.com/agents/agent-2' }]);
  });

  it('emits no webhook events by default, and records them with --emit-events', async () => {
    const { dataDir, dir } = await seededDataDir();
    expect(await count(dataDir, 'events')).toBe(0);

    const file = writeFile(
      dir,
      'events.jsonl',
      jsonl([
        record(60, { id: 'agent-sixty' }),
        { id: 'agent-one', tagline: 'Now with events', verified: true },
        record(2, { id: 'agent-two' }),
      ]),
    );
    const result = await runCli(['import', file, '--data-dir', dataDir, '--emit-events']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Imported 3 agents: 1 created, 1 updated, 1 unchanged/);

    const events = await select(dataDir, ({ db, t }) =>
      db.select({ type: t.events.type, data: t.events.data }).from(t.events).orderBy(t.events.type),
    );
    expect(events).toEqual([
      { type: 'agent.registered', data: { agent_id: 'agent-sixty', name: 'Agent 60', source_url: 'https://example.com/agents/agent-60' } },
      { type: 'agent.updated', data: { agent_id: 'agent-one', name: 'Agent 1', changed_fields: ['tagline'] } },
      { type: 'agent.verified', data: { agent_id: 'agent-one', name: 'Agent 1', via: 'import' } },
    ]);

    // The same kind of change without the flag: still no events.
    const quiet = writeFile(dir, 'quiet.jsonl', jsonl([record(61), { id: 'agent-three', tagline: 'Quietly changed' }]));
    const quietResult = await runCli(['import', quiet, '--data-dir', dataDir]);
    expect(quietResult.stdout).toMatch(/^Imported 2 agents: 1 created, 1 updated, 0 unchanged/);
    expect(await count(dataDir, 'events')).toBe(3);
  });

  it('says clearly when the file does not exist', async () => {
    const dataDir = makeTempDir('agentdir-cli-import-');
    const missing = path.join(dataDir, 'nope.jsonl');
    const result = await runCli(['import', missing, '--data-dir', dataDir]);
    expect(result).toEqual({ code: 1, stdout: '', stderr: `error: cannot read ${missing}: no such file\n` });
  });

  // The data dir names the database only on SQLite (its file); on PostgreSQL AGENTDIR_DATABASE_URL and --database do (next case).
  it.skipIf(onPostgres)('uses AGENTDIR_DATA_DIR when --data-dir is not given, and the flag wins over it', async () => {
    const dir = makeTempDir('agentdir-cli-import-');
    const fromEnv = path.join(dir, 'env-data');
    const fromFlag = path.join(dir, 'flag-data');
    const file = writeFile(dir, 'one.jsonl', jsonl([record(70)]));
    expect((await runCli(['import', file], { AGENTDIR_DATA_DIR: fromEnv })).code).toBe(0);
    expect((await runCli(['import', file, '--data-dir', fromFlag], { AGENTDIR_DATA_DIR: fromEnv })).code).toBe(0);
    expect(await count(fromEnv, 'agents')).toBe(1);
    expect(await count(fromFlag, 'agents')).toBe(1);
  });

  it.runIf(onPostgres)('uses AGENTDIR_DATABASE_URL when --database is not given, and the flag wins over it', async () => {
    const dir = makeTempDir('agentdir-cli-import-');
    const fromEnv = path.join(dir, 'env-data');
    const fromFlag = path.join(dir, 'flag-data');
    const file = writeFile(dir, 'one.jsonl', jsonl([record(70)]));
    const env = { AGENTDIR_DATA_DIR: path.join(dir, 'data'), AGENTDIR_DATABASE_URL: await databaseOf(fromEnv) };
    expect((await runCli(['import', file], env)).code).toBe(0);
    expect((await runCli(['import', file, '--database', await databaseOf(fromFlag)], env)).code).toBe(0);
    expect(await count(fromEnv, 'agents')).toBe(1);
    expect(await count(fromFlag, 'agents')).toBe(1);
  });
});

describe('cli import while a server runs on the data dir', { timeout: CLI_TEST_TIMEOUT }, () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('the server sees imported agents at once, without a restart', async () => {
    const dir = makeTempDir('agentdir-cli-import-');
    const dataDir = path.join(dir, 'data');
    server = await startTestServer({ dataDir });
    expect((await server.api('/agents/imported-live')).status).toBe(404);

    const file = writeFile(dir, 'live.jsonl', jsonl([record(80, { id: 'imported-live', name: 'Imported Live Agent' })]));
    const result = await runCli(['import', file, '--data-dir', dataDir]);
    expect(result.code).toBe(0);
    // Seen once the server's change cursor has the import (PostgreSQL: when the commit's notification arrives).
    const [imported] = await select(dataDir, ({ db, t }) => db.select({ seq: t.agents.changeSeq }).from(t.agents));
    await untilSeen(server.services.agents.latestChangeSeqAsync, imported!.seq);

    const response = await server.api('/agents/imported-live');
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({ id: 'imported-live', name: 'Imported Live Agent', verified: false });
    expect((await json(await server.api('/agents'))).total).toBe(1);

    // The search index catches up through change_seq, which the import sets like any other write.
    const search = await json(await server.api('/agents/search?q=Imported%20Live'));
    expect(search.agents.map((agent: { id: string }) => agent.id)).toContain('imported-live');
  });
});
