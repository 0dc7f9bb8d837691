import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfig } from '../../src-api/config';
import { openDatabase } from '../../src-api/db/client';
import { seedDemoDirectory } from '../../src-api/demo/seed-demo';
import { createServices } from '../../src-api/services';
import { CLI_TEST_TIMEOUT, makeTempDir, runCli } from '../cli/cli-helpers';
import { startPostgres, type TestPostgres } from '../helpers/postgres-server';

/**
 * `cli copy-data` reads its source from one snapshot, so a server may keep
 * writing to it (contract section 8). While the copy runs, this process keeps
 * adding reviews, each in one transaction with its agent's rating count and
 * sum. Had the copy read agents and reviews at different moments, some agent's
 * counts would not match its reviews in PostgreSQL.
 */
let postgres: TestPostgres;
let dir: string;

beforeAll(async () => {
  postgres = await startPostgres();
}, 180_000);
afterAll(() => {
  postgres?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Agents whose rating count or sum differs from their visible reviews (SQL that both stores understand). */
const MISMATCHED = `SELECT count(*) AS n FROM agents a
  WHERE a.rating_count <> (SELECT count(*) FROM reviews r WHERE r.agent_id = a.id AND NOT r.hidden)
     OR a.rating_sum <> (SELECT coalesce(sum(r.rating), 0) FROM reviews r WHERE r.agent_id = a.id AND NOT r.hidden)`;

describe('cli copy-data while the source is being written', () => {
  it(
    'copies one consistent snapshot: every agent’s rating count and sum match its copied reviews',
    async () => {
      dir = makeTempDir('agentdir-copy-live-');
      const file = path.join(dir, 'agent-directory.sqlite');
      const db = openDatabase(file);
      await seedDemoDirectory(createServices({ db, config: createConfig({ dataDir: dir }) }));
      db.$client.close();

      const writer = new Database(file);
      writer.pragma('busy_timeout = 10000');
      const countReviews = () => writer.prepare('SELECT count(*) FROM reviews').pluck().get() as number;
      expect(writer.prepare(MISMATCHED).pluck().get()).toBe(0);
      const agentIds = writer.prepare('SELECT id FROM agents ORDER BY id').pluck().all() as string[];
      const insertReview = writer.prepare(
        'INSERT INTO reviews (id, agent_id, rating, comment, hidden, created_at) VALUES (?, ?, ?, ?, 0, ?)',
      );
      const bumpAgent = writer.prepare('UPDATE agents SET rating_count = rating_count + 1, rating_sum = rating_sum + ? WHERE id = ?');
      const addReview = writer.transaction((n: number) => {
        const agentId = agentIds[n % agentIds.length]!;
        const rating = (n % 5) + 1;
        insertReview.run(`rev_live_${n}`, agentId, rating, `live review ${n}`, new Date().toISOString());
        bumpAgent.run(rating, agentId);
      });

      postgres.query('CREATE DATABASE live');
      const before = countReviews();
      let running = true;
      const copy = runCli(['copy-data', '--from', `sqlite:${file}`, '--to', postgres.urlOf('live')]).finally(() => (running = false));
      let writes = 0;
      try {
        while (running) {
          addReview(writes++);
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      } finally {
        writer.close();
      }
      const result = await copy;
      expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
      expect(writes).toBeGreaterThan(0);

      const copied = Number(postgres.query('SELECT count(*) FROM reviews', 'live'));
      expect(copied).toBeGreaterThanOrEqual(before);
      expect(copied).toBeLessThanOrEqual(before + writes);
      expect(result.stdout).toContain(`reviews: ${copied.toLocaleString('en-US')} rows\n`);
      expect(postgres.query(MISMATCHED, 'live')).toBe('0');
    },
    CLI_TEST_TIMEOUT,
  );
});
