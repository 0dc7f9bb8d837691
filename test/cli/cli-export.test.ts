import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { count, jsonl, makeTempDir, record, runCli, select, writeFile, CLI_TEST_TIMEOUT } from './cli-helpers';

const PROFILE_FIELDS = [
  'author',
  'capabilities',
  'categories',
  'created_at',
  'description',
  'id',
  'name',
  'owner',
  'rating',
  'source_url',
  'status',
  'status_message',
  'tagline',
  'trust_score',
  'type',
  'updated_at',
  'verified',
];

describe('cli export', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('round-trips: export, import into an empty data dir, export again gives the same bytes', async () => {
    const dir = makeTempDir('agentdir-cli-export-');
    const first = path.join(dir, 'first');
    const second = path.join(dir, 'second');
    const source = writeFile(
      dir,
      'source.jsonl',
      jsonl([
        record(1, { id: 'alpha' }),
        record(2, { id: 'beta', verified: true, created_at: '2021-03-04T05:06:07.089Z', updated_at: '2022-01-02T03:04:05.000Z' }),
        record(3, { description: 'Unicode: “quotes”, émoji 🚀, a line\nbreak', capabilities: [], categories: [], type: 'other' }),
        record(4, { author: '', source_url: 'https://example.org/a/b?x=1', status: 'deprecated', status_message: 'Use alpha' }),
      ]),
    );
    expect((await runCli(['import', source, '--data-dir', first])).code).toBe(0);

    const exportA = path.join(dir, 'a.jsonl');
    const resultA = await runCli(['export', exportA, '--data-dir', first]);
    expect(resultA).toEqual({ code: 0, stdout: `Exported 4 agents to ${exportA}\n`, stderr: '' });

    const lines = fs.readFileSync(exportA, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    const profiles = lines.map((line) => JSON.parse(line));
    for (const profile of profiles) expect(Object.keys(profile).sort()).toEqual(PROFILE_FIELDS);
    expect(profiles.find((p) => p.id === 'beta')).toMatchObject({
      verified: true,
      created_at: '2021-03-04T05:06:07.089Z',
      updated_at: '2022-01-02T03:04:05.000Z',
    });

    const reimport = await runCli(['import', exportA, '--data-dir', second]);
    expect(reimport.code).toBe(0);
    expect(reimport.stdout).toMatch(/^Imported 4 agents: 4 created, 0 updated, 0 unchanged/);

    const exportB = path.join(dir, 'b.jsonl');
    expect((await runCli(['export', exportB, '--data-dir', second])).code).toBe(0);
    expect(fs.readFileSync(exportB, 'utf8')).toBe(fs.readFileSync(exportA, 'utf8'));

    // Importing an export into the data dir it came from changes nothing.
    const again = await runCli(['import', exportA, '--data-dir', first]);
    expect(again.stdout).toMatch(/^Imported 4 agents: 0 created, 0 updated, 4 unchanged/);
  });

  it('writes to stdout with "-" (summary on stderr) and leaves no temporary file behind', async () => {
    const dir = makeTempDir('agentdir-cli-export-');
    const dataDir = path.join(dir, 'data');
    const source = writeFile(dir, 'source.jsonl', jsonl([record(1), record(2)]));
    expect((await runCli(['import', source, '--data-dir', dataDir])).code).toBe(0);

    const file = path.join(dir, 'out', 'agents.jsonl');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, 'old content\n');
    expect((await runCli(['export', file, '--data-dir', dataDir])).code).toBe(0);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['agents.jsonl']); // replaced by rename: no temp file left

    const toStdout = await runCli(['export', '-', '--data-dir', dataDir]);
    expect(toStdout.code).toBe(0);
    expect(toStdout.stderr).toBe('Exported 2 agents to stdout\n');
    expect(toStdout.stdout).toBe(fs.readFileSync(file, 'utf8'));
  });

  it('exports unlisted agents only with --include-unlisted, marked so that they import back unlisted', async () => {
    const dir = makeTempDir('agentdir-cli-export-');
    const first = path.join(dir, 'first');
    const second = path.join(dir, 'second');
    const source = writeFile(dir, 'source.jsonl', jsonl([record(1, { id: 'shown' }), record(2, { id: 'hidden', listed: false })]));
    expect((await runCli(['import', source, '--data-dir', first])).code).toBe(0);

    const listedOnly = await runCli(['export', '-', '--data-dir', first]);
    expect(
      listedOnly.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).id),
    ).toEqual(['shown']);

    const everything = await runCli(['export', '-', '--data-dir', first, '--include-unlisted']);
    const lines = everything.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => [line.id, line.listed])).toEqual([
      ['hidden', false],
      ['shown', true],
    ]);

    const file = writeFile(dir, 'all.jsonl', everything.stdout);
    expect((await runCli(['import', file, '--data-dir', second])).code).toBe(0);
    const rows = await select(second, ({ db, t }) =>
      db.select({ id: t.agents.id, listed: t.agents.listed }).from(t.agents).orderBy(t.agents.id),
    );
    expect(rows).toEqual([
      { id: 'hidden', listed: false },
      { id: 'shown', listed: true },
    ]);
    const roundTrip = await runCli(['export', '-', '--data-dir', second, '--include-unlisted']);
    expect(roundTrip.stdout).toBe(everything.stdout);
  });

  it('exports an empty directory as an empty file, and fails clearly when it cannot write', async () => {
    const dir = makeTempDir('agentdir-cli-export-');
    const dataDir = path.join(dir, 'data');
    const file = path.join(dir, 'empty.jsonl');
    expect(await runCli(['export', file, '--data-dir', dataDir])).toEqual({
      code: 0,
      stdout: `Exported 0 agents to ${file}\n`,
      stderr: '',
    });
    expect(fs.readFileSync(file, 'utf8')).toBe('');
    expect(await count(dataDir, 'agents')).toBe(0);

    const nowhere = path.join(dir, 'missing-folder', 'agents.jsonl');
    expect(await runCli(['export', nowhere, '--data-dir', dataDir])).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: cannot write ${nowhere}: the folder does not exist\n`,
    });
    const intoDir = await runCli(['export', dir, '--data-dir', dataDir]);
    expect(intoDir).toMatchObject({ code: 1, stderr: `error: cannot write ${dir}: it is a directory\n` });
  });
});
