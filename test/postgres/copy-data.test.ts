import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablePairs } from '../../src-api/db/table-pairs';
import { CLI_TEST_TIMEOUT, makeTempDir, runCli } from '../cli/cli-helpers';
import { freePort } from '../helpers/redis-server';
import { startPostgres, type TestPostgres } from '../helpers/postgres-server';
import { allRows, JSON_TEXT, seedSource } from './copy-data-fixture';

/**
 * Contract section 8: `npm run cli -- copy-data --from URL --to URL` copies a
 * whole directory between stores. The demo directory plus rows in every table
 * goes SQLite → PostgreSQL → a new SQLite file; `cli export` of the first and of
 * the last are the same bytes, and so is every row of every table. A real
 * PostgreSQL 15 and the real CLI in child processes.
 */
let postgres: TestPostgres;
let dir: string;
let source: string;
let final: string;
const PG_DATABASE = 'copied';
let pgUrl: string;
let copyIn: Awaited<ReturnType<typeof runCli>>;
let copyOut: Awaited<ReturnType<typeof runCli>>;

const TABLES = tablePairs().map((pair) => pair.name);

beforeAll(async () => {
  postgres = await startPostgres();
  dir = makeTempDir('agentdir-copy-data-');
  source = path.join(dir, 'source', 'agent-directory.sqlite');
  final = path.join(dir, 'final', 'agent-directory.sqlite');
  await seedSource(path.dirname(source), source);
  postgres.query(`CREATE DATABASE ${PG_DATABASE}`);
  pgUrl = postgres.urlOf(PG_DATABASE);
  copyIn = await runCli(['copy-data', '--from', `sqlite:${source}`, '--to', pgUrl]);
  copyOut = await runCli(['copy-data', '--from', pgUrl, '--to', `sqlite:${final}`]);
}, 240_000);
afterAll(() => {
  postgres?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Row counts of every table of the PostgreSQL database, as psql sees them. */
function pgCounts(database = PG_DATABASE): Record<string, number> {
  const union = TABLES.map((table) => `SELECT '${table}', count(*) FROM "${table}"`).join(' UNION ALL ');
  return Object.fromEntries(
    postgres
      .query(union, database)
      .split('\n')
      .map((line) => line.split('|'))
      .map(([table, n]) => [table!, Number(n)]),
  );
}

function sqliteCounts(file: string): Record<string, number> {
  return Object.fromEntries(Object.entries(allRows(file)).map(([table, rows]) => [table, rows.length]));
}

describe('cli copy-data SQLite → PostgreSQL → SQLite', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('copies every table, one summary line per table, exit 0 both ways', () => {
    expect(copyIn, copyIn.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(copyOut, copyOut.stderr).toMatchObject({ code: 0, stderr: '' });
    const counts = sqliteCounts(source);
    // Every table has rows: the demo, the services' rows and the edge rows.
    for (const table of TABLES) expect(counts[table], table).toBeGreaterThan(0);
    expect(counts.agents).toBe(406);
    const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
    for (const output of [copyIn.stdout, copyOut.stdout]) {
      const lines = output.trimEnd().split('\n');
      expect(lines.slice(0, -1).sort()).toEqual(TABLES.map((table) => `${table}: ${counts[table]!.toLocaleString('en-US')} rows`).sort());
      expect(lines.at(-1)).toMatch(
        new RegExp(`^Copied ${total.toLocaleString('en-US')} rows in ${TABLES.length} tables from \\S+ to \\S+ \\(\\d+\\.\\d s\\)$`),
      );
    }
    expect(copyIn.stdout).toContain(`from sqlite:${source} to postgres://postgres@127.0.0.1:${postgres.port}/${PG_DATABASE}`);
    expect(pgCounts()).toEqual(counts);
  });

  it('cli export of the source and of the final SQLite file are the same bytes', async () => {
    const exports = await Promise.all(
      [source, final].map(async (file, i) => {
        const out = path.join(dir, `export-${i}.jsonl`);
        const result = await runCli(['export', '--include-unlisted', '--database', `sqlite:${file}`, out]);
        expect(result, result.stderr).toMatchObject({ code: 0, stdout: `Exported 406 agents to ${out}\n` });
        return fs.readFileSync(out);
      }),
    );
    expect(exports[0]!.length).toBeGreaterThan(100_000);
    expect(exports[1]!.equals(exports[0]!)).toBe(true);
  });

  it('every row of every table is the same in the final SQLite file, value for value and type for type', () => {
    const before = allRows(source);
    const after = allRows(final);
    for (const table of TABLES) expect(after[table], table).toEqual(before[table]);
    // The edge values made it through PostgreSQL: 64-bit integers past 2^53, JSON text byte for byte.
    const edge = after.key_usage_daily!.flat();
    expect(edge).toContain(9_007_199_254_740_993n);
    expect(edge).toContain(-9_223_372_036_854_775_808n);
    expect(after.events!.flat()).toContain(JSON_TEXT);
  });

  it('PostgreSQL holds the values in their own types: booleans, bigints, doubles and json kept verbatim', () => {
    expect(
      postgres.query(
        'SELECT pg_typeof(listed)::text, pg_typeof(trust_score)::text, pg_typeof(change_seq)::text FROM agents LIMIT 1',
        PG_DATABASE,
      ),
    ).toBe('boolean|double precision|bigint');
    expect(postgres.query('SELECT count(*) FROM agents WHERE listed', PG_DATABASE)).toBe('400');
    expect(postgres.query(`SELECT data::text FROM events WHERE data::text = '${JSON_TEXT}'`, PG_DATABASE)).toBe(JSON_TEXT);
    expect(postgres.query('SELECT max(requests) FROM key_usage_daily', PG_DATABASE)).toBe('9007199254740993');
    // The agents' change cursor counts on past the copied change_seqs: the next write's is the largest + 1.
    expect(
      postgres.query('SELECT s.is_called AND s.last_value = (SELECT max(change_seq) FROM agents) FROM agents_change_seq s', PG_DATABASE),
    ).toBe('t');
  });

  it('a target that is not empty is refused, exit 1, and left as it was', async () => {
    const pgBefore = pgCounts();
    const toPg = await runCli(['copy-data', '--from', `sqlite:${source}`, '--to', pgUrl]);
    expect(toPg.code).toBe(1);
    expect(toPg.stdout).toBe('');
    expect(toPg.stderr).toMatch(
      /^error: the target postgres:\/\/postgres@127\.0\.0\.1:\d+\/copied is not empty \(\w+, \w+, \w+ and \d+ more have rows\): copy-data only fills an empty database\n$/,
    );
    expect(pgCounts()).toEqual(pgBefore);

    const finalBytes = fs.readFileSync(final);
    const toSqlite = await runCli(['copy-data', '--from', pgUrl, '--to', `sqlite:${final}`]);
    expect(toSqlite.code).toBe(1);
    expect(toSqlite.stderr).toContain(`error: the target sqlite:${final} is not empty (`);
    expect(fs.readFileSync(final).equals(finalBytes)).toBe(true);
  });

  it('bad URLs are usage errors (exit 2); an unreachable server, a missing source or the same database twice exit 1', async () => {
    const closedPort = await freePort();
    const [badFrom, noTo, badTo, unreachable, missing, same] = await Promise.all([
      runCli(['copy-data', '--from', 'mysql://127.0.0.1/agents', '--to', `sqlite:${dir}/x.sqlite`]),
      runCli(['copy-data', '--from', `sqlite:${source}`]),
      runCli(['copy-data', '--from', `sqlite:${source}`, '--to', 'sqlite:']),
      runCli(['copy-data', '--from', `postgres://someone:secret-word@127.0.0.1:${closedPort}/db`, '--to', `sqlite:${dir}/y.sqlite`]),
      runCli(['copy-data', '--from', `sqlite:${dir}/missing.sqlite`, '--to', `sqlite:${dir}/z.sqlite`]),
      runCli(['copy-data', '--from', `sqlite:${source}`, '--to', `sqlite:${source}`]),
    ]);
    expect(badFrom.code).toBe(2);
    expect(badFrom.stderr).toContain(
      '--from must be sqlite:<path> or postgres://user:password@host:port/database, got "mysql://127.0.0.1/agents"',
    );
    expect(noTo.code).toBe(2);
    expect(noTo.stderr).toContain("error: required option '--to <url>' not specified");
    expect(badTo.code).toBe(2);
    expect(badTo.stderr).toContain('--to sqlite: needs the path of the database file');
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toBe(
      `error: cannot connect to PostgreSQL at someone@127.0.0.1:${closedPort}/db: connection refused (is the server running?)\n`,
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`error: the source sqlite:${dir}/missing.sqlite does not exist\n`);
    expect(same.code).toBe(1);
    expect(same.stderr).toBe('error: --from and --to are the same database\n');
    for (const result of [badFrom, noTo, badTo, unreachable, missing, same]) {
      expect(result.stdout).toBe('');
      expect(result.stderr).not.toMatch(/^\s+at /m);
    }
    // Nothing was created for a copy that did not start.
    for (const name of ['x.sqlite', 'y.sqlite', 'z.sqlite', 'missing.sqlite'])
      expect(fs.existsSync(path.join(dir, name)), name).toBe(false);
  });

  it('is in the help: cli --help lists it, copy-data --help shows --from and --to', async () => {
    const [program, command] = await Promise.all([runCli(['--help']), runCli(['copy-data', '--help'])]);
    expect(program.code).toBe(0);
    expect(program.stdout).toMatch(/\n {2}copy-data \[options\] +Copy the whole directory/);
    expect(command.code).toBe(0);
    expect(command.stdout).toMatch(/^Usage: cli copy-data \[options\][\s\S]*--from <url>[\s\S]*--to <url>/);
  });
});
