import { afterEach, describe, expect, it } from 'vitest';
import { clientBucket, createRateLimiter } from '../../src-api/http/rate-limit';
import { createConfig } from '../../src-api/config';
import { json, startTestServer, type TestServer } from '../helpers/test-server';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Sends `count` requests one after another and returns their statuses. */
async function statuses(count: number, send: (i: number) => Promise<Response>): Promise<number[]> {
  const result: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await send(i);
    await response.arrayBuffer();
    result.push(response.status);
  }
  return result;
}

const subscribe = (s: TestServer, i: number, headers: Record<string, string> = {}) =>
  s.post('/newsletter', { email: `reader${i}@example.com` }, headers);

describe('write limit (20 per minute per IP)', () => {
  it('answers 429 after exactly 20 writes, with Retry-After and the IETF headers', async () => {
    server = await startTestServer({ rateLimit: { enabled: true } });
    const s = server;
    const first = await statuses(20, (i) => subscribe(s, i));
    expect(first).toEqual(Array(20).fill(202));

    const limited = await subscribe(s, 99);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toContain('application/problem+json');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('ratelimit-policy')).toBe('"writes";q=20;w=60');
    expect(limited.headers.get('ratelimit')).toBe(`"writes";r=0;t=${retryAfter}`);
    const body = await json(limited);
    expect(body).toMatchObject({ status: 429, code: 'rate_limited' });

    // Nothing was written by the refused request.
    expect((await s.services.newsletter.counts()).pending).toBe(20);
  });

  it('counts writes per IP even with an API key', async () => {
    server = await startTestServer({ rateLimit: { enabled: true, writes: 3 } });
    const s = server;
    const { key } = await s.services.keys.create('writer');
    const result = await statuses(4, (i) => subscribe(s, i, { 'x-api-key': key }));
    expect(result).toEqual([202, 202, 202, 429]);
  });

  it('opens a new window once the old one has passed', async () => {
    server = await startTestServer({ rateLimit: { enabled: true, writes: 2, windowMs: 1000 } });
    const s = server;
    expect(await statuses(3, (i) => subscribe(s, i))).toEqual([202, 202, 429]);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await subscribe(s, 50)).status).toBe(202);
  });
});

describe('read limit (100 per minute per IP, 1,000 per key)', () => {
  it('allows exactly 100 anonymous reads and reports the remaining budget', async () => {
    server = await startTestServer({ rateLimit: { enabled: true } });
    const s = server;
    const first = await s.api('/agents');
    expect(first.headers.get('ratelimit-policy')).toBe('"reads";q=100;w=60');
    expect(first.headers.get('ratelimit')).toMatch(/^"reads";r=99;t=\d+$/);
    const rest = await statuses(99, () => s.api('/agents?limit=1'));
    expect(rest.every((status) => status === 200)).toBe(true);
    const limited = await s.api('/agents');
    expect(limited.status).toBe(429);
    expect((await json(limited)).code).toBe('rate_limited');
  });

  it('gives a key its own, higher budget', async () => {
    server = await startTestServer({ rateLimit: { enabled: true, anonymousReads: 5, keyedReads: 12 } });
    const s = server;
    const { key } = await s.services.keys.create('reader');
    expect(await statuses(6, () => s.api('/agents'))).toEqual([200, 200, 200, 200, 200, 429]);
    // The IP is exhausted, but the key has its own budget, sent either way the contract allows.
    const keyed = await statuses(12, (i) =>
      s.api('/agents', { headers: i % 2 ? { authorization: `Bearer ${key}` } : { 'x-api-key': key } }),
    );
    expect(keyed).toEqual(Array(12).fill(200));
    const over = await s.api('/agents', { headers: { 'x-api-key': key } });
    expect(over.status).toBe(429);
    expect(over.headers.get('ratelimit-policy')).toBe('"reads-key";q=12;w=60');
  });

  it('uses the default 1,000 per key', async () => {
    server = await startTestServer({ rateLimit: { enabled: true } });
    const { key } = await server.services.keys.create('reader');
    const response = await server.api('/agents', { headers: { 'x-api-key': key } });
    expect(response.headers.get('ratelimit-policy')).toBe('"reads-key";q=1000;w=60');
  });
});

