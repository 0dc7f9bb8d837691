import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { WebhookDeliveryDetail } from '../../src-api/modules/webhooks/webhooks.schemas';
import type { Services } from '../../src-api/services';

/**
 * A real webhook receiver on 127.0.0.1 (port 0) for tests and the benchmark.
 * It checks every request's signature with its own HMAC code (deliberately
 * not the service's), records everything, and answers as told.
 */

export interface ReceivedWebhook {
  method: string;
  path: string;
  /** Lower-cased header names, as node:http gives them. */
  headers: http.IncomingHttpHeaders;
  rawBody: Buffer;
  /** The parsed body, or undefined when it is not JSON. */
  body: { id: string; event: string; timestamp: string; data: Record<string, unknown> } | undefined;
  /** The X-Service-Signature header matched an HMAC-SHA256 of the raw body with the receiver's secret. */
  signatureValid: boolean;
  /** The Standard Webhooks headers verified with the official `standardwebhooks` package and the receiver's secret (timestamp tolerance included). */
  standardValid: boolean;
  eventId: string | undefined;
  deliveryId: string | undefined;
  attempt: number | undefined;
  isTest: boolean;
  /** performance.now() when the body had arrived, and when the answer was sent (for latency). */
  receivedAt: number;
  answeredAt: number | undefined;
  /** Date.now() on arrival, for gaps between retries. */
  receivedAtEpochMs: number;
}

export interface ReceiverAnswer {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (until the receiver closes): a timeout for the sender. */
  hang?: boolean;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  /** The secret signatures are checked with; set it once the endpoint exists. */
  secret: string | undefined;
  /** How to answer; may be replaced at any time. */
  respond: (hit: ReceivedWebhook) => ReceiverAnswer;
  received: ReceivedWebhook[];
  /** Requests of one delivery id that overlapped in time (a sign of two senders at once). */
  overlappingDeliveries: string[];
  /** The most requests open at once. */
  maxConcurrent: number;
  waitFor(predicate: (received: ReceivedWebhook[]) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Resolves after `ms` with no new request. */
  waitForQuiet(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** The official Standard Webhooks check: `webhook-signature` over id, timestamp and body, within its 5-minute tolerance. */
export function standardVerifies(secret: string, rawBody: Buffer, headers: http.IncomingHttpHeaders): boolean {
  try {
    new Webhook(secret).verify(rawBody.toString('utf8'), headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

/** The receiver's own signature check: HMAC-SHA256 over the raw bytes, constant-time compare. */
export function receiverVerifies(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (!header) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBody).digest('hex')}`);
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export async function startWebhookReceiver(
  options: { secret?: string; respond?: (hit: ReceivedWebhook) => ReceiverAnswer } = {},
): Promise<WebhookReceiver> {
  const open = new Map<string, number>();
  let concurrent = 0;
  const hanging = new Set<http.ServerResponse>();

  const receiver: WebhookReceiver = {
    url: '',
    port: 0,
    secret: options.secret,
    respond: options.respond ?? (() => ({ status: 200, body: 'ok' })),
    received: [],
    overlappingDeliveries: [],
    maxConcurrent: 0,
    async waitFor(predicate, timeoutMs = 10_000, what = 'the expected webhooks') {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(receiver.received)) {
        if (Date.now() > deadline) {
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; received ${receiver.received.length} request(s)`);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async waitForQuiet(ms) {
      let count = -1;
      while (count !== receiver.received.length) {
        count = receiver.received.length;
        await new Promise((resolve) => setTimeout(resolve, ms));
      }
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      let body: ReceivedWebhook['body'];
      try {
        body = JSON.parse(rawBody.toString('utf8')) as ReceivedWebhook['body'];
      } catch {
        body = undefined;
      }
      const header = (name: string): string | undefined => {
        const value = request.headers[name];
        return Array.isArray(value) ? value[0] : value;
      };
      const deliveryId = header('x-service-delivery');
      const hit: ReceivedWebhook = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        rawBody,
        body,
        signatureValid: receiver.secret !== undefined && receiverVerifies(receiver.secret, rawBody, header('x-service-signature')),
        standardValid: receiver.secret !== undefined && standardVerifies(receiver.secret, rawBody, request.headers),
        eventId: body?.id,
        deliveryId,
        attempt: header('x-service-attempt') === undefined ? undefined : Number(header('x-service-attempt')),
        isTest: header('x-service-test') === 'true',
        receivedAt: performance.now(),
        answeredAt: undefined,
        receivedAtEpochMs: Date.now(),
      };
      receiver.received.push(hit);

      concurrent++;
      receiver.maxConcurrent = Math.max(receiver.maxConcurrent, concurrent);
      if (deliveryId) {
        const already = open.get(deliveryId) ?? 0;
        if (already > 0) receiver.overlappingDeliveries.push(deliveryId);
        open.set(deliveryId, already + 1);
      }
      const finish = (): void => {
        concurrent--;
        if (deliveryId) open.set(deliveryId, (open.get(deliveryId) ?? 1) - 1);
      };
      response.on('close', finish);

      const answer = receiver.respond(hit);
      if (answer.hang) {
        hanging.add(response);
        return;
      }
      const send = (): void => {
        hit.answeredAt = performance.now();
        response.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers });
        response.end(answer.body ?? '');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  receiver.port = port;
  receiver.url = `http://127.0.0.1:${port}/hooks`;
  return receiver;
}

// ---------------------------------------------------------------------------
// Waiting on the delivery log.

/** Polls until `check` returns (or resolves to) a value (not undefined), or fails with `what`. */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The deliveries of an endpoint, oldest first, with their attempts. */
export async function deliveriesOf(services: Services, endpointId: string): Promise<WebhookDeliveryDetail[]> {
  const page = await services.webhooks.listDeliveries({ endpointId, limit: 100 });
  const details: WebhookDeliveryDetail[] = [];
  for (const delivery of page.items.reverse()) details.push(await services.webhooks.getDelivery(delivery.id));
  return details;
}

/** Waits until the endpoint's only delivery reaches one of `statuses`, and returns it. */
export function waitForDeliveryStatus(
  services: Services,
  endpointId: string,
  statuses: string[],
  timeoutMs = 10_000,
): Promise<WebhookDeliveryDetail> {
  return eventually(
    async () => {
      const [delivery] = await deliveriesOf(services, endpointId);
      return delivery && statuses.includes(delivery.status) ? delivery : undefined;
    },
    `a delivery to ${endpointId} to be ${statuses.join(' or ')}`,
    timeoutMs,
  );
}
