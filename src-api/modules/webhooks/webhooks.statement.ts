import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import type { Store, Tables } from '../../db/store';

/**
 * A statement of the delivery hot path (fan-out, claim, outcome), written once
 * as a function of the handle, the tables and its parameters. On SQLite it is
 * built with placeholders and prepared once per store (building and preparing
 * a statement cost more than running it); on PostgreSQL it is built per call
 * on the store's current handle (the ambient transaction's) with the values.
 *
 * In `build`, use the parameters only as SQL values: `eq(column, v.id)`,
 * `.limit(v.limit)`, `sql\`${v.x}\`` in an update's set (drizzle wants SQL
 * there for a placeholder), insert values. Not in JavaScript logic (on SQLite
 * they are placeholders), and never booleans: better-sqlite3 binds no
 * booleans through a placeholder, so write those as literals (`eq(c, true)`).
 */
type Params = Record<string, unknown>;

interface Prepared {
  all(values?: Params): unknown[];
  get(values?: Params): unknown;
  run(values?: Params): { changes: number };
}

type RowOf<Q> = Q extends { all(): Array<infer Row> } ? Row : never;

export interface Statement<V extends Params, Row> {
  rows(values: V): Promise<Row[]>;
  first(values: V): Promise<Row | undefined>;
  /** Runs it; resolves to the number of rows changed. */
  run(values: V): Promise<number>;
}

export function statement<V extends Params, Q extends { prepare(): unknown }>(
  store: Store,
  build: (db: Db, t: Tables, v: V) => Q,
): Statement<V, RowOf<Q>> {
  if (store.dialect === 'postgres') {
    const built = (values: V) => build(store.db, store.t, values) as unknown as { all(): RowOf<Q>[]; get(): RowOf<Q>; run(): unknown };
    return {
      rows: (values) => store.rows(built(values)),
      first: (values) => store.first(built(values)),
      run: (values) => store.run(built(values)),
    };
  }
  let prepared: Prepared | undefined;
  const placeholders = new Proxy({} as V, { get: (_, name) => sql.placeholder(String(name)) });
  // Prepared on first use; on SQLite store.db is the one connection, outside a transaction or in one.
  const get = (): Prepared => (prepared ??= build(store.db, store.t, placeholders).prepare() as Prepared);
  return {
    rows: (values) => store.rows({ all: () => get().all(values) as RowOf<Q>[] }),
    first: (values) => store.first({ get: () => get().get(values) as RowOf<Q> | undefined }),
    run: (values) => store.run({ run: () => get().run(values) }),
  };
}

/** A statement parameter where drizzle's update types want SQL (set: { column: param(v.x) }). */
export const param = (value: unknown) => sql`${value}`;
