import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../../src-api/lib/dns-resolver';
import { createSafeFetch, SafeRequestError } from '../../src-api/lib/safe-fetch';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';

/**
 * The safe fetch against a real HTTP server and a real DNS server (dns2) on 127.0.0.1: names are
 * resolved by our resolver (never dns.lookup), their addresses checked, and fetches capped in flight.
 */

let dns: TestDnsServer;
let server: http.Server;
let port = 0;
const requests: string[] = [];
const held: http.ServerResponse[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  dns.setAddresses('target.test', ['127.0.0.1']);
  dns.setAddresses('mixed.test', ['93.184.215.14', '10.1.2.3']);
  server = http.createServer((request, response) => {
    requests.push(request.url ?? '');
    if (request.url === '/hold') held.push(response);
    else response.writeHead(200, { 'content-type': 'text/plain' }).end(`hello from ${request.headers.host}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await dns.close();
});

// Answers are expected within the default: generous, since the DNS server shares this process's event loop
// and a loaded machine can stall it for a second (a 1 s deadline failed so once). Deadline tests pass their own.
const resolverOf = (timeoutMs = 5000) => createDnsResolver({ servers: [dns.address], timeoutMs });

async function failure(promise: Promise<unknown>): Promise<SafeRequestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SafeRequestError);
  return error as SafeRequestError;
}

describe('resolution', () => {
  it('resolves names with the configured DNS server and keeps the Host header', async () => {
    dns.queries.length = 0;
    const fetch = createSafeFetch({ resolver: resolverOf(), allowPrivate: true });
    const response = await fetch({ url: `http://target.test:${port}/hello` });
    expect(response.status).toBe(200);
    expect(response.body).toBe(`hello from target.test:${port}`);
    expect(dns.queries).toContain('target.test');
  });

  it('refuses a name that resolves to loopback, naming the address, before connecting', async () => {
    const before = requests.length;
    const fetch = createSafeFetch({ resolver: resolverOf(), allowPrivate: false });
    const error = await failure(fetch({ url: `http://target.test:${port}/hello` }));
    expect(error.reason).toBe('private_address');
    expect(error.message).toMatch(/target\.test resolves to 127\.0\.0\.1/);
    expect(requests.length).toBe(before);
  });

  it('refuses a name with any private address among public ones', async () => {
    const fetch = createSafeFetch({ resolver: resolverOf(), allowPrivate: false });
    const error = await failure(fetch({ url: `http://mixed.test:${port}/hello`, timeoutMs: 2000 }));
    expect(error.reason).toBe('private_address');
    expect(error.message).toMatch(/10\.1\.2\.3/);
  });

  it('reports a name that does not exist as a DNS failure', async () => {
    const fetch = createSafeFetch({ resolver: resolverOf(), allowPrivate: true });
    const error = await failure(fetch({ url: `http://nowhere.test:${port}/hello` }));
    expect(error.reason).toBe('connection');
    expect(error.message).toMatch(/could not resolve the host name nowhere\.test/);
    expect((error.cause as Error).name).toBe('DnsError');
  });

  it('gives up on a DNS server that never answers within the resolver deadline, however many wait', async () => {
    dns.mode = 'silent';
    try {
      const fetch = createSafeFetch({ resolver: resolverOf(300), allowPrivate: true });
      const started = performance.now();
      // More than libuv's 4 threads: dns.lookup would queue these behind each other; the resolver does not.
      const errors = await Promise.all(
        Array.from({ length: 12 }, (_, i) => failure(fetch({ url: `http://stall-${i}.test:${port}/`, timeoutMs: 5000 }))),
      );
      const elapsed = performance.now() - started;
      for (const error of errors) expect(error.message).toMatch(/could not resolve the host name stall-\d+\.test: no answer/);
      expect(elapsed).toBeLessThan(1500);
      expect(dns.queries.filter((name) => name.startsWith('stall-')).length).toBeGreaterThanOrEqual(12);
    } finally {
      dns.mode = 'answer';
    }
  });
});

describe('concurrency cap', () => {
  it('holds the fetches over the cap; a waiter whose deadline passes fails without connecting', async () => {
    const fetch = createSafeFetch({ resolver: resolverOf(), allowPrivate: true, maxConcurrent: 2 });
    const before = requests.length;
    const first = fetch({ url: `http://127.0.0.1:${port}/hold`, timeoutMs: 3000 });
    const second = fetch({ url: `http://127.0.0.1:${port}/hold`, timeoutMs: 3000 });
    const third = failure(fetch({ url: `http://127.0.0.1:${port}/hello`, timeoutMs: 300 }));
    const error = await third;
    expect(error.reason).toBe('timeout');
    expect(error.message).toMatch(/no fetch slot came free within 300 ms \(2 outbound fetches in flight\)/);
    expect(requests.slice(before)).toEqual(['/hold', '/hold']);

    // A waiter with time left gets the slot as soon as one comes free.
    const fourth = fetch({ url: `http://127.0.0.1:${port}/hello`, timeoutMs: 3000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(requests.slice(before)).toEqual(['/hold', '/hold']);
    held.shift()!.writeHead(200).end('released');
    expect((await first).body).toBe('released');
    expect((await fourth).status).toBe(200);
    held.shift()!.writeHead(200).end('released');
    expect((await second).status).toBe(200);
    expect(requests.slice(before)).toEqual(['/hold', '/hold', '/hello']);
  });
});
