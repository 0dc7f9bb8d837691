import type { SQL } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from './client';
import type * as schema from './schema';

/**
 * The one data-access seam (contract section 8, issue 16): services written
 * against a Store run on SQLite (store-sqlite.ts) or PostgreSQL (store-pg.ts).
 * The rules for using it and the porting order are in README.md beside this file.
 *
 * A query is written once, with drizzle's SQLite builder types and the current
 * dialect's tables, and run through the store:
 *
 *   const { agents } = store.t;
 *   const row = await store.first(store.db.select().from(agents).where(eq(agents.id, id)));
 *
 * Where the dialects differ (json_each, FOR UPDATE, upserts on expressions),
 * the query is written twice, chosen by `store.dialect`, with a comment saying why.
 */
export type Dialect = 'sqlite' | 'postgres';

type Schema = typeof schema;
/** Every table, by its export name in schema.ts (the PostgreSQL twins have the same names). */
export type Tables = { [K in keyof Schema as Schema[K] extends SQLiteTable ? K : never]: Schema[K] };

export interface TransactionOptions {
  /**
   * PostgreSQL only: the isolation level (default READ COMMITTED). SQLite
   * transactions are always serializable: one writer at a time.
   */
  isolation?: 'read committed' | 'repeatable read' | 'serializable';
}

/** What a store.listen() subscriber is told (PostgreSQL). */
export interface ListenHandlers {
  /** A notification on the channel arrived (sent by a transaction that has committed, in commit order). */
  notified(payload: string): void;
  /**
   * The listening connection is up (true: LISTEN has run, so every commit from now on notifies) or
   * lost (false: notifications may be missed until the next true). Called on every (re)connect and
   * drop; a subscriber that caches what the channel announces drops the cache on both.
   */
  listening(on: boolean): void;
}

/** What runExclusive did: ran the job (and what it returned), or skipped it because another process holds it. */
export type ExclusiveRun<T> = { ran: true; value: T } | { ran: false };

export interface Store {
  readonly dialect: Dialect;
  /**
   * The query builder: typed as SQLite's, built on the current dialect's
   * driver, and inside `transaction()` bound to that transaction. Read it at
   * the query site (`store.db.select()…`), never keep it in a variable: a kept
   * one would run outside the caller's transaction on PostgreSQL.
   * Run what it builds through rows/first/run, not with `.all()/.get()/.run()`
   * (SQLite-only) nor a bare `await` (which skips the SQLite lock).
   */
  readonly db: Db;
  /** The tables of the current dialect, typed as the SQLite ones. */
  readonly t: Tables;

  /** Every row of a select (or of an insert/update/delete with `.returning()`). */
  rows<Row>(query: { all(): Row[] }): Promise<Row[]>;
  /** The first row, or undefined. Add `.limit(1)` when more could match: PostgreSQL reads them all. */
  first<Row>(query: { get(): Row | undefined }): Promise<Row | undefined>;
  /** Runs an insert, update, delete or raw statement; resolves to the number of rows it changed. */
  run(query: { run(): unknown } | SQL): Promise<number>;
  /**
   * The rows of raw SQL, as the driver gives them: on PostgreSQL count(*) and
   * sum() come back as strings (bigint, numeric), booleans as booleans, so
   * convert with Number() or select through the builder, whose count() and
   * `.mapWith(Number)` map both.
   */
  all<Row>(query: SQL): Promise<Row[]>;
  /**
   * Locks the rows a select reads until the transaction ends (PostgreSQL's
   * FOR UPDATE, with SKIP LOCKED for leases). On SQLite the query is unchanged:
   * the transaction already holds the only write lock.
   */
  forUpdate<Query>(query: Query, options?: { skipLocked?: boolean }): Query;

  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it
   * throws. Every store call inside it (however deep, without passing anything)
   * joins it; a transaction inside a transaction is a savepoint. Another caller's
   * transaction waits for this one on SQLite, and so do its statements outside
   * any transaction. No network I/O inside: it holds SQLite's only write lock
   * (and a PostgreSQL connection) for as long as it runs.
   */
  transaction<T>(work: () => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Runs a periodic background job (trust refresh, ownership re-checks, Agent Card re-fetches)
   * unless another process is running the job of the same name: then it resolves at once with
   * `{ ran: false }`, and this run is skipped, not queued (the job runs again on its next tick).
   * PostgreSQL: a session advisory lock, held on a pooled connection for as long as `work` runs;
   * a process that dies frees it with its connection. SQLite: one process's own jobs never
   * overlap; processes sharing one file each run theirs (the single-server setup).
   */
  runExclusive<T>(job: string, work: () => Promise<T>): Promise<ExclusiveRun<T>>;
  /**
   * PostgreSQL: `LISTEN channel` on a connection of the store's own (one for all its channels, opened on
   * the first call), reconnected a second after it drops; `handlers` hear its notifications and its state.
   * SQLite has no notifications (its readers see other connections' writes by reading): throws.
   */
  listen(channel: string, handlers: ListenHandlers): void;
  /** True inside a transaction() callback (for helpers that must run in the caller's transaction). */
  readonly inTransaction: boolean;
  /**
   * Runs `callback` once the current transaction (the outermost one, when
   * nested) has committed; never when it rolls back. For what must happen
   * after the rows are visible to others, such as waking the mail worker or
   * the webhook dispatcher: on PostgreSQL a commit takes a round trip, so a
   * wake-up sent from inside the transaction (or on the next setImmediate)
   * would find nothing. Throws outside a transaction. A callback that throws
   * is reported on the console; the commit stands.
   */
  afterCommit(callback: () => void): void;
  /**
   * The last step of the current transaction (the outermost one, when nested): `step` runs
   * inside it once its work has resolved, just before COMMIT (a throw rolls it back). One step
   * per `key` and transaction: the first call makes the transaction's state with `init` and
   * registers `step`; every call returns that state, so later calls add to what the step does.
   * A savepoint that rolls back does not take back what its calls added: the step must cope
   * with rows it undid. For a lock that should be held as briefly as possible (agent-writes:
   * the change cursor, taken only here on PostgreSQL). Throws outside a transaction.
   */
  beforeCommit<State>(key: symbol, init: () => State, step: (state: State) => Promise<void>): State;
  /** Closes what the store opened (the PostgreSQL pool); a SQLite store leaves its connection to its owner. */
  close(): Promise<void>;
}

/**
 * Throws unless `store` has a transaction open. The in-transaction helpers
 * (audit.recordInTransaction, events.recordInTransaction, mail.queueInTransaction)
 * join their caller's transaction and never open one: their rows belong to the
 * change that causes them, committed or undone with it.
 */
export function requireTransaction(store: Store, helper: string): void {
  if (!store.inTransaction) {
    throw new Error(`${helper} must be called inside the caller's store.transaction(): it writes as part of the caller's change`);
  }
}
