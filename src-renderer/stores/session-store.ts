import type { inferRouterOutputs } from '@trpc/server';
import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import type { AccountRole } from '../../src-api/modules/accounts/accounts.table';
import type { AppRouter } from '../../src-api/trpc/root';
import { createSession, endSession, SessionError } from '../account-session';
import { endsSession, isDesktop, setAuthToken, toConsoleError, trpc } from '../trpc';

export type SessionMe = inferRouterOutputs<AppRouter>['session']['me'];

const TOKEN_KEY = 'agent-directory.admin-token';
/** Set while this tab is signed in with an account (the cookie itself is HttpOnly, so unreadable here). */
const ACCOUNT_KEY = 'agent-directory.account-session';

export { endsSession } from '../trpc';

/** The desktop window is the local moderator with every role (src-main vouches for it). */
const DESKTOP_ROLES: readonly AccountRole[] = ['moderator', 'admin'];

/**
 * Who is signed in, and with which roles. In a browser that is an account
 * (e-mail and password: an HttpOnly session cookie) or, for automation, the
 * admin token (kept in sessionStorage, gone with the tab); in Electron there
 * is neither, the main process vouches for the window.
 */
export const useSessionStore = defineStore('session', () => {
  const token = ref<string | null>(isDesktop ? null : sessionStorage.getItem(TOKEN_KEY));
  const me = ref<SessionMe | null>(null);
  setAuthToken(token.value);

  const actor = computed(() => me.value?.actor ?? null);
  const isSignedIn = computed(() => me.value !== null);
  const roles = computed<readonly AccountRole[]>(() => me.value?.roles ?? (isDesktop ? DESKTOP_ROLES : []));
  const isAdmin = computed(() => roles.value.includes('admin'));
  /** What the top bar shows: the account's name, else the actor (admin-token, desktop-moderator). */
  const displayName = computed(() => me.value?.account?.name ?? me.value?.actor ?? null);
  const roleLabel = computed(() => (isAdmin.value ? 'admin' : roles.value.includes('moderator') ? 'moderator' : null));

  function hasRole(role: AccountRole): boolean {
    // An admin may do everything a moderator may.
    return role === 'moderator' ? roles.value.length > 0 : roles.value.includes(role);
  }

  /** Checks `candidate` with session.me and keeps it only if the server accepts it. */
  async function signInWithToken(candidate: string): Promise<void> {
    setAuthToken(candidate);
    try {
      me.value = await trpc.session.me.query();
      token.value = candidate;
      sessionStorage.setItem(TOKEN_KEY, candidate);
      sessionStorage.removeItem(ACCOUNT_KEY);
    } catch (error) {
      setAuthToken(token.value);
      throw error;
    }
  }

  /**
   * E-mail and password: the REST sign-in sets the cookie, then session.me says
   * whether the account may use the console. One without a role is signed out
   * again at once, so no session is left behind that the console cannot use.
   */
  async function signInWithPassword(email: string, password: string): Promise<void> {
    await createSession(email, password);
    // A token from before would win over the cookie: the account replaces it.
    token.value = null;
    sessionStorage.removeItem(TOKEN_KEY);
    setAuthToken(null);
    try {
      me.value = await trpc.session.me.query();
      sessionStorage.setItem(ACCOUNT_KEY, '1');
    } catch (cause) {
      const described = toConsoleError(cause);
      if (described.code === 'console_role_required') await endSession();
      throw new SessionError(described.code, described.message, described.status);
    }
  }

  /** Reads the roles again (an admin made a moderator meanwhile): the sidebar and the screens follow. */
  async function refresh(): Promise<void> {
    if (me.value === null) return;
    try {
      me.value = await trpc.session.me.query();
    } catch {
      // A refused session is handled where every refusal is (the router); offline changes nothing.
    }
  }

  /** Forgets who was signed in; an account's session also ends on the server. */
  function signOut(): Promise<void> {
    const hadAccount = me.value?.via === 'account' || sessionStorage.getItem(ACCOUNT_KEY) !== null;
    token.value = null;
    me.value = null;
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(ACCOUNT_KEY);
    setAuthToken(null);
    return hadAccount ? endSession() : Promise.resolve();
  }

  /**
   * True when calls can be made: in Electron always; in a browser when the
   * stored token or the session cookie still works. Only a refusal signs out:
   * with the server down, the screens say so themselves.
   */
  async function ensureSignedIn(): Promise<boolean> {
    if (me.value !== null) return true;
    try {
      me.value = await trpc.session.me.query();
      return true;
    } catch (error) {
      if (isDesktop) return true;
      const { code } = toConsoleError(error);
      if (endsSession(code)) {
        void signOut();
        return false;
      }
      return token.value !== null || sessionStorage.getItem(ACCOUNT_KEY) !== null;
    }
  }

  return {
    token,
    me,
    actor,
    isSignedIn,
    isDesktop,
    roles,
    isAdmin,
    displayName,
    roleLabel,
    hasRole,
    signInWithToken,
    signInWithPassword,
    signOut,
    refresh,
    ensureSignedIn,
  };
});
