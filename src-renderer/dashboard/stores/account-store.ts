import { defineStore } from 'pinia';
import { computed, ref, shallowRef } from 'vue';
import { api, toApiError } from '../api';
import type { Account } from '../api-types';

/**
 * Who is signed in. The session itself is an HttpOnly cookie the page never
 * sees: GET /me says whether it is still good.
 */
export const useAccountStore = defineStore('account', () => {
  const account = shallowRef<Account | null>(null);
  const checked = ref(false);

  const isSignedIn = computed(() => account.value !== null);

  /** True when a session is open; asks the server once, then trusts what it learned. */
  async function ensureLoaded(): Promise<boolean> {
    if (checked.value) return account.value !== null;
    try {
      account.value = await api.me.get();
    } catch (cause) {
      const error = toApiError(cause);
      // Signed out (401) is the common case; anything else also leaves the visitor signed out, the pages say why.
      if (error.status !== 401) console.warn('Could not check the session:', error.message);
      account.value = null;
    }
    checked.value = true;
    return account.value !== null;
  }

  async function signIn(email: string, password: string): Promise<Account> {
    const { account: signedIn } = await api.sessions.signIn(email, password);
    account.value = signedIn;
    checked.value = true;
    return signedIn;
  }

  async function signOut(): Promise<void> {
    try {
      await api.sessions.signOut();
    } finally {
      forget();
    }
  }

  /** The session ended (signed out, closed, or refused by the server). */
  function forget(): void {
    account.value = null;
    checked.value = true;
  }

  async function rename(name: string): Promise<Account> {
    account.value = await api.me.update({ name });
    return account.value;
  }

  async function close(): Promise<void> {
    await api.me.close();
    forget();
  }

  return { account, isSignedIn, ensureLoaded, signIn, signOut, forget, rename, close };
});
