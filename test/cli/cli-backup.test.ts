import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { createConfig, databasePath } from '../../src-api/config';
import { openDatabase, type Db } from '../../src-api/db/client';
import { exportAgentsSqlite } from '../../src-api/modules/agents/agents-export';
import { createServices } from '../../src-api/services';
import { agentInput } from '../helpers/test-server';
import { onPostgres } from '../helpers/test-store';
import { CLI_TEST_TIMEOUT, count, jsonl, makeTempDir, record, runCli, select, writeFile } from './cli-helpers';

/**
 * `cli backup` while a real `serve` process takes a burst of 1,000 writes, then
 * `cli restore` into an empty data dir: the restored directory exports exactly
 * what the source exported at the backup's moment, and a server serves it.
 *
 * The moment: the writes are made one after another, and after each one the
 * test exports the source (in one read transaction with its change cursor,
 * max(change_seq)); the backup holds the cursor of the moment it copied, so
 * the export at that cursor is the one the restore must reproduce.
 *
 * Backups copy the SQLite file (and check its mode): with AGENTDIR_TEST_STORE=postgres these cases
 * skip, and the last one checks that both commands refuse PostgreSQL and say what to use instead.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const AGENTS = 30;
const BURST = 1_000;
const children = new Set<ChildProcess>();

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

async function startServe(dataDir: string): Promise<{ child: ChildProcess; apiBaseUrl: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src-api/serve.ts', '--port', '0', '--data-dir', dataDir, '--no-demo-data', '--rate-limit', 'off'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  let output = '';
  const apiBaseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start within 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Agent Directory API: (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before listening:\n${output}`));
    });
  });
  return { child, apiBaseUrl };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  children.delete(child);
}

/** The source's export and change cursor, read in one snapshot. */
function snapshot(db: Db): { cursor: number; text: string } {
  return db.$client.transaction(() => {
    const { cursor } = db.$client.prepare('SELECT coalesce(max(change_seq), 0) AS cursor FROM agents').get() as { cursor: number };
    let text = '';
    exportAgentsSqlite(db, (chunk) => (text += chunk));
    return { cursor, text };
  })();
}

function cursorOf(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT max(change_seq) AS cursor FROM agents').get() as { cursor: number }).cursor;
  } finally {
    db.close();
  }
}

describe.skipIf(onPostgres)('backup during writes, then restore', () => {
  it(
    'restores to a directory whose export equals the source export at the backup moment, and serves it',
    async () => {
      const work = makeTempDir('agentdir-backup-');
      const source = path.join(work, 'source');
      const seeded = openDatabase(databasePath({ dataDir: source }));
      const seedServices = createServices({ db: seeded, config: createConfig({ dataDir: source }) });
      const ids: string[] = [];
      for (let i = 0; i < AGENTS; i++)
        ids.push((await seedServices.agents.edits.create(agentInput({ name: `Backup Agent ${i}` }), { emitEvents: false })).id);
      seeded.$client.close();

      const server = await startServe(source);
      const reader = openDatabase(databasePath({ dataDir: source }));
      try {
        // Let the server's warm-up settle before the burst.
        for (let i = 0; i < 100; i++) {
          const health = (await (await fetch(`${server.apiBaseUrl}/health`)).json()) as { agents_indexed: number };
          if (health.agents_indexed === AGENTS) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const exportsByCursor = new Map<number, string>();
        const before = snapshot(reader);
        exportsByCursor.set(before.cursor, before.text);

        const backupFile = path.join(work, 'directory-backup.sqlite');
        let backupDone = false;
        let backup: Promise<Awaited<ReturnType<typeof runCli>>> | undefined;
        let writes = 0;
        // The burst: 1,000 reviews, one after another, each changing its agent's rating and trust score;
        // the backup starts a little way in (and the burst goes on until it has finished).
        while (writes < BURST || !backupDone) {
          if (writes === 50) backup = runCli(['backup', backupFile, '--data-dir', source]).finally(() => (backupDone = true));
          const response = await fetch(`${server.apiBaseUrl}/agents/${ids[writes % AGENTS]}/reviews`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ rating: 1 + (writes % 5), comment: `burst ${writes}` }),
          });
          expect(response.status).toBe(201);
          writes++;
          const now = snapshot(reader);
          exportsByCursor.set(now.cursor, now.text);
        }
        const after = snapshot(reader);

        const result = await backup!;
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
        expect(result.stdout).toMatch(/^Backed up 30 agents \(change cursor \d+, [\d.]+ MB\) to .* at \d{4}-\d\d-\d\dT/);
        expect(fs.statSync(backupFile).mode & 0o777).toBe(0o600);

        // Taken mid-burst, at a moment the source passed through.
        const cursor = cursorOf(backupFile);
        expect(cursor).toBeGreaterThan(before.cursor);
        expect(cursor).toBeLessThan(after.cursor);
        const expected = exportsByCursor.get(cursor);
        expect(expected).toBeDefined();
        expect(result.stdout).toContain(`change cursor ${cursor},`);

        // Restore into an empty data dir, export it with the CLI: byte for byte the source's export at that moment.
        const restored = path.join(work, 'restored');
        const restore = await runCli(['restore', backupFile, '--data-dir', restored]);
        expect(restore.stderr).toBe('');
        expect(restore).toMatchObject({ code: 0, stdout: `Restored 30 agents from ${backupFile} into ${restored}\n` });
        expect(fs.statSync(databasePath({ dataDir: restored })).mode & 0o777).toBe(0o600);
        const exportFile = path.join(work, 'restored.jsonl');
        expect((await runCli(['export', exportFile, '--data-dir', restored])).code).toBe(0);
        expect(fs.readFileSync(exportFile, 'utf8')).toBe(expected);
        expect(expected).not.toBe(after.text);

        // Refused: a data dir that is not empty, and --force on the data dir of the running server.
        const again = await runCli(['restore', backupFile, '--data-dir', restored]);
        expect(again.code).toBe(1);
        expect(again.stderr).toMatch(/is not empty; restore into an empty data dir, or pass --force/);
        const underServer = await runCli(['restore', backupFile, '--data-dir', source, '--force']);
        expect(underServer.code).toBe(1);
        expect(underServer.stderr).toMatch(/is in use/);

        // The restored server starts and serves the restored directory.
        const second = await startServe(restored);
        try {
          const health = (await (await fetch(`${second.apiBaseUrl}/health`)).json()) as { agents_indexed: number };
          expect(health.agents_indexed).toBe(AGENTS);
          const firstLine = JSON.parse(expected!.split('\n')[0]!) as { id: string };
          const served = await fetch(`${second.apiBaseUrl}/agents/${firstLine.id}`);
          expect(served.status).toBe(200);
          expect(await served.json()).toEqual(firstLine);
        } finally {
          await stop(second.child);
        }
      } finally {
        reader.$client.close();
        await stop(server.child);
      }
    },
    CLI_TEST_TIMEOUT * 2,
  );
});

