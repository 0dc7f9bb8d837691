import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import {
  ConflictError,
  EmailNotVerifiedError,
  ForbiddenError,
  InvalidCredentialsError,
  InvalidTokenError,
  NotFoundError,
  ValidationError,
} from '../../src-api/errors';
import { createPublicUrl } from '../../src-api/lib/public-url';
import { createAuditService } from '../../src-api/modules/audit/audit.service';
import { createMailService } from '../../src-api/modules/mail/mail.service';
import { createAccountRecords, type AccountRecords } from '../../src-api/modules/accounts/account-records';
import { createAccountsService, emailKeyOf, type AccountsService } from '../../src-api/modules/accounts/accounts.service';
import type { AccountRow } from '../../src-api/modules/accounts/accounts.table';
import { hashPassword } from '../../src-api/modules/accounts/passwords';
import { createSignInLimiter } from '../../src-api/modules/accounts/sign-in-limiter';
import { agentRow, bothStores } from '../helpers/both-stores';
import { gate } from '../helpers/gate';

/**
 * The accounts' reads, sessions and sign-in, and an account's records, ported to
 * the data-access seam, on SQLite and on PostgreSQL (test/api/accounts.test.ts and
 * console-accounts.test.ts cover the HTTP and tRPC side, and the writes, on SQLite).
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const T = (minute: number) => `2025-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
const PASSWORD = 'correct horse battery staple';
const DAY = 24 * 60 * 60_000;

describe.each(stores.dialects)('accounts on $dialect', ({ open }) => {
  let store: Store;
  let accounts: AccountsService;
  let records: AccountRecords;
  let now = new Date(T(30));

  const account = (id: string, minute: number, fields: Partial<AccountRow> = {}): AccountRow => ({
    id,
    email: `${id}@Example.org`,
    emailKey: emailKeyOf(`${id}@Example.org`),
    name: `Name of ${id}`,
    passwordHash: null,
    emailVerifiedAt: T(minute),
    roles: [],
    disabledAt: null,
    createdAt: T(minute),
    updatedAt: T(minute),
    ...fields,
  });

  beforeAll(async () => {
    store = await open();
    const clock = { now: () => now };
    const ids = { next: (prefix: string) => `${prefix}_${Math.random().toString(36).slice(2)}`, agent: () => 'agt_unused' };
    const limiter = createSignInLimiter({ maxFailures: 10, windowMs: 15 * 60_000, enabled: true });
    accounts = createAccountsService({
      store,
      clock,
      ids,
      config: {
        accounts: { sessionIdleMs: 7 * DAY, sessionAbsoluteMs: 30 * DAY } as never,
        rateLimit: { enabled: true } as never,
      },
      mail: createMailService({ store, clock, ids, config: { mail: { retryDelaysMs: [1000] } as never } }),
      publicUrl: createPublicUrl({ publicUrl: 'https://directory.example', host: '127.0.0.1', port: 0 }),
      audit: createAuditService({ store, clock, ids }),
      signInLimits: limiter,
    });
    records = createAccountRecords({ store });
    const passwordHash = await hashPassword(PASSWORD);
    const { accounts: table, agents } = store.t;
    await store.run(
      store.db
        .insert(table)
        .values([
          account('acc_ada', 1, { passwordHash, name: 'Ada Lovelace', roles: ['moderator'] }),
          account('acc_bob', 2, { passwordHash, emailVerifiedAt: null }),
          account('acc_cy', 3, { passwordHash, disabledAt: T(4), roles: ['admin', 'moderator'] }),
          account('acc_d_x', 4, { name: 'Dee 50%' }),
          account('acc_dzx', 4, { name: 'Dee' }),
        ]),
    );
    // Agents owned by Ada, two created in the same millisecond (inserted in id order, so both stores tie-break alike).
    await store.run(
      store.db
        .insert(agents)
        .values([
          agentRow({ id: 'agt_a1', sourceUrlKey: 'example.org/a1', ownerAccountId: 'acc_ada', createdAt: T(5), changeSeq: 1 }),
          agentRow({ id: 'agt_a2', sourceUrlKey: 'example.org/a2', ownerAccountId: 'acc_ada', createdAt: T(6), changeSeq: 2 }),
          agentRow({ id: 'agt_a3', sourceUrlKey: 'example.org/a3', ownerAccountId: 'acc_ada', createdAt: T(6), changeSeq: 3 }),
          agentRow({ id: 'agt_b1', sourceUrlKey: 'example.org/b1', ownerAccountId: 'acc_bob', createdAt: T(7), changeSeq: 4 }),
        ]),
    );
  }, 180_000);

  it('signs in into a session that authenticates, is touched once a minute, and ends on sign-out', async () => {
    now = new Date(T(30));
    const { account: signedIn, token, expiresAt } = await accounts.signIn('ACC_ADA@example.org ', PASSWORD, '192.0.2.1');
    expect(signedIn).toMatchObject({ id: 'acc_ada', email_verified: true, roles: ['moderator'] });
    expect(expiresAt.toISOString()).toBe(new Date(now.getTime() + 30 * DAY).toISOString());
    expect((await accounts.authenticateSession(token))?.id).toBe('acc_ada');
    const lastSeen = async () =>
      (await store.rows(store.db.select({ lastSeenAt: store.t.sessions.lastSeenAt }).from(store.t.sessions))).map((row) => row.lastSeenAt);
    now = new Date(now.getTime() + 30_000);
    await accounts.authenticateSession(token);
    expect(await lastSeen()).toEqual([T(30)]);
    now = new Date(now.getTime() + 60_000);
    await accounts.authenticateSession(token);
    expect(await lastSeen()).toEqual([now.toISOString()]);
    await accounts.signOut(token);
    expect(await accounts.authenticateSession(token)).toBeUndefined();
    expect(await lastSeen()).toEqual([]);
  });

  it('ends a session idle for 7 days, deleting it on sight', async () => {
    now = new Date(T(30));
    const { token } = await accounts.signIn('acc_ada@example.org', PASSWORD, '192.0.2.2');
    now = new Date(now.getTime() + 7 * DAY);
    expect(await accounts.authenticateSession(token)).toBeUndefined();
    expect(await store.rows(store.db.select().from(store.t.sessions))).toEqual([]);
  });

  it('refuses a wrong password, an unknown address, an unverified and a disabled account', async () => {
    now = new Date(T(30));
    await expect(accounts.signIn('acc_ada@example.org', 'wrong password here', '192.0.2.3')).rejects.toThrow(InvalidCredentialsError);
    await expect(accounts.signIn('nobody@example.org', PASSWORD, '192.0.2.3')).rejects.toThrow(InvalidCredentialsError);
    await expect(accounts.signIn('acc_bob@example.org', PASSWORD, '192.0.2.3')).rejects.toThrow(EmailNotVerifiedError);
    await expect(accounts.signIn('acc_cy@example.org', PASSWORD, '192.0.2.3')).rejects.toThrow(ForbiddenError);
  });

  it('gets and finds accounts by id', async () => {
    expect(await accounts.get('acc_ada')).toEqual({
      id: 'acc_ada',
      email: 'acc_ada@Example.org',
      name: 'Ada Lovelace',
      email_verified: true,
      roles: ['moderator'],
      created_at: T(1),
    });
    expect(await accounts.getAdmin('acc_cy')).toMatchObject({ disabled: true, roles: ['admin', 'moderator'], updated_at: T(3) });
    expect((await accounts.find('acc_bob'))?.emailVerifiedAt).toBeNull();
    expect(await accounts.find('acc_none')).toBeUndefined();
    await expect(accounts.get('acc_none')).rejects.toThrow(NotFoundError);
  });

  it('lists newest first, by part of the e-mail or name (no wildcards), an exact id, or a role', async () => {
    const ids = async (query: { q?: string; role?: 'moderator' | 'admin'; page?: number; limit?: number }) => {
      const page = await accounts.list({ page: query.page ?? 1, limit: query.limit ?? 100, ...query });
      return { ids: page.items.map((item) => item.id), total: page.total };
    };
    expect(await ids({})).toEqual({ ids: ['acc_dzx', 'acc_d_x', 'acc_cy', 'acc_bob', 'acc_ada'], total: 5 });
    expect(await ids({ limit: 2, page: 2 })).toEqual({ ids: ['acc_cy', 'acc_bob'], total: 5 });
    expect(await ids({ q: 'D_X@' })).toEqual({ ids: ['acc_d_x'], total: 1 });
    expect(await ids({ q: '50%' })).toEqual({ ids: ['acc_d_x'], total: 1 });
    expect(await ids({ q: 'LOVELACE' })).toEqual({ ids: ['acc_ada'], total: 1 });
    expect(await ids({ q: 'acc_bob' })).toEqual({ ids: ['acc_bob'], total: 1 });
    expect(await ids({ role: 'moderator' })).toEqual({ ids: ['acc_cy', 'acc_ada'], total: 2 });
    expect(await ids({ role: 'admin', q: 'cy' })).toEqual({ ids: ['acc_cy'], total: 1 });
  });

  it("pages an account's agents newest first, ties in the same order on both stores", async () => {
    const page = await records.agents('acc_ada', { page: 1, limit: 2 });
    expect(page.items.map((agent) => agent.id)).toEqual(['agt_a3', 'agt_a2']);
    expect(page.total).toBe(3);
    expect((await records.agents('acc_ada', { page: 2, limit: 2 })).items.map((agent) => agent.id)).toEqual(['agt_a1']);
    expect(await records.claims('acc_ada', { page: 1, limit: 10 })).toEqual({ items: [], page: 1, limit: 10, total: 0 });
    expect((await records.submissions('acc_none', { page: 1, limit: 10 })).total).toBe(0);
  });

  /** The mails queued to an address, oldest first, with the token of their link. */
  const mailsTo = async (to: string) => {
    const { mailOutbox } = store.t;
    const rows = await store.rows(
      store.db.select().from(mailOutbox).where(eq(mailOutbox.to, to)).orderBy(mailOutbox.createdAt, mailOutbox.id),
    );
    return rows.map((row) => ({ kind: row.kind, token: /[?&]token=([\w-]+)/.exec(row.text)?.[1] }));
  };
  const auditActions = async (entityId: string) => {
    const { auditLog } = store.t;
    return (await store.rows(store.db.select().from(auditLog).where(eq(auditLog.entityId, entityId)).orderBy(auditLog.createdAt))).map(
      (row) => row.action,
    );
  };

  it('signs up with a verification mail whose link works once; a second sign-up of the address mails a notice', async () => {
    now = new Date(T(40));
    await accounts.signUp({ email: 'New.Person@example.org', name: 'New Person', password: 'a long passphrase 42' });
    const [verify] = await mailsTo('New.Person@example.org');
    expect(verify).toMatchObject({ kind: 'account.verify' });
    const account = await accounts.verifyEmail(verify!.token!);
    expect(account).toMatchObject({ email: 'New.Person@example.org', email_verified: true });
    await expect(accounts.verifyEmail(verify!.token!)).rejects.toThrow(InvalidTokenError);
    now = new Date(new Date(T(40)).getTime() + 1000); // the mails are ordered by their time
    await accounts.signUp({ email: 'new.person@EXAMPLE.org', name: 'Again', password: 'another long passphrase' });
    expect((await mailsTo('New.Person@example.org')).map((mail) => mail.kind)).toEqual(['account.verify', 'account.exists']);
    expect((await accounts.list({ page: 1, limit: 100, q: 'new.person' })).total).toBe(1);
  });

  it('of two uses of one link at the same time, exactly one verifies', async () => {
    now = new Date(T(41));
    await accounts.signUp({ email: 'twice@example.org', name: 'Twice', password: 'a long passphrase 43' });
    const [verify] = await mailsTo('twice@example.org');
    const outcomes = await Promise.allSettled([accounts.verifyEmail(verify!.token!), accounts.verifyEmail(verify!.token!)]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
  });

  it('resets a password by mail: the old one stops working and every session ends', async () => {
    now = new Date(T(42));
    await accounts.createVerified({ email: 'reset@example.org', name: 'Reset', roles: [], password: PASSWORD }, 'test');
    const { token: session } = await accounts.signIn('reset@example.org', PASSWORD, '192.0.2.9');
    await accounts.requestPasswordReset('RESET@example.org');
    await accounts.requestPasswordReset('nobody@example.org'); // the same answer, nothing queued
    const [reset] = await mailsTo('reset@example.org');
    expect(reset?.kind).toBe('account.password_reset');
    await accounts.confirmPasswordReset(reset!.token!, 'a brand new passphrase');
    expect(await accounts.authenticateSession(session)).toBeUndefined();
    await expect(accounts.signIn('reset@example.org', PASSWORD, '192.0.2.9')).rejects.toThrow(InvalidCredentialsError);
    expect((await accounts.signIn('reset@example.org', 'a brand new passphrase', '192.0.2.9')).account.email).toBe('reset@example.org');
    await expect(accounts.confirmPasswordReset(reset!.token!, 'yet another passphrase')).rejects.toThrow(InvalidTokenError);
  });

  it('creates verified accounts (a set-password link without a password), refusing a taken address', async () => {
    now = new Date(T(43));
    const created = await accounts.createVerified({ email: 'ops@example.org', name: 'Ops', roles: ['moderator', 'moderator'] }, 'cli');
    expect(created.account).toMatchObject({ email_verified: true, roles: ['moderator'] });
    expect(created.setPasswordUrl).toMatch(/^https:\/\/directory\.example\/dashboard\/reset-password\?token=/);
    await expect(accounts.createVerified({ email: 'OPS@example.org', name: 'Twin', roles: [] }, 'cli')).rejects.toThrow(ValidationError);
    expect(await auditActions(created.account.id)).toEqual(['account.create']);
  });

  it('grants and revokes roles and disables accounts, audited; an admin cannot drop its own admin role', async () => {
    now = new Date(T(44));
    const { account } = await accounts.createVerified({ email: 'role@example.org', name: 'Role', roles: [], password: PASSWORD }, 'test');
    const { token: session } = await accounts.signIn('role@example.org', PASSWORD, '192.0.2.10');
    expect((await accounts.grantRole({ email: 'ROLE@example.org' }, 'admin', 'test')).roles).toEqual(['admin']);
    expect((await accounts.grantRole({ id: account.id }, 'admin', 'test')).roles).toEqual(['admin']); // already: no change
    await expect(accounts.revokeRole({ id: account.id }, 'admin', 'self', account.id)).rejects.toThrow(ConflictError);
    expect((await accounts.revokeRole({ id: account.id }, 'admin', 'test')).roles).toEqual([]);
    await expect(accounts.grantRole({ email: 'none@example.org' }, 'admin', 'test')).rejects.toThrow(NotFoundError);
    expect(await accounts.setDisabled(account.id, true, 'test')).toMatchObject({ disabled: true });
    expect(await accounts.authenticateSession(session)).toBeUndefined();
    expect(await accounts.setDisabled(account.id, false, 'test')).toMatchObject({ disabled: false });
    expect(await auditActions(account.id)).toEqual([
      'account.create',
      'account.roles',
      'account.roles',
      'account.disable',
      'account.enable',
    ]);
  });

  it('two admins granting two roles at once keep both', async () => {
    now = new Date(T(45));
    const { account } = await accounts.createVerified({ email: 'both@example.org', name: 'Both', roles: [] }, 'test');
    // A third transaction holds the row while both grants start, so both read it before either writes.
    const held = gate();
    const locked = gate();
    const holder = store.transaction(async () => {
      const { accounts: table } = store.t;
      await store.first(store.forUpdate(store.db.select().from(table).where(eq(table.id, account.id))));
      locked.open();
      await held.wait;
    });
    await locked.wait;
    const grants = Promise.all([
      accounts.grantRole({ id: account.id }, 'admin', 'a'),
      accounts.grantRole({ id: account.id }, 'moderator', 'b'),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    held.open();
    await holder;
    await grants;
    expect((await accounts.getAdmin(account.id)).roles.sort()).toEqual(['admin', 'moderator']);
  });

  it('renames and closes in one transaction with their hooks: a failing hook undoes all; closing takes sessions and tokens, detaches records', async () => {
    now = new Date(T(46));
    const { account, setPasswordUrl } = await accounts.createVerified({ email: 'close@example.org', name: 'Close', roles: [] }, 'test');
    expect(setPasswordUrl).toBeTruthy();
    const { claims } = store.t;
    await store.run(
      store.db.insert(claims).values({
        id: 'clm_closing',
        agentId: 'agt_a1',
        claimantName: 'Close',
        claimantEmail: 'close@example.org',
        status: 'pending',
        token: 'adclaim-x',
        verificationUrl: '',
        methods: [],
        accountId: account.id,
        createdAt: T(46),
        updatedAt: T(46),
      }),
    );
    const renamed: string[] = [];
    let failRename = true;
    accounts.onRename(async (accountId, name) => {
      if (failRename) throw new Error('a hook failed');
      renamed.push(`${accountId}=${name}`);
    });
    accounts.onClose((accountId) => records.detach(accountId));

    await expect(accounts.rename(account.id, 'Never')).rejects.toThrow('a hook failed');
    expect((await accounts.getAdmin(account.id)).name).toBe('Close');
    failRename = false;
    expect(await accounts.rename(account.id, 'Closing')).toMatchObject({ name: 'Closing' });
    expect(renamed).toEqual([`${account.id}=Closing`]);
    await expect(accounts.rename('acc_missing', 'X')).rejects.toThrow(NotFoundError);

    await accounts.close(account.id);
    await expect(accounts.getAdmin(account.id)).rejects.toThrow(NotFoundError);
    expect(await store.rows(store.db.select().from(store.t.oneTimeTokens).where(eq(store.t.oneTimeTokens.subjectId, account.id)))).toEqual(
      [],
    );
    expect((await store.first(store.db.select().from(claims).where(eq(claims.id, 'clm_closing'))))?.accountId).toBeNull();
    expect((await auditActions(account.id)).at(-1)).toBe('account.close');
    await expect(accounts.close(account.id)).rejects.toThrow(NotFoundError);
  });
});
