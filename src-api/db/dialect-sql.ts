import { sql, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Store } from './store';

/**
 * The SQL pieces SQLite and PostgreSQL spell differently, written once here
 * (README.md, "Writing a query once") so each query that needs one stays one query.
 */

/**
 * The tie-break of rows with the same timestamp (`ORDER BY created_at DESC, <this> DESC`).
 * SQLite: the rowid, i.e. insertion order. PostgreSQL has no rowid, so the primary key:
 * a stable order (pages neither repeat nor skip rows), but within one millisecond not
 * the order of insertion. A sequence column would give that on both, when the writes are ported.
 */
export function insertionOrder(store: Store, table: SQLiteTable & { id: AnySQLiteColumn }): SQL {
  return store.dialect === 'sqlite' ? sql`${table}.rowid` : sql`${table.id}`;
}

/**
 * A text column sorted in SQLite's order (bytes): PostgreSQL compares text by the
 * database's locale unless told COLLATE "C". Use it in ORDER BY (and, for SELECT
 * DISTINCT, in the select list too: PostgreSQL sorts a distinct select only by what it selects).
 */
export function byteOrder(store: Store, column: AnySQLiteColumn): SQL<string> {
  return store.dialect === 'sqlite' ? sql<string>`${column}` : sql<string>`${column} COLLATE "C"`;
}

/**
 * True when `text` occurs in `column`, as plain characters ("_" and "%" are not wildcards,
 * as they would be in LIKE): SQLite's instr(), PostgreSQL's strpos().
 */
export function containsText(store: Store, column: AnySQLiteColumn | SQL, text: string): SQL {
  return store.dialect === 'sqlite' ? sql`instr(${column}, ${text}) > 0` : sql`strpos(${column}, ${text}) > 0`;
}

/**
 * `column` contains `text` as typed, case-insensitively ("%", "_" and "\\" are literal):
 * SQLite's LIKE ignores the case of ASCII letters, PostgreSQL's needs ILIKE (which also
 * folds other letters).
 */
export function containsIgnoringCase(store: Store, column: AnySQLiteColumn, text: string): SQL {
  const pattern = `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
  return store.dialect === 'sqlite' ? sql`${column} LIKE ${pattern} ESCAPE '\\'` : sql`${column} ILIKE ${pattern} ESCAPE '\\'`;
}

/**
 * The text at a top-level key of a JSON column (NULL when absent): SQLite's json_extract(),
 * PostgreSQL's ->> (the columns are json there).
 */
export function jsonText(store: Store, column: AnySQLiteColumn, key: string): SQL<string | null> {
  return store.dialect === 'sqlite' ? sql`json_extract(${column}, ${`$.${key}`})` : sql`(${column} ->> ${key})`;
}

/**
 * `column` is one of `values` (text), bound as one parameter whatever their number: SQLite reads a JSON array
 * with json_each, PostgreSQL a text[] with ANY. One statement for thousands of ids, where an IN list of
 * placeholders would be built, bound and compiled again for every few hundred.
 */
export function inTextList(store: Store, column: AnySQLiteColumn, values: readonly string[]): SQL {
  return store.dialect === 'sqlite'
    ? sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`
    : sql`${column} = ANY(${sql.param(values)}::text[])`;
}