describe.skipIf(onPostgres)('restore refuses what is not a backup of ours', () => {
  it(
    'rejects a text file and a foreign SQLite database, writing nothing; --force replaces a stopped data dir',
    async () => {
      const work = makeTempDir('agentdir-restore-');
      const target = path.join(work, 'target');

      const text = path.join(work, 'notes.txt');
      fs.writeFileSync(text, 'hello\n');
      const notSqlite = await runCli(['restore', text, '--data-dir', target]);
      expect(notSqlite).toMatchObject({ code: 1, stderr: `error: ${text} is not a SQLite database\n` });

      const foreign = path.join(work, 'foreign.sqlite');
      const db = new Database(foreign);
      db.exec('CREATE TABLE things (id INTEGER PRIMARY KEY)');
      db.close();
      const notOurs = await runCli(['restore', foreign, '--data-dir', target]);
      expect(notOurs).toMatchObject({ code: 1, stderr: `error: ${foreign} is a SQLite database, but not one of Agent Directory\n` });
      expect(fs.existsSync(target)).toBe(false);

      // A stopped data dir with other data: only with --force, and then it holds the backup's agents.
      const source = path.join(work, 'source');
      const seeded = openDatabase(databasePath({ dataDir: source }));
      await createServices({ db: seeded, config: createConfig({ dataDir: source }) }).agents.edits.create(
        agentInput({ name: 'Kept Agent' }),
        {
          emitEvents: false,
        },
      );
      seeded.$client.close();
      const backupFile = path.join(work, 'one.sqlite');
      expect((await runCli(['backup', backupFile, '--data-dir', source])).code).toBe(0);
      const other = path.join(work, 'other');
      const otherDb = openDatabase(databasePath({ dataDir: other }));
      await createServices({ db: otherDb, config: createConfig({ dataDir: other }) }).agents.edits.create(
        agentInput({ name: 'Replaced Agent' }),
        {
          emitEvents: false,
        },
      );
      otherDb.$client.close();
      expect((await runCli(['restore', backupFile, '--data-dir', other])).code).toBe(1);
      expect((await runCli(['restore', backupFile, '--data-dir', other, '--force'])).code).toBe(0);
      const names = (await runCli(['export', '-', '--data-dir', other])).stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { name: string }).name);
      expect(names).toEqual(['Kept Agent']);
    },
    CLI_TEST_TIMEOUT,
  );
});

describe.runIf(onPostgres)('backup and restore on PostgreSQL', () => {
  it(
    'refuse with exit 1, pointing to pg_dump and copy-data, and write nothing: no file, the database as it was',
    async () => {
      const work = makeTempDir('agentdir-backup-pg-');
      const dataDir = path.join(work, 'data');
      expect((await runCli(['import', writeFile(work, 'one.jsonl', jsonl([record(1)])), '--data-dir', dataDir])).code).toBe(0);
      const file = path.join(work, 'copy.sqlite');
      for (const command of ['backup', 'restore']) {
        const refused = await runCli([command, file, '--data-dir', dataDir]);
        expect(refused).toEqual({
          code: 1,
          stdout: '',
          stderr:
            'error: backups copy the SQLite file, and this directory is on PostgreSQL: back it up with pg_dump ' +
            '(or `cli copy-data --to sqlite:<file>`), and restore with pg_restore or psql\n',
        });
      }
      expect(fs.existsSync(file)).toBe(false);
      expect(fs.existsSync(databasePath({ dataDir }))).toBe(false);
      expect(await count(dataDir, 'agents')).toBe(1);
      const audited = await select(dataDir, ({ db, t }) => db.select().from(t.auditLog).where(eq(t.auditLog.action, 'backup.create')));
      expect(audited).toEqual([]);
    },
    CLI_TEST_TIMEOUT,
  );
});
