import { customType } from 'drizzle-orm/pg-core';

/**
 * Text compared and sorted byte by byte (COLLATE "C"), as SQLite compares all text.
 *
 * For the columns that list pages sort by and keyset pages walk (agents' id and name): their indexes
 * then serve `ORDER BY … COLLATE "C"` (dialect-sql.ts `byteOrder`) and `id > after` in byte order.
 * With the database's own collation (en-US, say) every such page sorted the whole table: 36 ms for
 * a name-sorted page of 100,000 agents, 50 ms for a keyset page, against about 1 ms by index.
 */
export const BYTE_ORDER_TEXT_TYPE = 'text COLLATE "C"';
export const byteOrderText = customType<{ data: string; driverData: string }>({
  dataType: () => BYTE_ORDER_TEXT_TYPE,
});
