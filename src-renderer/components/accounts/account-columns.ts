import { NButton, NCheckbox, NPopconfirm, NTag, type DataTableColumns } from 'naive-ui';
import { h } from 'vue';
import { RouterLink } from 'vue-router';
import type { AccountRole } from '../../../src-api/modules/accounts/accounts.table';
import DateTime from '../../shared/DateTime.vue';
import type { ConsoleAccount } from '../../stores/accounts-store';

export interface AccountColumnsOptions {
  /** The signed-in admin's own account: it cannot take its own admin role or disable itself (the server says 409 too). */
  selfId: string | null;
  busy: ReadonlySet<string>;
  setRole: (account: ConsoleAccount, role: AccountRole, granted: boolean) => void;
  setDisabled: (account: ConsoleAccount, disabled: boolean) => void;
}

const ROLE_LABELS: Record<AccountRole, string> = { moderator: 'Moderator', admin: 'Admin' };

function statusTag(account: ConsoleAccount) {
  if (account.disabled)
    return h(NTag, { size: 'small', bordered: false, type: 'error', 'data-testid': 'account-status' }, () => 'Disabled');
  if (!account.email_verified)
    return h(NTag, { size: 'small', bordered: false, type: 'warning', 'data-testid': 'account-status' }, () => 'Unverified');
  return h(NTag, { size: 'small', bordered: false, type: 'success', 'data-testid': 'account-status' }, () => 'Active');
}

/** The Accounts table: who, roles as checkboxes (each change at once, audited), status, and disable/enable. */
export function accountColumns({ selfId, busy, setRole, setDisabled }: AccountColumnsOptions): DataTableColumns<ConsoleAccount> {
  const roleBox = (account: ConsoleAccount, role: AccountRole) => {
    const self = account.id === selfId && role === 'admin';
    return h(
      NCheckbox,
      {
        checked: account.roles.includes(role),
        disabled: busy.has(account.id) || self,
        title: self ? 'You cannot take your own admin role' : undefined,
        'data-testid': `role-${role}`,
        onUpdateChecked: (checked: boolean) => setRole(account, role, checked),
      },
      () => ROLE_LABELS[role],
    );
  };

  return [
    {
      title: 'Account',
      key: 'email',
      minWidth: 200,
      render: (account) =>
        h('div', { class: 'who' }, [
          h('span', { class: 'who-name' }, [
            h('span', { 'data-testid': 'account-name' }, account.name),
            account.id === selfId ? h(NTag, { size: 'tiny', bordered: false, class: 'you' }, () => 'you') : null,
          ]),
          h('span', { class: 'who-email', title: account.email, 'data-testid': 'account-email' }, account.email),
        ]),
    },
    {
      title: 'Roles',
      key: 'roles',
      width: 200,
      render: (account) =>
        h('div', { class: 'roles', 'data-testid': 'account-roles' }, [roleBox(account, 'moderator'), roleBox(account, 'admin')]),
    },
    { title: 'Status', key: 'disabled', width: 100, render: statusTag },
    {
      title: 'Created',
      key: 'created_at',
      width: 110,
      render: (account) => h(DateTime, { class: 'nowrap', iso: account.created_at }),
    },
    {
      title: '',
      key: 'actions',
      width: 160,
      align: 'right',
      render: (account) =>
        h('div', { class: 'row-actions' }, [
          h(
            RouterLink,
            { to: { name: 'audit-log', query: { q: account.id } }, class: 'history', 'data-testid': 'account-history' },
            () => 'History',
          ),
          account.disabled
            ? h(
                NButton,
                {
                  size: 'small',
                  loading: busy.has(account.id),
                  'data-testid': 'enable-account',
                  onClick: () => setDisabled(account, false),
                },
                () => 'Enable',
              )
            : h(
                NPopconfirm,
                {
                  positiveText: 'Disable',
                  negativeText: 'Cancel',
                  positiveButtonProps: { type: 'error', 'data-testid': 'confirm-disable' } as Record<string, unknown>,
                  onPositiveClick: () => setDisabled(account, true),
                },
                {
                  trigger: () =>
                    h(
                      NButton,
                      {
                        size: 'small',
                        type: 'error',
                        ghost: true,
                        disabled: account.id === selfId,
                        loading: busy.has(account.id),
                        'data-testid': 'disable-account',
                      },
                      () => 'Disable',
                    ),
                  // Inline styles: the popover is teleported out of the screen's scoped CSS.
                  default: () =>
                    h(
                      'div',
                      { 'data-testid': 'disable-confirm', style: 'display: flex; flex-direction: column; gap: 2px; max-width: 300px' },
                      [
                        h('strong', `Disable ${account.email}?`),
                        h(
                          'span',
                          { style: 'color: #4b5563' },
                          'It is signed out everywhere, cannot sign in and its API keys are refused until enabled.',
                        ),
                      ],
                    ),
                },
              ),
        ]),
    },
  ];
}
