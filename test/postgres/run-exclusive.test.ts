import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { openPgStore } from '../../src-api/db/store-pg';
import { bothStores } from '../helpers/both-stores';
import { gate } from '../helpers/gate';
import { startPostgres, type TestPostgres } from '../helpers/postgres-server';

/**
 * Background jobs run one at a time (store.runExclusive): within a process on
 * both stores, and across processes on PostgreSQL, where the lock is an
 * advisory lock that a dying process gives up with its connection.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

describe.each(stores.dialects)('runExclusive on $dialect', ({ open }) => {
  let store: Store;
  beforeAll(async () => {
    store = await open();
  }, 180_000);

  it('runs a job and gives back its value', async () => {
    expect(await store.runExclusive('trust-refresh', async () => 42)).toEqual({ ran: true, value: 42 });
  });

  it('skips a job while the same job runs, not another one, and runs it again once it has ended', async () => {
    const hold = gate();
    const started = gate();
    const first = store.runExclusive('recheck', async () => {
      started.open();
      await hold.wait;
      return 'first';
    });
    await started.wait;
    expect(await store.runExclusive('recheck', async () => 'second')).toEqual({ ran: false });
    expect(await store.runExclusive('mail', async () => 'other job')).toEqual({ ran: true, value: 'other job' });
    hold.open();
    expect(await first).toEqual({ ran: true, value: 'first' });
    expect(await store.runExclusive('recheck', async () => 'third')).toEqual({ ran: true, value: 'third' });
  });

  it('frees the job when the work throws, and rethrows', async () => {
    await expect(store.runExclusive('failing', () => Promise.reject(new Error('job failed')))).rejects.toThrow('job failed');
    expect(await store.runExclusive('failing', async () => 'again')).toEqual({ ran: true, value: 'again' });
  });
});

describe('runExclusive across processes on PostgreSQL', () => {
  let postgres: TestPostgres;
  let url: string;
  const opened: Store[] = [];
  beforeAll(async () => {
    postgres = await startPostgres();
    postgres.query('CREATE DATABASE jobs');
    url = postgres.urlOf('jobs');
  }, 180_000);
  afterAll(async () => {
    for (const store of opened) await store.close();
    postgres?.stop();
  });
  const openStore = async () => {
    const store = await openPgStore(url, { max: 3 });
    opened.push(store);
    return store;
  };

  it('one process runs the job while another, on its own pool, skips it', async () => {
    const [a, b] = [await openStore(), await openStore()];
    const hold = gate();
    const started = gate();
    const first = a.runExclusive('dispatcher', async () => {
      started.open();
      await hold.wait;
      return 'a';
    });
    await started.wait;
    expect(await b.runExclusive('dispatcher', async () => 'b')).toEqual({ ran: false });
    hold.open();
    expect(await first).toEqual({ ran: true, value: 'a' });
    expect(await b.runExclusive('dispatcher', async () => 'b')).toEqual({ ran: true, value: 'b' });
  });

  it('a process that dies holding the lock frees it with its connection', async () => {
    const store = await openStore();
    // Another "process": a bare connection that takes the job's lock the way runExclusive does, then is killed.
    const other = new pg.Client({ connectionString: url });
    other.on('error', () => {}); // its connection is terminated below, on purpose
    await other.connect();
    const { rows } = await other.query<{ pid: number }>(
      "SELECT pg_backend_pid() AS pid, pg_try_advisory_lock(hashtextextended('agentdir job: trust-refresh', 0))",
    );
    expect(await store.runExclusive('trust-refresh', async () => 'blocked')).toEqual({ ran: false });
    // The timeout makes it wait until the backend has exited (and so let go of its locks): without it the
    // signal is only sent, and the next line could try the lock first (it did once, in CI).
    postgres.query(`SELECT pg_terminate_backend(${rows[0]!.pid}, 10000)`, 'jobs');
    expect(await store.runExclusive('trust-refresh', async () => 'ran')).toEqual({ ran: true, value: 'ran' });
    await other.end().catch(() => {});
  });
});
