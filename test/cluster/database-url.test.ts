import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT, jsonl, runCli, writeFile } from '../cli/cli-helpers';
import { startPostgres, type TestPostgres } from '../helpers/postgres-server';
import { makeTempDir } from '../helpers/test-server';

/**
 * Contract section 8, first part: `--database URL` (AGENTDIR_DATABASE_URL) on serve
 * and every cli command: `sqlite:<path>` or `postgres://…` (a real PostgreSQL 15,
 * Debian's, run as the postgres user on a free port). A PostgreSQL that cannot be
 * reached is one line at start-up; backups, which copy the SQLite file, are refused
 * on PostgreSQL with what to use instead.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(() => postgres?.stop());

/** `serve` as a real process; resolves with its exit code and output once it exits (or is stopped after `ms`). */
function runServe(args: string[], env: NodeJS.ProcessEnv = {}, ms = 45_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src-api/serve.ts', '--port', '0', '--no-demo-data', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Agent Directory API:')) child.kill('SIGTERM');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('the PostgreSQL test server', () => {
  it('is a real PostgreSQL 15 that answers on its URL', () => {
    expect(postgres.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    expect(postgres.query('SHOW server_version')).toMatch(/^15\./);
    expect(postgres.query("SELECT current_user || ' ' || (2 + 3)")).toBe('postgres 5');
  });
});

describe('--database', () => {
  it('serve runs on postgres:// (flag or AGENTDIR_DATABASE_URL), migrating an empty database; an unreachable one is one line, exit 1', async () => {
    postgres.query('CREATE DATABASE serve_flag');
    const dataDir = makeTempDir('agentdir-database-pg-');
    const { output } = await runServe(['--data-dir', dataDir, '--database', postgres.urlOf('serve_flag')]);
    expect(output).toContain('Agent Directory API:');
    expect(fs.existsSync(path.join(dataDir, 'agent-directory.sqlite'))).toBe(false);
    expect(postgres.query('SELECT count(*) FROM agents', 'serve_flag')).toBe('0');

    postgres.query('CREATE DATABASE serve_env');
    const fromEnv = await runServe(['--data-dir', dataDir], { AGENTDIR_DATABASE_URL: postgres.urlOf('serve_env') });
    expect(fromEnv.output).toContain('Agent Directory API:');
    expect(postgres.query("SELECT count(*) > 0 FROM information_schema.tables WHERE table_name = 'agents'", 'serve_env')).toBe('t');

    const unreachable = await runServe(['--data-dir', dataDir, '--database', postgres.urlOf('no_such_database')]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.output.trim()).toBe(
      `serve: cannot connect to PostgreSQL at postgres@127.0.0.1:${postgres.port}/no_such_database: no such database`,
    );
  }, 120_000);

  it('serve rejects a URL that is neither sqlite: nor postgres://', async () => {
    const { code, output } = await runServe([
      '--data-dir',
      makeTempDir('agentdir-database-bad-'),
      '--database',
      'mysql://127.0.0.1/agents',
    ]);
    expect(code).not.toBe(0);
    expect(output).toContain(
      '--database must be sqlite:<path> or postgres://user:password@host:port/database, got "mysql://127.0.0.1/agents"',
    );
  }, 60_000);

  it(
    'cli commands take it too: sqlite:<path> imports into that file, postgres:// into that database; backups refuse PostgreSQL',
    async () => {
      const dir = makeTempDir('agentdir-database-cli-');
      const file = path.join(dir, 'elsewhere', 'directory.sqlite');
      const input = writeFile(
        dir,
        'agents.jsonl',
        jsonl([{ id: 'db-url-agent', name: 'Db Url Agent', tagline: 'Lives in a chosen file', source_url: 'https://example.com/db-url' }]),
      );
      const imported = await runCli(['import', input, '--data-dir', path.join(dir, 'data'), '--database', `sqlite:${file}`]);
      expect(imported.stderr).toBe('');
      expect(imported.code).toBe(0);
      expect(fs.existsSync(file)).toBe(true);
      expect(fs.existsSync(path.join(dir, 'data', 'agent-directory.sqlite'))).toBe(false);
      const exported = await runCli(['export', '-'], { AGENTDIR_DATABASE_URL: `sqlite:${file}` });
      expect(exported.code).toBe(0);
      expect(JSON.parse(exported.stdout.trim())).toMatchObject({ id: 'db-url-agent', name: 'Db Url Agent' });

      postgres.query('CREATE DATABASE cli_import');
      // What SQLite exported, imported into PostgreSQL, exports the same bytes.
      const exportedFile = writeFile(dir, 'exported.jsonl', exported.stdout);
      const intoPostgres = await runCli(['import', exportedFile, '--data-dir', path.join(dir, 'unused'), '--database', postgres.urlOf('cli_import')]);
      expect(intoPostgres.stderr).toBe('');
      expect(intoPostgres.code).toBe(0);
      const fromPostgres = await runCli(['export', '-'], { AGENTDIR_DATABASE_URL: postgres.urlOf('cli_import') });
      expect(fromPostgres.stdout).toBe(exported.stdout);
      for (const command of ['backup', 'restore']) {
        const refused = await runCli([command, path.join(dir, 'copy.sqlite'), '--database', postgres.urlOf('cli_import')]);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('error: backups copy the SQLite file, and this directory is on PostgreSQL: back it up with pg_dump');
      }

      // restore replaces the data dir's file only: it says so rather than restore beside the database asked for.
      const backup = path.join(dir, 'copy.sqlite');
      const backedUp = await runCli(['backup', backup, '--data-dir', path.join(dir, 'data'), '--database', `sqlite:${file}`]);
      expect(backedUp.stderr).toBe('');
      expect(backedUp.code).toBe(0);
      const restore = await runCli(['restore', backup, '--data-dir', path.join(dir, 'restored'), '--database', `sqlite:${file}`]);
      expect(restore.code).toBe(1);
      expect(restore.stderr).toContain('error: restore replaces the database of --data-dir; leave --database');
      expect(fs.existsSync(path.join(dir, 'restored'))).toBe(false);
    },
    CLI_TEST_TIMEOUT,
  );
});
