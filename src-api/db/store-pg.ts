import { is, SQL } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { openPostgres, type OpenPostgresOptions, type PgDb } from './client-pg';
import { pgListener } from './pg-listener';
import * as schemaPg from './schema-pg';
import type { Db } from './client';
import type { ExclusiveRun, Store, Tables } from './store';
import { commitStep, runCommitSteps, runCommitted, sqliteTables, type CommitSteps } from './store-sqlite';
import { TransactionScopes } from './transaction-scopes';

/**
 * The Store on PostgreSQL: drizzle's node-postgres driver over a pool. Outside
 * a transaction each statement takes any pooled connection (autocommit); a
 * transaction holds one connection from BEGIN to COMMIT (drizzle's
 * db.transaction), and the store calls inside it find that connection in an
 * AsyncLocalStorage scope (transaction-scopes.ts). Concurrent transactions run side by side, isolated
 * by PostgreSQL (READ COMMITTED unless asked otherwise): read-then-write needs
 * forUpdate(), a unique key, or an atomic UPDATE (see README.md).
 */
type PgTransaction = Parameters<Parameters<PgDb['transaction']>[0]>[0];

interface Scope {
  tx: PgTransaction;
  done: boolean;
  /** store.afterCommit's callbacks: a savepoint's scope shares its outermost transaction's list. */
  committed: Array<() => void>;
  /** store.beforeCommit's steps: shared with the outermost transaction likewise, run before its COMMIT. */
  steps: CommitSteps;
}

/** The PostgreSQL tables under the export names of their SQLite twins (schema-twins.test.ts keeps the two in step). */
export function pgTablesByName(): Tables {
  const twins = schemaPg as Record<string, unknown>;
  const entries = Object.keys(sqliteTables()).map((name) => {
    const table = twins[name];
    if (!is(table, PgTable)) throw new Error(`schema-pg.ts has no table exported as ${name}`);
    return [name, table] as const;
  });
  return Object.fromEntries(entries) as unknown as Tables;
}

/** Opens (migrating first) a PostgreSQL database as a Store; close() ends its pool. */
export async function openPgStore(url: string, options: OpenPostgresOptions = {}): Promise<Store> {
  return pgStore(await openPostgres(url, options));
}

export function pgStore(pg: PgDb): Store {
  const scopes = new TransactionScopes<Scope>();
  const tables = pgTablesByName();
  // The pool's own settings (URL, connect timeout) for the listening connection.
  const listener = pgListener(pg.$client.options);

  const current = (): Scope | undefined => scopes.current();
  const handle = (): PgDb | PgTransaction => current()?.tx ?? pg;
  // The builders are typed as SQLite's (store.ts); at run time they are node-postgres ones, thenable.
  const run = <T>(query: unknown) => query as PromiseLike<T>;

  return {
    dialect: 'postgres',
    get db() {
      return handle() as unknown as Db;
    },
    t: tables,
    rows: async (query) => run(query),
    first: async (query) => (await run<unknown[]>(query))[0] as never,
    async run(query) {
      const result = is(query, SQL) ? await handle().execute(query) : await run<unknown>(query);
      return Array.isArray(result) ? result.length : ((result as { rowCount: number | null }).rowCount ?? 0);
    },
    all: async <Row>(query: SQL) => (await handle().execute(query)).rows as Row[],
    forUpdate: (query, options = {}) =>
      (query as unknown as { for(strength: 'update', config?: { skipLocked: true }): unknown }).for(
        'update',
        options.skipLocked ? { skipLocked: true } : undefined,
      ) as typeof query,

    async transaction(work, options = {}) {
      const outer = current();
      const committed = outer?.committed ?? [];
      const steps = outer?.steps ?? new Map();
      const body = async (tx: PgTransaction) => {
        const scope: Scope = { tx, done: false, committed, steps };
        const callbacks = committed.length;
        try {
          const result = await scopes.run(scope, work);
          // The outermost transaction: its COMMIT comes next.
          if (!outer && steps.size > 0) await scopes.run(scope, () => runCommitSteps(steps));
          return result;
        } catch (error) {
          committed.length = callbacks; // a savepoint rolled back: what its work asked for after commit goes too
          throw error;
        } finally {
          scope.done = true;
        }
      };
      // Inside a transaction drizzle makes the nested one a savepoint (and ignores the isolation level).
      if (outer) return outer.tx.transaction(body);
      return scopes.outermost(async () => {
        const result = await pg.transaction(body, options.isolation ? { isolationLevel: options.isolation } : undefined);
        runCommitted(committed);
        return result;
      });
    },

    async runExclusive<T>(job: string, work: () => Promise<T>): Promise<ExclusiveRun<T>> {
      // A session lock on a connection of its own, held while `work` runs on others: try, never wait
      // (another process is doing the job). The key is a 64-bit hash of the job's name, in a namespace
      // of ours so it cannot meet the migration lock's key.
      const holder = await pg.$client.connect();
      const key = `agentdir job: ${job}`;
      // A holder whose connection breaks (the server restarted) has lost the lock with it: noted, and
      // the connection is discarded rather than returned to the pool.
      let broken: Error | undefined;
      const onError = (error: Error) => (broken = error);
      holder.on('error', onError);
      try {
        const { rows } = await holder.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked', [key]);
        if (!rows[0]?.locked) return { ran: false };
        try {
          return { ran: true, value: await work() };
        } finally {
          await holder.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]).catch(onError);
        }
      } finally {
        holder.off('error', onError);
        holder.release(broken);
      }
    },

    listen: (channel, handlers) => listener.listen(channel, handlers),

    get inTransaction() {
      return current() !== undefined;
    },

    afterCommit(callback) {
      const scope = current();
      if (!scope) throw new Error('store.afterCommit() needs a store transaction: call it inside store.transaction()');
      scope.committed.push(callback);
    },

    beforeCommit(key, init, step) {
      const scope = current();
      if (!scope) throw new Error('store.beforeCommit() needs a store transaction: call it inside store.transaction()');
      return commitStep(scope.steps, key, init, step);
    },

    async close() {
      await listener.close();
      await pg.$client.end();
    },
  };
}