describe('API keys', () => {
  it('rejects an unknown or revoked key with 401 instead of treating it as anonymous', async () => {
    server = await startTestServer({ rateLimit: { enabled: true } });
    const unknown = await server.api('/agents', { headers: { authorization: 'Bearer adk_not-a-real-key' } });
    expect(unknown.status).toBe(401);
    expect(await json(unknown)).toMatchObject({ status: 401, code: 'invalid_api_key' });

    const created = await server.services.keys.create('soon revoked');
    expect((await server.api('/agents', { headers: { 'x-api-key': created.key } })).status).toBe(200);
    await server.services.keys.revoke(created.id);
    const revoked = await server.api('/agents', { headers: { 'x-api-key': created.key } });
    expect(revoked.status).toBe(401);
    expect((await json(revoked)).code).toBe('invalid_api_key');
  });

  it('counts requests with an invalid key against the IP read limit before the 401', async () => {
    server = await startTestServer({ rateLimit: { enabled: true, anonymousReads: 3 } });
    const s = server;
    const guesses = await statuses(4, (i) => s.api('/agents', { headers: { authorization: `Bearer adk_guess-${i}` } }));
    expect(guesses).toEqual([401, 401, 401, 429]);
    // The same budget as anonymous reads: it is spent.
    expect((await s.api('/agents')).status).toBe(429);
    // Guessing on a write endpoint spends the read budget too, and writes nothing.
    const write = await subscribe(s, 1, { 'x-api-key': 'adk_guess' });
    expect(write.status).toBe(429);
    expect((await s.services.newsletter.counts()).pending).toBe(0);
  });

  it('also rejects a bad key on write endpoints', async () => {
    server = await startTestServer({ rateLimit: { enabled: true } });
    const response = await subscribe(server, 1, { 'x-api-key': 'nope' });
    expect(response.status).toBe(401);
    expect((await server.services.newsletter.counts()).pending).toBe(0);
  });
});

