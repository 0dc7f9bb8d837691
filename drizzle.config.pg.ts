import { defineConfig } from 'drizzle-kit';

/** The PostgreSQL store's migrations (contract section 8), generated from the twin schema beside the SQLite one. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './src-api/db/schema-pg.ts',
  out: './resources/migrations-pg',
});
