import { performance } from 'node:perf_hooks';
import type { DnsResolver } from './dns-resolver';
import { DEFAULT_TIMEOUT_MS, safeRequest, SafeRequestError, type SafeRequestOptions, type SafeResponse } from './safe-http';

export { SafeRequestError, type SafeRequestFailure, type SafeResponse } from './safe-http';

/**
 * The fetch for URLs that users gave us (claim proofs, Agent Cards): `safeRequest`'s rules
 * (public addresses only, resolved by our own resolver; no redirects; one deadline; a body cap)
 * bound to the server's resolver and `--allow-private-urls`, plus a cap on fetches in flight.
 *
 * A call over the cap waits for a slot; the wait counts against its deadline, so a burst of
 * hostile targets costs at most `maxConcurrent` sockets and every caller an answer in time.
 */
export interface SafeFetchConfig {
  /** AGENTDIR_DNS_SERVERS' resolver (services.dnsResolver). */
  resolver: DnsResolver;
  /** `--allow-private-urls` (local tests only). */
  allowPrivate: boolean;
  /** Fetches in flight at once (`config.claimCheckConcurrency`); unbounded when absent. */
  maxConcurrent?: number;
}

/** One request: url, method (GET), headers, body, timeoutMs (10 s), maxResponseBytes (64 KiB). */
export type SafeFetchRequest = Omit<SafeRequestOptions, 'allowPrivate' | 'resolver'>;

/** Resolves with any HTTP status (3xx included: never followed); rejects only with SafeRequestError. */
export type SafeFetch = (request: SafeFetchRequest) => Promise<SafeResponse>;

export function createSafeFetch({ resolver, allowPrivate, maxConcurrent }: SafeFetchConfig): SafeFetch {
  const slots = maxConcurrent === undefined ? undefined : createSlots(maxConcurrent);
  return async (request) => {
    const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!slots) return safeRequest({ ...request, timeoutMs, allowPrivate, resolver });
    const started = performance.now();
    const release = await slots.acquire(timeoutMs);
    try {
      const left = Math.max(1, Math.round(timeoutMs - (performance.now() - started)));
      return await safeRequest({ ...request, timeoutMs: left, allowPrivate, resolver });
    } finally {
      release();
    }
  };
}

/** A counting semaphore whose waiters give up after their own deadline. */
function createSlots(max: number) {
  let active = 0;
  const waiting: Array<() => void> = [];
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };
  return {
    acquire(timeoutMs: number): Promise<() => void> {
      if (active < max) {
        active++;
        return Promise.resolve(once(release));
      }
      return new Promise((resolve, reject) => {
        const grant = (): void => {
          clearTimeout(timer);
          resolve(once(release));
        };
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(grant), 1);
          reject(new SafeRequestError('timeout', `no fetch slot came free within ${timeoutMs} ms (${max} outbound fetches in flight)`));
        }, timeoutMs);
        waiting.push(grant);
      });
    },
  };
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