describe('client IP and X-Forwarded-For', () => {
  it('ignores a spoofed X-Forwarded-For without --trust-proxy', async () => {
    server = await startTestServer({ rateLimit: { enabled: true, writes: 2 } });
    const s = server;
    const result = await statuses(4, (i) => subscribe(s, i, { 'x-forwarded-for': `203.0.113.${i}` }));
    expect(result).toEqual([202, 202, 429, 429]);
  });

  it('counts per forwarded address with --trust-proxy', async () => {
    server = await startTestServer({ rateLimit: { enabled: true, writes: 2 }, trustProxy: 1 });
    const s = server;
    const sameClient = await statuses(3, (i) => subscribe(s, i, { 'x-forwarded-for': '203.0.113.7' }));
    expect(sameClient).toEqual([202, 202, 429]);
    expect((await subscribe(s, 10, { 'x-forwarded-for': '203.0.113.8' })).status).toBe(202);
  });

  it('with --trust-proxy 1 takes the right-most entry, never the client-chosen left-most one', async () => {
    server = await startTestServer({ rateLimit: { enabled: true, writes: 2 }, trustProxy: 1 });
    const s = server;
    // The client rotates a forged left-most entry; the proxy appends the real address last.
    const forged = await statuses(3, (i) => subscribe(s, i, { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.7` }));
    expect(forged).toEqual([202, 202, 429]);
  });

  it('with --trust-proxy 2 skips exactly two proxies', async () => {
    server = await startTestServer({ rateLimit: { enabled: true, writes: 2 }, trustProxy: 2 });
    const s = server;
    // socket = proxy 2 (trusted), right-most entry = proxy 1 (trusted), next = the client.
    const sameClient = await statuses(3, (i) => subscribe(s, i, { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.7, 10.0.0.1` }));
    expect(sameClient).toEqual([202, 202, 429]);
    expect((await subscribe(s, 9, { 'x-forwarded-for': '203.0.113.8, 10.0.0.1' })).status).toBe(202);
  });

  it('with --trust-proxy CIDR,… trusts only hops from those addresses', async () => {
    server = await startTestServer({ rateLimit: { enabled: true, writes: 2 }, trustProxy: ['127.0.0.1/32', '10.0.0.0/8'] });
    const s = server;
    // 10.1.2.3 is a trusted proxy hop, so the client is 203.0.113.7 whatever the forged left-most entries say.
    const viaProxies = await statuses(3, (i) => subscribe(s, i, { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.7, 10.1.2.3` }));
    expect(viaProxies).toEqual([202, 202, 429]);
    // A hop outside the trusted ranges is the client itself: what it claims to the left is ignored.
    const untrustedHop = await statuses(3, (i) => subscribe(s, 20 + i, { 'x-forwarded-for': `198.51.100.${i}, 192.0.2.50` }));
    expect(untrustedHop).toEqual([202, 202, 429]);
  });

  it('counts IPv6 clients per /64 and IPv4 clients per address', async () => {
    server = await startTestServer({ rateLimit: { enabled: true, writes: 2 }, trustProxy: 1 });
    const s = server;
    const sameNetwork = await statuses(3, (i) => subscribe(s, i, { 'x-forwarded-for': `2001:db8:1:2::${i + 1}` }));
    expect(sameNetwork).toEqual([202, 202, 429]);
    expect((await subscribe(s, 5, { 'x-forwarded-for': '2001:db8:1:2:ffff:ffff:ffff:ffff' })).status).toBe(429);
    expect((await subscribe(s, 6, { 'x-forwarded-for': '2001:db8:1:3::1' })).status).toBe(202);
    // Neighbouring IPv4 addresses are separate clients.
    expect(await statuses(2, (i) => subscribe(s, 10 + i, { 'x-forwarded-for': `203.0.113.${i + 1}` }))).toEqual([202, 202]);
  });
});

describe('limit buckets', () => {
  it('maps addresses to buckets: IPv4 as is, IPv6 by /64, IPv4-mapped IPv6 as IPv4', () => {
    expect(clientBucket('203.0.113.9')).toBe('203.0.113.9');
    expect(clientBucket('2001:db8:0:1:aaaa::1')).toBe(clientBucket('2001:0db8:0000:0001:ffff:ffff:ffff:ffff'));
    expect(clientBucket('2001:db8:0:1::1')).not.toBe(clientBucket('2001:db8:0:2::1'));
    expect(clientBucket('::ffff:203.0.113.9')).toBe('203.0.113.9');
  });

  it('keeps at most maxClients counters, dropping the oldest window at the cap', () => {
    let time = 0;
    const limiter = createRateLimiter(createConfig({ rateLimit: { maxClients: 3, writes: 1 } }).rateLimit, () => time);
    for (const client of ['a', 'b', 'c']) expect(limiter.hit('writes', client, false).allowed).toBe(true);
    expect(limiter.hit('writes', 'a', false).allowed).toBe(false);
    for (let i = 0; i < 1000; i++) {
      time += 1;
      limiter.hit('writes', `flood-${i}`, false);
      expect(limiter.size).toBeLessThanOrEqual(3);
    }
    // 'a' was the oldest and has been dropped: it starts a fresh window.
    expect(limiter.hit('writes', 'a', false).allowed).toBe(true);
    // The newest clients are still counted.
    expect(limiter.hit('writes', 'flood-999', false).allowed).toBe(false);
  });

  it('stays bounded under many distinct clients over HTTP', async () => {
    server = await startTestServer({ rateLimit: { enabled: true, maxClients: 50 }, trustProxy: 1 });
    const s = server;
    await statuses(200, (i) => s.api('/agents?limit=1', { headers: { 'x-forwarded-for': `2001:db8:${i.toString(16)}::1` } }));
    const limited = await statuses(101, () => s.api('/agents?limit=1', { headers: { 'x-forwarded-for': '203.0.113.200' } }));
    expect(limited.at(-1)).toBe(429);
  });
});

describe('--rate-limit off', () => {
  it('lets everything through and sends no limit headers', async () => {
    server = await startTestServer({ rateLimit: { enabled: false, writes: 1 } });
    const s = server;
    expect(await statuses(5, (i) => subscribe(s, i))).toEqual(Array(5).fill(202));
    expect((await s.api('/agents')).headers.get('ratelimit')).toBeNull();
  });
});
