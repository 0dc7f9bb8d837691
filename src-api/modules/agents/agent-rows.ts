import { ratingSortSql } from './trust-score';
import { getTableColumns } from 'drizzle-orm';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/client';
import type { Store } from '../../db/store';
import { agents } from './agents.table';
import type { AgentRow } from './agents.table';

/**
 * Reads of the agents table on hot paths (profile by id, bulk, search, the change feed), as plain prepared
 * statements: building the query with drizzle costs more than running it
 * (tens of microseconds per call), which matters on every request and on a
 * 100,000-row build. Values are still decoded by the drizzle columns' own
 * mappers (JSON arrays, booleans), so the rows are exactly what drizzle
 * would return. Every write goes through agent-writes.ts.
 */

const columns = getTableColumns(agents);
type Key = keyof AgentRow;

/** The columns the index reads: text, tags, filters, and the change cursor. */
export const INDEX_KEYS = [
  'id',
  'name',
  'tagline',
  'description',
  'author',
  'capabilities',
  'categories',
  'type',
  'trustScore',
  'listed',
  'status',
  'changeSeq',
] as const satisfies readonly Key[];
export type IndexRow = Pick<AgentRow, (typeof INDEX_KEYS)[number]>;

const ALL_KEYS = Object.keys(columns) as Key[];

function decoder<K extends Key>(keys: readonly K[]): (values: unknown[]) => Pick<AgentRow, K> {
  const mappers = keys.map((key) => columns[key]);
  return (values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const value = values[i];
      row[keys[i]!] = value === null || value === undefined ? value : mappers[i]!.mapFromDriverValue(value);
    }
    return row as Pick<AgentRow, K>;
  };
}

const select = (keys: readonly Key[]) => `SELECT ${keys.map((key) => `"${columns[key].name}"`).join(', ')} FROM "agents"`;

export interface AgentRowStatements {
  /** The highest change_seq of any agent, -1 for none: moves on every write, by any process. */
  latestChangeSeq(): number;
  /** Rows changed after `afterSeq`, oldest change first. */
  changedSince(afterSeq: number, limit: number): IndexRow[];
  /** Id, listed flag, version and change_seq of agents changed after `afterSeq`, oldest change first (the public change feed). */
  feedSince(afterSeq: number, limit: number): FeedRow[];
  /** Ids of up to `limit` agents changed after `afterSeq`, in no particular order. */
  idsChangedSince(afterSeq: number, limit: number): string[];
  /** Full rows of these ids (listed or not), in no particular order. */
  byIds(ids: readonly string[]): AgentRow[];
  /** One full row by id (listed or not). */
  byId(id: string): AgentRow | undefined;
  /** Ids of one page of listed agents (of one type, if given), sorted by `orderBy` then id in the same direction. */
  listedPageIds(page: ListedPageQuery): string[];
  /** Listed agents with an id after `afterId`, by id: a walk over the directory in slices. */
  listedAfter(afterId: string, limit: number): AgentRow[];
}

/** What the change feed needs of a changed agent: a range of the change_seq index plus the row. */
export interface FeedRow {
  id: string;
  listed: boolean;
  version: number;
  changeSeq: number;
}

/** SQL for each public list sort: a column, or the average rating (unrated last, see ratingSortSql). */
const LIST_SORT_SQL = {
  trust_score: () => '"trust_score"',
  name: () => '"name"',
  rating: (direction: 'asc' | 'desc') => ratingSortSql('sqlite', direction),
  created_at: () => '"created_at"',
  updated_at: () => '"updated_at"',
} as const;

export interface ListedPageQuery {
  orderBy: keyof typeof LIST_SORT_SQL;
  direction: 'asc' | 'desc';
  type?: string;
  limit: number;
  offset: number;
}

