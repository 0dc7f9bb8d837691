import { adminProcedure, router } from '../../trpc/init';

/** The console's backup card: the last backup of this data dir, and a backup now into <data-dir>/backups/. */
export const backupRouter = router({
  last: adminProcedure.query(({ ctx }) => ctx.services.backups.last()),
  create: adminProcedure.mutation(({ ctx }) => ctx.services.backups.backupNow(ctx.actor)),
});
