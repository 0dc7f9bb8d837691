import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { defineStore } from 'pinia';
import { ref, shallowRef } from 'vue';
import type { AccountRole } from '../../src-api/modules/accounts/accounts.table';
import type { AppRouter } from '../../src-api/trpc/root';
import { trpc } from '../trpc';

type Outputs = inferRouterOutputs<AppRouter>['accounts'];
export type ConsoleAccount = Outputs['list']['accounts'][number];
export type CreatedAccount = Outputs['create'];
export type CreateAccountInput = inferRouterInputs<AppRouter>['accounts']['create'];

export interface AccountsQuery {
  q: string;
  role: AccountRole | null;
  page: number;
}

export const ACCOUNTS_PAGE_SIZE = 20;

/**
 * The Accounts screen's page of accounts (admins only), searched and paged by
 * the server. Writes answer with the changed account, put back in its row.
 */
export const useAccountsStore = defineStore('accounts', () => {
  const accounts = shallowRef<ConsoleAccount[]>([]);
  const total = ref(0);
  const loaded = ref(false);
  let latest = 0;

  function put(account: ConsoleAccount): ConsoleAccount {
    accounts.value = accounts.value.map((row) => (row.id === account.id ? account : row));
    return account;
  }

  /** Loads one page; an answer overtaken by a newer query (typing fast) is dropped. */
  async function load(query: AccountsQuery): Promise<void> {
    const ticket = ++latest;
    const page = await trpc.accounts.list.query({
      page: query.page,
      limit: ACCOUNTS_PAGE_SIZE,
      ...(query.q.trim() ? { q: query.q.trim() } : {}),
      ...(query.role ? { role: query.role } : {}),
    });
    if (ticket !== latest) return;
    accounts.value = page.accounts;
    total.value = page.total;
    loaded.value = true;
  }

  async function setRole(id: string, role: AccountRole, granted: boolean): Promise<ConsoleAccount> {
    return put(granted ? await trpc.accounts.grantRole.mutate({ id, role }) : await trpc.accounts.revokeRole.mutate({ id, role }));
  }

  async function setDisabled(id: string, disabled: boolean): Promise<ConsoleAccount> {
    return put(await trpc.accounts.setDisabled.mutate({ id, disabled }));
  }

  async function create(input: CreateAccountInput): Promise<CreatedAccount> {
    return trpc.accounts.create.mutate(input);
  }

  return { accounts, total, loaded, load, setRole, setDisabled, create };
});
