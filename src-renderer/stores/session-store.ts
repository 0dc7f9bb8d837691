import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import { isDesktop, setAuthToken, toConsoleError, trpc } from '../trpc';

const TOKEN_KEY = 'agent-directory.admin-token';

/**
 * Who is signed in. In a browser the admin token lives in sessionStorage (gone
 * with the tab, never in localStorage); in Electron there is no token, the
 * main process vouches for the window.
 */
export const useSessionStore = defineStore('session', () => {
  const token = ref<string | null>(isDesktop ? null : sessionStorage.getItem(TOKEN_KEY));
  const actor = ref<string | null>(null);
  setAuthToken(token.value);

  const isSignedIn = computed(() => actor.value !== null);

  /** Checks `candidate` with system.whoami and keeps it only if the server accepts it. */
  async function signIn(candidate: string): Promise<void> {
    setAuthToken(candidate);
    try {
      const me = await trpc.system.whoami.query();
      token.value = candidate;
      actor.value = me.actor;
      sessionStorage.setItem(TOKEN_KEY, candidate);
    } catch (error) {
      setAuthToken(token.value);
      throw error;
    }
  }

  function signOut(): void {
    token.value = null;
    actor.value = null;
    sessionStorage.removeItem(TOKEN_KEY);
    setAuthToken(null);
  }

  /**
   * True when calls can be made: in Electron always; in a browser when the
   * stored token still works. Only a refused token signs out: with the server
   * down, the screens say so themselves.
   */
  async function ensureSignedIn(): Promise<boolean> {
    if (actor.value !== null) return true;
    if (!isDesktop && token.value === null) return false;
    try {
      actor.value = (await trpc.system.whoami.query()).actor;
      return true;
    } catch (error) {
      if (toConsoleError(error).code === 'unauthorized' && !isDesktop) {
        signOut();
        return false;
      }
      return true;
    }
  }

  return { token, actor, isSignedIn, isDesktop, signIn, signOut, ensureSignedIn };
});
