import { onMounted, ref, shallowRef, type Ref, type ShallowRef } from 'vue';
import { useRouter } from 'vue-router';
import { endsSession, useSessionStore } from '../stores/session-store';
import { toConsoleError, type ConsoleError } from '../trpc';

export interface RemoteData<T> {
  data: ShallowRef<T | undefined>;
  error: Ref<ConsoleError | null>;
  loading: Ref<boolean>;
  reload: () => Promise<void>;
}

/**
 * Loads something through the tRPC client with loading and error states. A
 * refused token (the server restarted with another one, say) leads back to
 * sign-in instead of an error on every screen.
 */
export function useRemoteData<T>(load: () => Promise<T>): RemoteData<T> {
  const data = shallowRef<T>();
  const error = ref<ConsoleError | null>(null);
  const loading = ref(true);
  const session = useSessionStore();
  const router = useRouter();

  async function reload(): Promise<void> {
    loading.value = true;
    error.value = null;
    try {
      data.value = await load();
    } catch (cause) {
      const described = toConsoleError(cause);
      if (endsSession(described.code) && !session.isDesktop) {
        session.signOut();
        await router.replace({ name: 'sign-in', query: { redirect: router.currentRoute.value.fullPath, expired: '1' } });
        return;
      }
      error.value = described;
    } finally {
      loading.value = false;
    }
  }

  onMounted(reload);
  return { data, error, loading, reload };
}
