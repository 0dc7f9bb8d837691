import { and, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { Config } from '../../config';
import { containsText } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import {
  ConflictError,
  EmailNotVerifiedError,
  ForbiddenError,
  InvalidCredentialsError,
  NotFoundError,
  RateLimitedError,
  ValidationError,
} from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { PublicUrl } from '../../lib/public-url';
import type { Page } from '../../lib/schemas';
import type { AuditService } from '../audit/audit.service';
import type { MailService } from '../mail/mail.service';
import type { Account, AdminAccount, ListAccountsQuery, SignUpInput } from './accounts.schemas';
import type { AccountRole, AccountRow } from './accounts.table';
import { accountMails } from './account-mails';
import { assertStrongPassword, hashPassword, verifyAgainstDummy, verifyPassword } from './passwords';
import { createSessions } from './sessions';
import type { SignInLimits } from './sign-in-limiter';
import { createOneTimeTokens } from './tokens';

const HOUR = 60 * 60_000;
const VERIFY_TTL_MS = 24 * HOUR;
const RESET_TTL_MS = 1 * HOUR;
/** The CLI's set-password link: the new moderator may open it the next day. */
const SET_PASSWORD_TTL_MS = 72 * HOUR;

export interface AccountsServiceDeps {
  /** Every read and write runs through the data-access seam, on SQLite and PostgreSQL alike. */
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  config: Pick<Config, 'accounts' | 'rateLimit'>;
  mail: MailService;
  publicUrl: PublicUrl;
  audit: AuditService;
  /** The failed sign-in counters (in memory, or in Redis shared by every process). */
  signInLimits: SignInLimits;
}

/**
 * What closing an account takes with it besides the row; given by services.ts (keys, records, agents,
 * webhook endpoints). Runs in the closing store transaction: write through the Store, no network I/O.
 */
export type AccountCloseHook = (accountId: string, actor: string) => Promise<void>;
/** What a new name also changes (the owner name on owned agents' profiles), in the renaming store transaction. */
export type AccountRenameHook = (accountId: string, name: string) => Promise<void>;

export const emailKeyOf = (email: string): string => email.trim().toLowerCase();

export function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    email_verified: row.emailVerifiedAt !== null,
    roles: row.roles,
    created_at: row.createdAt,
  };
}

function toAdminAccount(row: AccountRow): AdminAccount {
  return { ...toAccount(row), disabled: row.disabledAt !== null, updated_at: row.updatedAt };
}

/** How the audit log names an account: its e-mail and id, so "who" survives a change of address. */
export const accountActor = (row: Pick<AccountRow, 'id' | 'email'>): string => `${row.email} (${row.id})`;

/**
 * Accounts: sign-up with e-mail verification, sign-in into sessions, password
 * reset, closing; and for admins, roles and disabling. Nothing here tells a
 * caller whether an address has an account: sign-up and reset answer the same,
 * and sign-in spends the same hashing time for unknown addresses.
 */
