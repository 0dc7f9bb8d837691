/**
 * What the agents table's change notification (PostgreSQL migration 0004: a statement trigger that
 * NOTIFYs at commit) costs a write: one-row updates of agents, each in its own transaction as an
 * agent write is, with the trigger enabled and disabled in alternating rounds on one PostgreSQL 15
 * (as the bench starts it), `--clients` at once. µs per write, median of the rounds, and the ratio.
 *
 *   npx tsx bench/pg-notify-cost.ts [--rounds 10] [--writes 400] [--clients 4]
 */
import os from 'node:os';
import { Command } from 'commander';
import pg from 'pg';
import { migratePostgres } from '../src-api/db/client-pg';
import { startPostgres } from '../test/helpers/postgres-server';

const options = new Command()
  .option('--rounds <n>', 'rounds of on then off', (v) => Number(v), 10)
  .option('--writes <n>', 'writes per round', (v) => Number(v), 400)
  .option('--clients <n>', 'concurrent writers', (v) => Number(v), 4)
  .parse()
  .opts<{ rounds: number; writes: number; clients: number }>();

const postgres = await startPostgres({ settings: { fsync: 'on', synchronous_commit: 'off', shared_buffers: '512MB' } });
const pool = new pg.Pool({ connectionString: postgres.urlOf('bench'), max: options.clients + 1 });
try {
  postgres.query(`CREATE DATABASE bench TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
  await migratePostgres(postgres.urlOf('bench'));
  const AGENTS = 2_000;
  await pool.query(
    `INSERT INTO agents (id, name, tagline, description, author, capabilities, categories, type, source_url, source_url_key, created_at, updated_at, change_seq)
     SELECT 'agt_' || i, 'Agent ' || i, 't', 'd', 'a', '[]', '[]', 'other', 'https://example.org/' || i, 'example.org/' || i, '2026-01-01', '2026-01-01', i
     FROM generate_series(1, ${AGENTS}) AS i`,
  );
  // A listener, as every serve process has: notifications are queued for it.
  const listener = new pg.Client({ connectionString: postgres.urlOf('bench') });
  await listener.connect();
  await listener.query('LISTEN agentdir_agents_changed');
  let heard = 0;
  listener.on('notification', () => heard++);

  let next = 0;
  const write = async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`UPDATE agents SET tagline = $1, version = version + 1, change_seq = nextval('agents_change_seq') + ${AGENTS} WHERE id = $2`, [
        `t${next}`,
        `agt_${1 + (next++ % AGENTS)}`,
      ]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  };
  const round = async (trigger: boolean): Promise<number> => {
    await pool.query(`ALTER TABLE agents ${trigger ? 'ENABLE' : 'DISABLE'} TRIGGER agents_changed_notify`);
    const started = process.hrtime.bigint();
    let left = options.writes;
    await Promise.all(
      Array.from({ length: options.clients }, async () => {
        while (left-- > 0) await write();
      }),
    );
    return Number(process.hrtime.bigint() - started) / 1000 / options.writes;
  };
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const on: number[] = [];
  const off: number[] = [];
  await round(true); // warm-up
  for (let r = 0; r < options.rounds; r++) {
    if (r % 2 === 0) {
      on.push(await round(true));
      off.push(await round(false));
    } else {
      off.push(await round(false));
      on.push(await round(true));
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(
    `${options.clients} writers: trigger on ${median(on).toFixed(0)} µs/write, off ${median(off).toFixed(0)} µs/write: ${(median(on) / median(off)).toFixed(3)}× (${heard} notifications heard)`,
  );
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  await listener.end();
} finally {
  await pool.end();
  postgres.stop();
}
