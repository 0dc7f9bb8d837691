import { adminProcedure, router } from '../init';

/** The console's own session: who is signed in, how, and with which roles (the console shows screens by role). */
export const sessionRouter = router({
  me: adminProcedure.query(({ ctx }) => ({
    actor: ctx.principal.actor,
    via: ctx.principal.via,
    roles: [...ctx.principal.roles],
    account: ctx.principal.account,
  })),
});
