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
 * and every cli command. `sqlite:<path>` works; `postgres://…` is recognised and
 * refused at start-up, clearly, until the PostgreSQL store exists (issue 16). The
 * PostgreSQL here is real (Debian's 15, run as the postgres user on a free port),
 * so the URL that is refused is one a server would accept.
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
  it('serve refuses postgres:// at start-up with a clear "not supported yet", exit 1, nothing listening', async () => {
    const dataDir = makeTempDir('agentdir-database-pg-');
    const { code, output } = await runServe(['--data-dir', dataDir, '--database', postgres.url]);
    expect(code).toBe(1);
    expect(output).toContain('serve: PostgreSQL (--database postgres://…) is not supported yet');
    expect(output).not.toContain('Agent Directory API:');
    expect(fs.existsSync(path.join(dataDir, 'agent-directory.sqlite'))).toBe(false);

    const fromEnv = await runServe(['--data-dir', dataDir], { AGENTDIR_DATABASE_URL: postgres.url });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.output).toContain('is not supported yet');
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
    'cli commands take it too: sqlite:<path> imports into that file, postgres:// is refused with exit 1',
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

      const refused = await runCli(['keys', 'list', '--database', postgres.url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('error: PostgreSQL (--database postgres://…) is not supported yet');

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
