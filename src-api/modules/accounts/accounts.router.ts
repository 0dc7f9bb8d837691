import { z } from 'zod';
import { emailSchema, idParamSchema } from '../../lib/schemas';
import { adminRoleProcedure, router } from '../../trpc/init';
import { accountRoleSchema, listAccountsQuerySchema } from './accounts.schemas';

const byId = z.strictObject({ id: idParamSchema });
const roleChange = byId.extend({ role: accountRoleSchema });

/** The console's Accounts screen (admins only): list and search, create, roles, disable. */
export const accountsRouter = router({
  /** Newest first; `q` matches any part of the e-mail or the name, or an exact account id; `role` narrows to holders of a role. */
  list: adminRoleProcedure.input(listAccountsQuerySchema.prefault({})).query(async ({ ctx, input }) => {
    const page = await ctx.services.accounts.list(input);
    return { accounts: page.items, page: page.page, limit: page.limit, total: page.total };
  }),

  get: adminRoleProcedure.input(byId).query(({ ctx, input }) => ctx.services.accounts.getAdmin(input.id)),

  /** A verified account (a new moderator, say) and the one-time link that lets its owner set a password. */
  create: adminRoleProcedure
    .input(
      z.strictObject({
        email: emailSchema,
        name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
        roles: z.array(accountRoleSchema).max(2).default([]),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const created = await ctx.services.accounts.createVerified(input, ctx.actor);
      return { account: await ctx.services.accounts.getAdmin(created.account.id), set_password_url: created.setPasswordUrl ?? null };
    }),

  grantRole: adminRoleProcedure
    .input(roleChange)
    .mutation(({ ctx, input }) => ctx.services.accounts.grantRole({ id: input.id }, input.role, ctx.actor)),

  revokeRole: adminRoleProcedure
    .input(roleChange)
    .mutation(({ ctx, input }) => ctx.services.accounts.revokeRole({ id: input.id }, input.role, ctx.actor, ctx.principal.account?.id)),

  /** Disabled: no sign-in, sessions ended, keys refused; enabling undoes it. */
  setDisabled: adminRoleProcedure
    .input(byId.extend({ disabled: z.boolean() }))
    .mutation(({ ctx, input }) => ctx.services.accounts.setDisabled(input.id, input.disabled, ctx.actor, ctx.principal.account?.id)),
});
