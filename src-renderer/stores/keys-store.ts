import type { inferRouterOutputs } from '@trpc/server';
import { defineStore } from 'pinia';
import { computed, ref, shallowRef } from 'vue';
import type { AppRouter } from '../../src-api/trpc/root';
import { trpc } from '../trpc';

type Outputs = inferRouterOutputs<AppRouter>['keys'];
export type ApiKey = Outputs['list']['keys'][number];
/** The answer to keys.create: the summary plus the key itself, which is never shown again. */
export type IssuedKey = Outputs['create'];

/**
 * The API keys, shared by the keys screen and anything that counts them. Calls
 * throw as the tRPC client does; the screens turn errors into messages.
 */
export const useKeysStore = defineStore('keys', () => {
  const keys = shallowRef<ApiKey[]>([]);
  const loaded = ref(false);

  const activeCount = computed(() => keys.value.filter((key) => key.revoked_at === null).length);
  const revokedCount = computed(() => keys.value.length - activeCount.value);

  function put(key: ApiKey): void {
    const index = keys.value.findIndex((candidate) => candidate.id === key.id);
    keys.value = index === -1 ? [key, ...keys.value] : keys.value.map((candidate) => (candidate.id === key.id ? key : candidate));
  }

  async function load(): Promise<ApiKey[]> {
    keys.value = (await trpc.keys.list.query()).keys;
    loaded.value = true;
    return keys.value;
  }

  /** Issues a key; the answer carries the key, the store keeps only its summary. */
  async function issue(name: string): Promise<IssuedKey> {
    const issued = await trpc.keys.create.mutate({ name });
    const { key: _secret, ...summary } = issued;
    put(summary);
    return issued;
  }

  async function revoke(id: string): Promise<ApiKey> {
    const revoked = await trpc.keys.revoke.mutate({ id });
    put(revoked);
    return revoked;
  }

  return { keys, loaded, activeCount, revokedCount, load, issue, revoke };
});
