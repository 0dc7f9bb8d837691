import { defineStore } from 'pinia';
import { computed, ref, shallowRef } from 'vue';
import { api } from '../api';
import type { ApiKey, IssuedKey, UsageDay } from '../api-types';

/** The account's API keys and their daily usage. */
export const useKeysStore = defineStore('dashboard-keys', () => {
  const keys = shallowRef<ApiKey[]>([]);
  const usage = shallowRef<UsageDay[]>([]);
  const loaded = ref(false);

  const activeKeys = computed(() => keys.value.filter((key) => !key.revoked_at));

  async function load(): Promise<void> {
    keys.value = await api.keys.list();
    loaded.value = true;
  }

  async function loadUsage(days: number): Promise<void> {
    usage.value = (await api.me.usage(days)).days;
  }

  async function issue(name: string): Promise<IssuedKey> {
    const issued = await api.keys.create(name);
    const { key: _shownOnce, ...listed } = issued;
    keys.value = [listed, ...keys.value];
    return issued;
  }

  async function revoke(id: string): Promise<void> {
    await api.keys.revoke(id);
    // The list says what revoking left behind (a revoked entry, or nothing).
    await load();
  }

  return { keys, usage, loaded, activeKeys, load, loadUsage, issue, revoke };
});
