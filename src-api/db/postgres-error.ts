/**
 * The server could not be reached or refused us: the user's to fix (a wrong URL, a server down).
 * On its own, so that a caller can tell it without loading the PostgreSQL client (open-store.ts loads
 * that only for a PostgreSQL database).
 */
export class PostgresConnectError extends Error {
  override name = 'PostgresConnectError';
}
