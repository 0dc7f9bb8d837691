import { defineStore } from 'pinia';
import { ref, shallowRef } from 'vue';
import { api } from '../api';
import type { AccountWebhook, AccountWebhookWithSecret, WebhookInput, WebhookPatch } from '../api-types';

/** The account's webhook endpoints, shared by the list and the endpoint page. */
export const useWebhooksStore = defineStore('dashboard-webhooks', () => {
  const endpoints = shallowRef<AccountWebhook[]>([]);
  const loaded = ref(false);

  function put(endpoint: AccountWebhook): AccountWebhook {
    const { secret: _secret, ...listed } = endpoint as AccountWebhookWithSecret;
    endpoints.value = endpoints.value.some((known) => known.id === listed.id)
      ? endpoints.value.map((known) => (known.id === listed.id ? listed : known))
      : [...endpoints.value, listed];
    return listed;
  }

  async function load(): Promise<void> {
    endpoints.value = await api.webhooks.list();
    loaded.value = true;
  }

  async function get(id: string): Promise<AccountWebhook> {
    return put(await api.webhooks.get(id));
  }

  async function create(input: WebhookInput): Promise<AccountWebhookWithSecret> {
    const created = await api.webhooks.create(input);
    put(created);
    return created;
  }

  async function update(id: string, patch: WebhookPatch): Promise<AccountWebhook> {
    return put(await api.webhooks.update(id, patch));
  }

  async function rotateSecret(id: string): Promise<AccountWebhookWithSecret> {
    const rotated = await api.webhooks.rotateSecret(id);
    put(rotated);
    return rotated;
  }

  async function remove(id: string): Promise<void> {
    await api.webhooks.remove(id);
    endpoints.value = endpoints.value.filter((endpoint) => endpoint.id !== id);
  }

  return { endpoints, loaded, load, get, create, update, rotateSecret, remove };
});
