import { migratePostgres } from '../../src-api/db/client-pg';

/**
 * One process that migrates the database at argv[2] and exits: 0 and "migrated"
 * on stdout, or 1 and the error on stderr. migrate.test.ts starts three at once.
 */
migratePostgres(process.argv[2]!).then(
  () => console.log('migrated'),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exitCode = 1;
  },
);
