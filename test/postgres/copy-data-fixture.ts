import Database from 'better-sqlite3';
import { getTableConfig } from 'drizzle-orm/sqlite-core';
import { createConfig } from '../../src-api/config';
import { openDatabase } from '../../src-api/db/client';
import { tablePairs, type ColumnKind, type TablePair } from '../../src-api/db/table-pairs';
import { seedDemoDirectory } from '../../src-api/demo/seed-demo';
import { createServices } from '../../src-api/services';

/**
 * The source directory of copy-data.test.ts: the demo directory, rows made by
 * the services (an account, an API key, a webhook endpoint), and three rows in
 * every table but agents with values at the edges of each column kind (64-bit
 * integers past 2^53, reals that print long, JSON text with odd spacing and key
 * order, quotes, emoji, new lines, empty strings, nulls). Agents keep the demo's
 * rows, so that `cli export` reads them as the API would.
 */
export const JSON_TEXT = '{"z": 1,  "a":[1 ,2.50, "é"] ,"nested":{"b":null}}';
const INTEGERS = [0n, 9_007_199_254_740_993n, -9_223_372_036_854_775_808n];
const REALS = [0, 0.1 + 0.2, -1.7976931348623157e308];
const TEXTS = ['', `it's "quoted" \\ back\nnew line\ttab ünïcødé 🚀`, 'x'.repeat(5_000)];

export async function seedSource(dataDir: string, file: string): Promise<void> {
  const db = openDatabase(file);
  try {
    const services = createServices({ db, config: createConfig({ dataDir }) });
    await seedDemoDirectory(services);
    await services.accounts.createVerified({ email: 'Owner@Example.org', name: 'Owner', roles: ['moderator'] }, 'test');
    await services.keys.create('copy test key', 'test');
    await services.webhooks.add({ url: 'https://hooks.example.org/in', events: [], description: 'copy test' }, { actor: 'test' });
  } finally {
    db.$client.close();
  }
  const raw = new Database(file);
  try {
    raw.transaction(() => {
      for (const pair of tablePairs()) if (pair.name !== 'agents') insertEdgeRows(raw, pair);
    })();
  } finally {
    raw.close();
  }
}

function insertEdgeRows(db: Database.Database, pair: TablePair): void {
  const config = getTableConfig(pair.sqlite);
  const nullable = new Set(config.columns.filter((column) => !column.notNull).map((column) => column.name));
  // A foreign key column points at an existing parent row.
  const parentIds = new Map<string, string[]>();
  for (const key of config.foreignKeys) {
    const reference = key.reference();
    const parent = getTableConfig(reference.foreignTable).name;
    const column = reference.foreignColumns[0]!.name;
    const ids = db.prepare(`SELECT "${column}" FROM "${parent}" ORDER BY rowid LIMIT 3`).pluck().all() as string[];
    if (ids.length === 0) throw new Error(`no ${parent} rows for ${pair.name}`);
    parentIds.set(reference.columns[0]!.name, ids);
  }
  const insert = db.prepare(
    `INSERT INTO "${pair.name}" (${pair.columns.map((column) => `"${column.name}"`).join(', ')}) VALUES (${pair.columns.map(() => '?').join(', ')})`,
  );
  for (let i = 0; i < 3; i++) {
    insert.run(
      pair.columns.map((column) => {
        const parents = parentIds.get(column.name);
        if (parents) return parents[i % parents.length]!;
        // The first row leaves every nullable column null.
        if (i === 0 && nullable.has(column.name)) return null;
        return edgeValue(column.kind, `${pair.name}.${column.name}.${i}`, i);
      }),
    );
  }
}

function edgeValue(kind: ColumnKind, unique: string, i: number): string | number | bigint {
  switch (kind) {
    case 'boolean':
      return i % 2;
    case 'integer':
      return INTEGERS[i]!;
    case 'real':
      return REALS[i]!;
    case 'json':
      return i === 2 ? JSON_TEXT : `[${i}, "${unique}"]`;
    default:
      // Unique per row and column (ids, hashes and e-mail keys have unique indexes).
      return `${TEXTS[i]}#${unique}`;
  }
}

/** Every row of every table, in key order, as SQLite stores them (integers as bigint). */
export function allRows(file: string): Record<string, unknown[][]> {
  const db = new Database(file, { readonly: true });
  try {
    const tables: Record<string, unknown[][]> = {};
    for (const pair of tablePairs()) {
      const columns = pair.columns.map((column) => `"${column.name}"`).join(', ');
      const order = pair.orderBy.map((column) => `"${column}"`).join(', ');
      tables[pair.name] = db
        .prepare(`SELECT ${columns} FROM "${pair.name}" ORDER BY ${order}`)
        .safeIntegers(true)
        .raw(true)
        .all() as unknown[][];
    }
    return tables;
  } finally {
    db.close();
  }
}
