import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { defineStore } from 'pinia';
import { computed, ref, shallowRef } from 'vue';
import type { AppRouter } from '../../src-api/trpc/root';
import type { EventKind } from '../shared/webhooks/webhook-types';
import { trpc } from '../trpc';

type Outputs = inferRouterOutputs<AppRouter>['webhooks'];
type Inputs = inferRouterInputs<AppRouter>['webhooks'];

export type {
  DeliveriesQuery,
  DeliveryStatus,
  EventKind,
  WebhookAttempt,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookPreview,
  WebhookTestResult,
} from '../shared/webhooks/webhook-types';

/** An endpoint as the list shows it: no secret, with its latest delivery. */
export type WebhookEndpoint = Outputs['list']['endpoints'][number];
/** What a change answers with: the endpoint without its latest delivery. */
export type WebhookEndpointCore = Outputs['get'];
/** Only after creating, rotating or revealing. */
export type WebhookEndpointWithSecret = Outputs['create'];
export type EndpointInput = Inputs['create'];
export type EndpointPatch = Omit<Inputs['update'], 'id' | 'expectedVersion'>;

/**
 * The webhook endpoints, shared by the list and the endpoint screen. Changes
 * send the version the console last saw; calls throw as the tRPC client does
 * (a `stale_version` code when someone else changed the endpoint first), and
 * the screens turn errors into messages.
 */
export const useWebhooksStore = defineStore('webhooks', () => {
  const endpoints = shallowRef<WebhookEndpoint[]>([]);
  const eventKinds = shallowRef<EventKind[]>([]);
  const loaded = ref(false);

  const activeCount = computed(() => endpoints.value.filter((endpoint) => endpoint.active).length);
  const disabledCount = computed(() => endpoints.value.length - activeCount.value);
  const failingCount = computed(() => endpoints.value.filter((endpoint) => endpoint.active && endpoint.consecutive_failures > 0).length);

  function byId(id: string): WebhookEndpoint | undefined {
    return endpoints.value.find((endpoint) => endpoint.id === id);
  }

  /** Puts a changed endpoint in the list, keeping the latest delivery the list knew of. */
  function put(endpoint: WebhookEndpointCore): WebhookEndpoint {
    const { secret: _secret, ...core } = endpoint as WebhookEndpointCore & { secret?: string };
    const known = byId(core.id);
    const next: WebhookEndpoint = { ...core, last_delivery: known?.last_delivery ?? null };
    endpoints.value = known
      ? endpoints.value.map((candidate) => (candidate.id === core.id ? next : candidate))
      : [...endpoints.value, next];
    return next;
  }

  async function load(): Promise<WebhookEndpoint[]> {
    const result = await trpc.webhooks.list.query();
    endpoints.value = result.endpoints;
    eventKinds.value = result.eventKinds;
    loaded.value = true;
    return endpoints.value;
  }

  /** The latest state of one endpoint (after a stale-version warning, say); undefined when it is gone. */
  async function refresh(id: string): Promise<WebhookEndpoint | undefined> {
    await load();
    return byId(id);
  }

  async function create(input: EndpointInput): Promise<WebhookEndpointWithSecret> {
    const created = await trpc.webhooks.create.mutate(input);
    put(created);
    return created;
  }

  async function update(endpoint: WebhookEndpointCore, patch: EndpointPatch): Promise<WebhookEndpoint> {
    return put(await trpc.webhooks.update.mutate({ id: endpoint.id, expectedVersion: endpoint.version, ...patch }));
  }

  async function setActive(endpoint: WebhookEndpointCore, active: boolean, reason?: string): Promise<WebhookEndpoint> {
    return put(await trpc.webhooks.setActive.mutate({ id: endpoint.id, active, reason, expectedVersion: endpoint.version }));
  }

  async function rotateSecret(endpoint: WebhookEndpointCore): Promise<WebhookEndpointWithSecret> {
    const rotated = await trpc.webhooks.rotateSecret.mutate({ id: endpoint.id, expectedVersion: endpoint.version });
    put(rotated);
    return rotated;
  }

  /** Audited on the server: someone saw the secret. */
  async function revealSecret(id: string): Promise<WebhookEndpointWithSecret> {
    const revealed = await trpc.webhooks.revealSecret.mutate({ id });
    put(revealed);
    return revealed;
  }

  async function remove(id: string): Promise<void> {
    await trpc.webhooks.remove.mutate({ id });
    endpoints.value = endpoints.value.filter((endpoint) => endpoint.id !== id);
  }

  return {
    endpoints,
    eventKinds,
    loaded,
    activeCount,
    disabledCount,
    failingCount,
    byId,
    put,
    load,
    refresh,
    create,
    update,
    setActive,
    rotateSecret,
    revealSecret,
    remove,
  };
});