export function createAgentRowStatements(db: Db): AgentRowStatements {
  const latest = db.$client.prepare(`SELECT coalesce(max("${columns.changeSeq.name}"), -1) FROM "agents"`).pluck();
  const changed = db.$client
    .prepare(`${select(INDEX_KEYS)} WHERE "${columns.changeSeq.name}" > ? ORDER BY "${columns.changeSeq.name}" LIMIT ?`)
    .raw();
  const feed = db.$client
    .prepare(
      `SELECT "${columns.id.name}", "${columns.listed.name}", "${columns.version.name}", "${columns.changeSeq.name}" FROM "agents" WHERE "${columns.changeSeq.name}" > ? ORDER BY "${columns.changeSeq.name}" LIMIT ?`,
    )
    .raw();
  const changedIds = db.$client.prepare(`SELECT "${columns.id.name}" FROM "agents" WHERE "${columns.changeSeq.name}" > ? LIMIT ?`).pluck();
  // json_each turns one JSON array parameter into primary-key lookups, whatever the number of ids.
  const byIds = db.$client.prepare(`${select(ALL_KEYS)} WHERE "${columns.id.name}" IN (SELECT value FROM json_each(?))`).raw();
  const byId = db.$client.prepare(`${select(ALL_KEYS)} WHERE "${columns.id.name}" = ?`).raw();
  const listedAfter = db.$client
    .prepare(`${select(ALL_KEYS)} WHERE "${columns.id.name}" > ? AND "${columns.listed.name}" = 1 ORDER BY "${columns.id.name}" LIMIT ?`)
    .raw();
  // One prepared statement per list shape (sort × direction × type filter), made on first use.
  const listStatements = new Map<string, Statement>();
  const listStatement = ({ orderBy, direction, type }: ListedPageQuery): Statement => {
    const key = `${orderBy}:${direction}:${type ? 'type' : ''}`;
    let statement = listStatements.get(key);
    if (!statement) {
      const dir = direction === 'asc' ? 'ASC' : 'DESC';
      const order = `${LIST_SORT_SQL[orderBy](direction)} ${dir}, "id" ${dir}`;
      statement = db.$client
        // Ids only: the list indexes cover them (listed, [type,] sort key, id), so no table row is read.
        .prepare(`SELECT "id" FROM "agents" WHERE "listed" = 1${type ? ' AND "type" = ?' : ''} ORDER BY ${order} LIMIT ? OFFSET ?`)
        .pluck();
      listStatements.set(key, statement);
    }
    return statement;
  };
  const decodeIndexRow = decoder(INDEX_KEYS);
  const decodeRow = decoder(ALL_KEYS) as (values: unknown[]) => AgentRow;
  return {
    latestChangeSeq: () => latest.get() as number,
    changedSince: (afterSeq, limit) => (changed.all(afterSeq, limit) as unknown[][]).map(decodeIndexRow),
    feedSince: (afterSeq, limit) =>
      (feed.all(afterSeq, limit) as [string, number, number, number][]).map(([id, listed, version, changeSeq]) => ({
        id,
        listed: listed === 1,
        version,
        changeSeq,
      })),
    idsChangedSince: (afterSeq, limit) => changedIds.all(afterSeq, limit) as string[],
    byIds: (ids) => (ids.length === 0 ? [] : (byIds.all(JSON.stringify(ids)) as unknown[][]).map(decodeRow)),
    listedPageIds: (query) => {
      const params = query.type ? [query.type, query.limit, query.offset] : [query.limit, query.offset];
      return listStatement(query).all(...params) as string[];
    },
    listedAfter: (afterId, limit) => (listedAfter.all(afterId, limit) as unknown[][]).map(decodeRow),
    byId: (id) => {
      const values = byId.get(id) as unknown[] | undefined;
      return values ? decodeRow(values) : undefined;
    },
  };
}

/**
 * The same reads, asynchronous, on either store (one interface): SQLite runs the
 * prepared statements above (sqliteAgentRowReads), PostgreSQL drizzle queries
 * (agent-rows-pg.ts). What reads through it is written once for both.
 */
export type AgentRowReads = {
  [K in keyof AgentRowStatements]: (...args: Parameters<AgentRowStatements[K]>) => Promise<ReturnType<AgentRowStatements[K]>>;
};

/**
 * Runs a synchronous SQLite read through the store: at once, unless another
 * caller's store transaction is open, then once it has ended (store.first runs
 * `get` under the SQLite store's gate; see store-sqlite.ts). A read that skipped
 * the gate could see that transaction's uncommitted rows.
 */
export const gatedRead = <T>(store: Store, read: () => T): Promise<T> => store.first({ get: read }) as Promise<T>;

/** The prepared statements behind the async interface, each read through the store's gate. */
export function sqliteAgentRowReads(store: Store, statements: AgentRowStatements): AgentRowReads {
  return {
    latestChangeSeq: () => gatedRead(store, () => statements.latestChangeSeq()),
    changedSince: (afterSeq, limit) => gatedRead(store, () => statements.changedSince(afterSeq, limit)),
    feedSince: (afterSeq, limit) => gatedRead(store, () => statements.feedSince(afterSeq, limit)),
    idsChangedSince: (afterSeq, limit) => gatedRead(store, () => statements.idsChangedSince(afterSeq, limit)),
    byIds: (ids) => gatedRead(store, () => statements.byIds(ids)),
    byId: (id) => gatedRead(store, () => statements.byId(id)),
    listedPageIds: (page) => gatedRead(store, () => statements.listedPageIds(page)),
    listedAfter: (afterId, limit) => gatedRead(store, () => statements.listedAfter(afterId, limit)),
  };
}
