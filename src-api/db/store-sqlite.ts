import type { Statement } from 'better-sqlite3';
import { is, SQL } from 'drizzle-orm';
import { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { createMutex } from '../lib/mutex';
import type { Db } from './client';
import * as schema from './schema';
import type { ExclusiveRun, Store, Tables } from './store';
import { TransactionScopes } from './transaction-scopes';

/**
 * The Store on SQLite: drizzle over the one better-sqlite3 connection, whose
 * statements run synchronously. A transaction is BEGIN IMMEDIATE … COMMIT on
 * that connection, and since its callback awaits, other callers' code runs
 * between its statements; on one connection their statements would land
 * inside it (and be rolled back with it, or read what it has not committed).
 * So a transaction holds a lock from BEGIN to COMMIT, and a statement outside
 * it waits while the lock is held; a statement inside finds its transaction in
 * an AsyncLocalStorage scope (transaction-scopes.ts). With no transaction open a statement runs at
 * once, as before the seam.
 */

/** One transaction in progress; `done` once it has ended (a task it started may outlive it). */
interface Scope {
  done: boolean;
  savepoints: number;
  /** store.afterCommit's callbacks, run once COMMIT has returned (savepoints share their transaction's). */
  committed: Array<() => void>;
  /** store.beforeCommit's steps, run just before COMMIT. */
  steps: CommitSteps;
}

/** store.afterCommit's callbacks, in order; one that throws does not keep the others from running. */
export function runCommitted(callbacks: Array<() => void>): void {
  for (const callback of callbacks) {
    try {
      callback();
    } catch (error) {
      console.error('store: a callback after commit failed:', error);
    }
  }
}

/** store.beforeCommit's steps of one transaction, by key, with their state. */
export type CommitSteps = Map<symbol, { state: unknown; step: (state: unknown) => Promise<void> }>;

/** store.beforeCommit: the transaction's state for `key`, made (and `step` registered) on first use. */
export function commitStep<State>(steps: CommitSteps, key: symbol, init: () => State, step: (state: State) => Promise<void>): State {
  let entry = steps.get(key);
  if (!entry) steps.set(key, (entry = { state: init(), step: step as (state: unknown) => Promise<void> }));
  return entry.state as State;
}

/** The steps before COMMIT, in the order they were first asked for (one a step registers runs too). */
export async function runCommitSteps(steps: CommitSteps): Promise<void> {
  for (const { state, step } of steps.values()) await step(state);
}

export function sqliteTables(): Tables {
  const entries = Object.entries(schema).filter(([, value]) => is(value, SQLiteTable));
  return Object.fromEntries(entries) as unknown as Tables;
}

/** The drizzle writes' statements a store keeps prepared (store.run). */
const STATEMENTS_KEPT = 200;

/** One store per connection: two would each have their own lock, and one connection needs one. */
const stores = new WeakMap<Db, Store>();

/** The Store over an open SQLite database (openDatabase); the connection stays its owner's to close. */
export function sqliteStore(db: Db): Store {
  let store = stores.get(db);
  if (!store) stores.set(db, (store = createSqliteStore(db)));
  return store;
}

/**
 * The SQLite connection under `store`, for what only SQLite has (prepared statements on hot paths,
 * backups); undefined on PostgreSQL.
 */
export function sqliteDbOf(store: Store): Db | undefined {
  return store.dialect === 'sqlite' ? store.db : undefined;
}

function createSqliteStore(db: Db): Store {
  const client = db.$client;
  const lock = createMutex();
  const scopes = new TransactionScopes<Scope>();
  const begin = client.prepare('BEGIN IMMEDIATE');
  const commit = client.prepare('COMMIT');
  const rollback = client.prepare('ROLLBACK');
  const tables = sqliteTables();
  // The background jobs running now (runExclusive): within one process, one run of each at a time.
  const runningJobs = new Set<string>();

  /*
   * A drizzle write (insert, update, delete) by a statement kept for its SQL: drizzle's own run()
   * has SQLite compile it afresh every time (a review's insert, its marketing post's). The same
   * statement with the same parameters, as drizzle's toSQL gives them; kept up to STATEMENTS_KEPT
   * texts, then all dropped (writes with their values inlined would otherwise pile up).
   */
  const statements = new Map<string, Statement>();
  const runQuery = (query: { run(): unknown }): { changes: number } => {
    const built = query as Partial<{ toSQL(): { sql: string; params: unknown[] } }>;
    if (typeof built.toSQL !== 'function') return query.run() as { changes: number };
    const { sql, params } = built.toSQL();
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= STATEMENTS_KEPT) statements.clear();
      statements.set(sql, (statement = client.prepare(sql)));
    }
    return statement.run(...params);
  };

  const current = (): Scope | undefined => scopes.current();

  /** Runs a statement now, unless another caller's transaction is open: then once it has ended. */
  const gated = async <T>(statement: () => T): Promise<T> => {
    if (!lock.locked || current()) return statement();
    const release = await lock.acquire();
    try {
      return statement();
    } finally {
      release();
    }
  };

  /** A transaction inside a transaction: a savepoint, as better-sqlite3's nested transactions are. */
  const savepoint = async <T>(scope: Scope, work: () => Promise<T>): Promise<T> => {
    const name = `store_${++scope.savepoints}`;
    const callbacks = scope.committed.length;
    client.exec(`SAVEPOINT ${name}`);
    try {
      const result = await work();
      client.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      scope.committed.length = callbacks; // what the savepoint's work asked for after commit is undone with it
      if (client.inTransaction) client.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
      throw error;
    }
  };

  /** A transaction not inside another: BEGIN IMMEDIATE … COMMIT, holding the lock throughout. */
  const beginToCommit = async <T>(work: () => Promise<T>): Promise<T> => {
    const release = await lock.acquire();
    const scope: Scope = { done: false, savepoints: 0, committed: [], steps: new Map() };
    let result: T;
    try {
      begin.run();
      try {
        result = await scopes.run(scope, work);
        if (scope.steps.size > 0) await scopes.run(scope, () => runCommitSteps(scope.steps));
        scope.done = true;
        commit.run();
      } catch (error) {
        scope.done = true;
        if (client.inTransaction) rollback.run();
        throw error;
      }
    } finally {
      release();
    }
    // After the lock is given back: a callback may start the next transaction.
    runCommitted(scope.committed);
    return result;
  };

  return {
    dialect: 'sqlite',
    db,
    t: tables,
    rows: (query) => gated(() => query.all()),
    first: (query) => gated(() => query.get()),
    run: (query) => gated(() => (is(query, SQL) ? db.run(query) : runQuery(query as { run(): unknown })).changes),
    all: <Row>(query: SQL) => gated(() => db.all<Row>(query)),
    forUpdate: (query) => query,

    async transaction(work) {
      const outer = current();
      if (outer) return savepoint(outer, work);
      return scopes.outermost(() => beginToCommit(work));
    },

    async runExclusive<T>(job: string, work: () => Promise<T>): Promise<ExclusiveRun<T>> {
      if (runningJobs.has(job)) return { ran: false };
      runningJobs.add(job);
      try {
        return { ran: true, value: await work() };
      } finally {
        runningJobs.delete(job);
      }
    },

    listen() {
      throw new Error("store.listen() is PostgreSQL only: SQLite readers see other connections' writes by reading");
    },

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

    close: async () => {},
  };
}