export function createAccountsService({ store, clock, ids, config, mail, publicUrl, audit, signInLimits: limiter }: AccountsServiceDeps) {
  const tokens = createOneTimeTokens({ store, clock, ids });
  const sessions = createSessions({ store, clock, ids, config: config.accounts });
  const mails = accountMails(publicUrl);
  const closeHooks: AccountCloseHook[] = [];
  const renameHooks: AccountRenameHook[] = [];
  /** The same lookups through the store (the ported methods). */
  const findByEmail = (email: string): Promise<AccountRow | undefined> =>
    store.first(
      store.db
        .select()
        .from(store.t.accounts)
        .where(eq(store.t.accounts.emailKey, emailKeyOf(email)))
        .limit(1),
    );
  const findById = (id: string): Promise<AccountRow | undefined> =>
    store.first(store.db.select().from(store.t.accounts).where(eq(store.t.accounts.id, id)).limit(1));
  const loadRow = async (id: string): Promise<AccountRow> => {
    const row = await findById(id);
    if (!row) throw new NotFoundError('Account', id);
    return row;
  };
  /** The row to change, locked until the transaction ends (PostgreSQL: two admins' changes apply one after the other). */
  const lockRow = async (idOrEmail: { id?: string; email?: string }): Promise<AccountRow> => {
    const { accounts } = store.t;
    const where = idOrEmail.id ? eq(accounts.id, idOrEmail.id) : eq(accounts.emailKey, emailKeyOf(idOrEmail.email ?? ''));
    const row = await store.first(store.forUpdate(store.db.select().from(accounts).where(where).limit(1)));
    if (row) return row;
    if (idOrEmail.id) throw new NotFoundError('Account', idOrEmail.id);
    throw new NotFoundError(`No account with the e-mail address "${(idOrEmail.email ?? '').trim()}"`);
  };
  const setRoles = async (row: AccountRow, roles: AccountRole[], actor: string): Promise<AccountRow> => {
    const after = { ...row, roles, updatedAt: isoNow(clock) };
    await store.run(store.db.update(store.t.accounts).set({ roles, updatedAt: after.updatedAt }).where(eq(store.t.accounts.id, row.id)));
    await audit.recordInTransaction({
      actor,
      action: 'account.roles',
      entityType: 'account',
      entityId: row.id,
      before: toAdminAccount(row),
      after: toAdminAccount(after),
    });
    return after;
  };

  return {
    /** What closing an account also ends (registered once by services.ts). */
    onClose(hook: AccountCloseHook): void {
      closeHooks.push(hook);
    },

    /** What a new name also changes (the owner name on owned agents' profiles), in the renaming transaction. */
    onRename(hook: AccountRenameHook): void {
      renameHooks.push(hook);
    },

    /**
     * Sign-up. A new address gets an account and a verification link; a known
     * one gets a notice instead (or a fresh link while still unverified). The
     * answer and the time taken are the same either way.
     */
    async signUp(input: SignUpInput): Promise<void> {
      assertStrongPassword(input.password, { email: input.email });
      const passwordHash = await hashPassword(input.password); // spent for known addresses too
      await store.transaction(async () => {
        const existing = await findByEmail(input.email);
        if (existing) {
          if (existing.emailVerifiedAt === null && existing.disabledAt === null) {
            await tokens.revokeAll('verify_email', existing.id);
            await mail.queueInTransaction(mails.verify(existing, await tokens.issue('verify_email', existing.id, VERIFY_TTL_MS)));
          } else {
            await mail.queueInTransaction(mails.alreadyRegistered(existing));
          }
          return;
        }
        const now = isoNow(clock);
        const row: AccountRow = {
          id: ids.next('acc'),
          email: input.email.trim(),
          emailKey: emailKeyOf(input.email),
          name: input.name,
          passwordHash,
          emailVerifiedAt: null,
          roles: [],
          disabledAt: null,
          createdAt: now,
          updatedAt: now,
        };
        // Two sign-ups of one new address at once (side by side on PostgreSQL): the unique e-mail key keeps one
        // account, and the other sign-up ends here, as for a known address (its mail is the first one's).
        const inserted = await store.run(store.db.insert(store.t.accounts).values(row).onConflictDoNothing());
        if (inserted === 0) return;
        await mail.queueInTransaction(mails.verify(row, await tokens.issue('verify_email', row.id, VERIFY_TTL_MS)));
      });
    },

    /** Marks the address verified; the token is single-use and lasts 24 h. */
    verifyEmail(token: string): Promise<Account> {
      return store.transaction(async () => {
        const row = await loadRow(await tokens.consume('verify_email', token));
        if (row.emailVerifiedAt) return toAccount(row);
        const now = isoNow(clock);
        await store.run(
          store.db.update(store.t.accounts).set({ emailVerifiedAt: now, updatedAt: now }).where(eq(store.t.accounts.id, row.id)),
        );
        return toAccount({ ...row, emailVerifiedAt: now, updatedAt: now });
      });
    },

    /**
     * Checks the password and starts a session. One answer (401
     * invalid_credentials) for an unknown address and a wrong password; 10
     * failures per address or per IP in 15 minutes → 429.
     */
    async signIn(email: string, password: string, ip: string): Promise<{ account: Account; token: string; expiresAt: Date }> {
      const limitKeys = [`email:${emailKeyOf(email)}`, `ip:${ip}`];
      // Counted as a failure from the start (with the check, in one step), taken back once the password is right.
      const started = await limiter.begin(limitKeys);
      if ('wait' in started) throw new RateLimitedError(started.wait, 'sign-in');
      const row = await findByEmail(email);
      const ok = row?.passwordHash ? await verifyPassword(row.passwordHash, password) : await verifyAgainstDummy(password);
      if (!row || !ok) throw new InvalidCredentialsError();
      const signedIn = !row.disabledAt && row.emailVerifiedAt !== null;
      await limiter.settle(limitKeys, started.attempt, signedIn);
      if (row.disabledAt) throw new ForbiddenError('This account has been disabled by an administrator', 'account_disabled');
      if (!row.emailVerifiedAt) throw new EmailNotVerifiedError();
      const session = await sessions.create(row.id);
      return { account: toAccount(row), ...session };
    },

    /** The account of a live session cookie, or undefined. */
    async authenticateSession(token: string): Promise<Account | undefined> {
      const accountId = await sessions.authenticate(token);
      if (!accountId) return undefined;
      const row = await findById(accountId);
      return row && !row.disabledAt ? toAccount(row) : undefined;
    },

    signOut(token: string): Promise<void> {
      return sessions.end(token);
    },

    /** Mails a reset link (1 h) to a known address; the answer is the same for unknown ones. */
    requestPasswordReset(email: string): Promise<void> {
      return store.transaction(async () => {
        const row = await findByEmail(email);
        if (!row || row.disabledAt) return;
        await tokens.revokeAll('password_reset', row.id);
        await mail.queueInTransaction(mails.passwordReset(row, await tokens.issue('password_reset', row.id, RESET_TTL_MS)));
      });
    },

    /** Sets the new password and ends every session of the account. Opening the mail's link also proves the address. */
    async confirmPasswordReset(token: string, password: string): Promise<Account> {
      assertStrongPassword(password);
      const passwordHash = await hashPassword(password);
      return store.transaction(async () => {
        const row = await loadRow(await tokens.consume('password_reset', token));
        const now = isoNow(clock);
        const after: AccountRow = { ...row, passwordHash, emailVerifiedAt: row.emailVerifiedAt ?? now, updatedAt: now };
        await store.run(
          store.db
            .update(store.t.accounts)
            .set({ passwordHash, emailVerifiedAt: after.emailVerifiedAt, updatedAt: now })
            .where(eq(store.t.accounts.id, row.id)),
        );
        await sessions.endAll(row.id);
        await tokens.revokeAll('password_reset', row.id);
        return toAccount(after);
      });
    },

    async get(id: string): Promise<Account> {
      return toAccount(await loadRow(id));
    },

    /** The row (for roles and the audit actor); undefined when gone. */
    find(id: string): Promise<AccountRow | undefined> {
      return findById(id);
    },

    rename(id: string, name: string): Promise<Account> {
      return store.transaction(async () => {
        const row = await lockRow({ id });
        const now = isoNow(clock);
        await store.run(store.db.update(store.t.accounts).set({ name, updatedAt: now }).where(eq(store.t.accounts.id, id)));
        for (const hook of renameHooks) await hook(id, name);
        return toAccount({ ...row, name, updatedAt: now });
      });
    },

    /** Closes the account: keys revoked, endpoints removed, sessions and tokens gone; its agents stay listed without an owner. */
    close(id: string): Promise<void> {
      return store.transaction(async () => {
        const row = await lockRow({ id });
        const actor = accountActor(row);
        for (const hook of closeHooks) await hook(id, actor);
        await tokens.deleteForSubject(id);
        // Sessions cascade; owned records keep a null owner (the hooks above detached them).
        await store.run(store.db.delete(store.t.accounts).where(eq(store.t.accounts.id, id)));
        await audit.recordInTransaction({
          actor,
          action: 'account.close',
          entityType: 'account',
          entityId: id,
          before: toAdminAccount(row),
        });
      });
    },

    // ---- Administration (CLI and the console's Accounts screen) ----

    /**
     * A verified account made by an operator. With a password it is set at once;
     * without one a set-password link (72 h, single-use) is returned to hand over.
     */
    async createVerified(
      input: { email: string; name: string; roles: AccountRole[]; password?: string },
      actor: string,
    ): Promise<{ account: Account; setPasswordUrl?: string }> {
      if (input.password !== undefined) assertStrongPassword(input.password, { email: input.email });
      const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
      const taken = () =>
        new ValidationError(`An account with the e-mail address "${input.email.trim()}" exists already`, [
          { pointer: '/email', detail: 'is taken' },
        ]);
      return store.transaction(async () => {
        if (await findByEmail(input.email)) throw taken();
        const now = isoNow(clock);
        const row: AccountRow = {
          id: ids.next('acc'),
          email: input.email.trim(),
          emailKey: emailKeyOf(input.email),
          name: input.name,
          passwordHash,
          emailVerifiedAt: now,
          roles: [...new Set(input.roles)],
          disabledAt: null,
          createdAt: now,
          updatedAt: now,
        };
        // Taken meanwhile by a sign-up running side by side (PostgreSQL): the unique e-mail key says so.
        if ((await store.run(store.db.insert(store.t.accounts).values(row).onConflictDoNothing())) === 0) throw taken();
        await audit.recordInTransaction({
          actor,
          action: 'account.create',
          entityType: 'account',
          entityId: row.id,
          after: toAdminAccount(row),
        });
        const setPasswordUrl =
          passwordHash === null ? mails.setPasswordUrl(await tokens.issue('password_reset', row.id, SET_PASSWORD_TTL_MS)) : undefined;
        return { account: toAccount(row), ...(setPasswordUrl && { setPasswordUrl }) };
      });
    },

    async list(query: ListAccountsQuery): Promise<Page<AdminAccount>> {
      const { accounts } = store.t;
      const conditions: SQL[] = [];
      if (query.q) {
        const needle = query.q.toLowerCase();
        // An exact id too: the audit log links an account's entries to it.
        conditions.push(
          sql`(${containsText(store, accounts.emailKey, needle)} OR ${containsText(store, sql`lower(${accounts.name})`, needle)} OR ${accounts.id} = ${query.q})`,
        );
      }
      if (query.role) {
        // The roles are a JSON array: its elements as rows, per dialect.
        const elements =
          store.dialect === 'sqlite' ? sql`json_each(${accounts.roles})` : sql`json_array_elements_text(${accounts.roles}) AS value`;
        conditions.push(sql`exists (select 1 from ${elements} where value = ${query.role})`);
      }
      const where = conditions.length ? and(...conditions) : undefined;
      const rows = await store.rows(
        store.db
          .select()
          .from(accounts)
          .where(where)
          .orderBy(desc(accounts.createdAt), desc(accounts.id))
          .limit(query.limit)
          .offset((query.page - 1) * query.limit),
      );
      const total = (await store.first(store.db.select({ n: count() }).from(accounts).where(where)))?.n ?? 0;
      return { items: rows.map(toAdminAccount), page: query.page, limit: query.limit, total };
    },

    async getAdmin(id: string): Promise<AdminAccount> {
      return toAdminAccount(await loadRow(id));
    },

    grantRole(idOrEmail: { id?: string; email?: string }, role: AccountRole, actor: string): Promise<AdminAccount> {
      return store.transaction(async () => {
        const row = await lockRow(idOrEmail);
        if (row.roles.includes(role)) return toAdminAccount(row);
        return toAdminAccount(await setRoles(row, [...row.roles, role], actor));
      });
    },

    /** `selfId`: the acting admin's own account, which cannot drop its own admin role (someone must keep it). */
    revokeRole(idOrEmail: { id?: string; email?: string }, role: AccountRole, actor: string, selfId?: string): Promise<AdminAccount> {
      return store.transaction(async () => {
        const row = await lockRow(idOrEmail);
        if (!row.roles.includes(role)) return toAdminAccount(row);
        if (role === 'admin' && row.id === selfId) throw new ConflictError('You cannot revoke your own admin role; ask another admin');
        return toAdminAccount(
          await setRoles(
            row,
            row.roles.filter((r) => r !== role),
            actor,
          ),
        );
      });
    },

    /** Disabling ends the sessions and refuses sign-in and the account's keys; enabling undoes it. */
    setDisabled(id: string, disabled: boolean, actor: string, selfId?: string): Promise<AdminAccount> {
      return store.transaction(async () => {
        const row = await lockRow({ id });
        if (disabled && id === selfId) throw new ConflictError('You cannot disable your own account');
        if ((row.disabledAt !== null) === disabled) return toAdminAccount(row);
        const now = isoNow(clock);
        const after: AccountRow = { ...row, disabledAt: disabled ? now : null, updatedAt: now };
        await store.run(
          store.db.update(store.t.accounts).set({ disabledAt: after.disabledAt, updatedAt: now }).where(eq(store.t.accounts.id, id)),
        );
        if (disabled) await sessions.endAll(id);
        await audit.recordInTransaction({
          actor,
          action: disabled ? 'account.disable' : 'account.enable',
          entityType: 'account',
          entityId: id,
          before: toAdminAccount(row),
          after: toAdminAccount(after),
        });
        return toAdminAccount(after);
      });
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
