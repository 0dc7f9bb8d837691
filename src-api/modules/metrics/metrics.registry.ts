import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Services } from '../../services';
import { API_VERSION } from '../../version';
import { DELIVERY_STATUSES } from '../webhooks/webhooks.schemas';
import type { DeliveryStatus } from '../webhooks/webhooks.table';
import { createRequestSeries } from './request-series';

/**
 * The Prometheus metrics of one app instance: its own registry (tests run
 * several servers in one process, and prom-client's global registry would mix
 * them; only prom-client's process defaults are shared). Counters move
 * through cheap hooks (`observeRequest`, see request-series.ts; the
 * dispatcher's attempt listener); gauges (queues, index) are read from the
 * services when scraped, so nothing is computed between scrapes.
 */

/** Seconds; from a cached by-id read (~0.1 ms) up to the slowest searches and timeouts. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Label of requests that matched no route: raw URLs would make the label set unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

/** What an attempt did to its delivery, as the `outcome` label. */
const ATTEMPT_OUTCOME: Record<DeliveryStatus, string> = {
  succeeded: 'succeeded',
  pending: 'retry_scheduled',
  failed: 'failed',
  cancelled: 'cancelled',
  in_flight: 'superseded',
};

export interface MetricsDeps {
  services: Pick<Services, 'search' | 'webhooks' | 'webhookDispatcher' | 'mail' | 'background'>;
}

let processMetrics: Registry | undefined;

/**
 * Process memory, CPU, event-loop lag, GC, handles: prom-client's defaults, one
 * registry per process (they describe the process, and each set starts an
 * event-loop monitor and a GC observer that are never stopped).
 */
function processRegistry(): Registry {
  if (processMetrics) return processMetrics;
  processMetrics = new Registry();
  collectDefaultMetrics({ register: processMetrics });
  // Gauges named like counters, which promtool's lint rejects; the same figures are in nodejs_active_{handles,requests,resources} by type.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    processMetrics.removeSingleMetric(name);
  }
  return processMetrics;
}

export function createMetrics({ services }: MetricsDeps) {
  const registry = new Registry();
  const defaults = processRegistry();

  const requests = createRequestSeries({ registry, prefix: 'agentdir_http_request', bucketsSeconds: LATENCY_BUCKETS });
  const rateLimited = new Counter({
    name: 'agentdir_rate_limit_rejections_total',
    help: 'Requests refused with 429 by a rate limit, by policy.',
    labelNames: ['policy'] as const,
    registers: [registry],
  });
  const webhookAttempts = new Counter({
    name: 'agentdir_webhook_attempts_total',
    help: 'Webhook delivery attempts sent by this process, by what they did to the delivery.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of Object.values(ATTEMPT_OUTCOME)) webhookAttempts.inc({ outcome }, 0);

  new Gauge({
    name: 'agentdir_webhook_deliveries',
    help: 'Webhook deliveries in the database, by status (all processes).',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      const counts = await services.webhooks.queue.countByStatus();
      for (const status of DELIVERY_STATUSES) this.set({ status }, counts[status]);
    },
  });
  new Gauge({
    name: 'agentdir_webhook_queue_depth',
    help: 'Webhook deliveries waiting to be sent or being sent (pending and in flight).',
    registers: [registry],
    async collect() {
      const counts = await services.webhooks.queue.countByStatus();
      this.set(counts.pending + counts.in_flight);
    },
  });
  new Gauge({
    name: 'agentdir_mail_messages',
    help: 'Mails in the outbox, by status (all processes).',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      const counts = await services.mail.countsByStatus();
      for (const [status, n] of Object.entries(counts)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'agentdir_mail_queue_depth',
    help: 'Mails waiting in the outbox to be sent or retried, or being sent (pending and sending).',
    registers: [registry],
    async collect() {
      const counts = await services.mail.countsByStatus();
      this.set(counts.pending + counts.sending);
    },
  });
  new Gauge({
    name: 'agentdir_search_index_documents',
    help: 'Listed agents in the in-memory search index.',
    registers: [registry],
    async collect() {
      this.set((await services.search.indexStatus()).documents);
    },
  });
  new Gauge({
    name: 'agentdir_search_index_last_refresh_timestamp_seconds',
    help: 'When the search index last took in a change (Unix seconds; 0 before the first).',
    registers: [registry],
    async collect() {
      this.set((await services.search.indexStatus()).lastRefreshMs / 1000);
    },
  });
  new Gauge({
    name: 'agentdir_background_jobs',
    help: 'Background jobs in progress in this process (start-up warm-ups of the search index and profile cache, the trust score refresh); 0 once the server has settled.',
    registers: [registry],
    collect() {
      this.set(services.background.running);
    },
  });
  new Gauge({
    name: 'agentdir_build_info',
    help: 'The running version, as a label; always 1.',
    labelNames: ['version'] as const,
    registers: [registry],
  }).set({ version: API_VERSION }, 1);

  const stopAttempts = services.webhookDispatcher.onAttempt((_outcome, status) => {
    webhookAttempts.inc({ outcome: status === null ? 'superseded' : ATTEMPT_OUTCOME[status] });
  });

  return {
    registry,

    /** One answered request; `route` is the pattern (`/api/v1/agents/:id`), never the raw URL. */
    observeRequest(method: string, route: string | undefined, statusCode: number, elapsedMs: number): void {
      requests.observe(method, route ?? UNMATCHED_ROUTE, statusCode, elapsedMs / 1000);
    },

    observeRateLimited(policy: string): void {
      rateLimited.inc({ policy });
    },

    /** The exposition text (the process's defaults, then this app's) and its content type. */
    async scrape(): Promise<{ contentType: string; body: string }> {
      return { contentType: registry.contentType, body: await Registry.merge([defaults, registry]).metrics() };
    },

    close(): void {
      stopAttempts();
      registry.clear();
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
