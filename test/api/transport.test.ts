import net from 'node:net';
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portOf, rawExchange, uploadExchange } from '../helpers/raw-http';
import { tableCounts } from '../helpers/store-rows';
import { agentInput, startTestServer, type TestServer } from '../helpers/test-server';
import { ANSWER_HOLD } from '../../src-api/http/transport';

/**
 * Hostile clients at the socket level (contract section 2): each gets a 4xx or a closed socket,
 * never a 5xx, never a connection held open, and nothing is written.
 */

// Short deadlines so stalls are cut within the test's time; the rules are the same as the defaults'.
const HEADERS_TIMEOUT_MS = 1_500;
const REQUEST_TIMEOUT_MS = 3_000;
const IDLE_HEADERS_TIMEOUT_MS = 5_000;

/**
 * Opens `count` sockets to 127.0.0.1:`port` and sends nothing; prints "open <n>" once all are
 * connected, then "closed <n> 408s <m> <ms>" once the server has closed every one (m: how many got a 408),
 * and "progress <closed> 408s <m>" every 2 s meanwhile (what a failure reports).
 */
const IDLE_FLOOD_SCRIPT = `
const net = require('node:net');
const [port, count] = process.argv.slice(1).map(Number);
let open = 0, closed = 0, got408 = 0, started = 0;
for (let i = 0; i < count; i++) {
  const socket = net.connect(port, '127.0.0.1', () => {
    if (++open === count) {
      started = Date.now();
      console.log('open ' + open);
      setInterval(() => console.log('progress ' + closed + ' 408s ' + got408), 2000).unref();
    }
  });
  socket.on('data', (data) => { if (String(data).startsWith('HTTP/1.1 408')) got408++; });
  socket.on('error', () => {});
  socket.on('close', () => {
    if (++closed === count) { console.log('closed ' + closed + ' 408s ' + got408 + ' ' + (Date.now() - started) + ' ms'); process.exit(0); }
  });
}`;

let server: TestServer;
let port: number;
let agentId: string;

beforeAll(async () => {
  server = await startTestServer({
    transport: { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS, timeoutCheckIntervalMs: 250 },
  });
  port = portOf(server.origin);
  agentId = (await server.services.agents.edits.create(agentInput({ name: 'Socket Target' }))).id;
  for (let i = 0; i < 30; i++) await server.services.agents.edits.create(agentInput({ name: `Filler ${i}` }));
});
afterAll(async () => {
  await server.close();
});

const get = (path: string, headers = 'Host: localhost\r\n') => `GET /api/v1${path} HTTP/1.1\r\n${headers}\r\n`;
const reviewBody = '{"rating":5,"comment":"fine"}';

function expectClientError(statuses: number[]): void {
  expect(statuses.length).toBeGreaterThan(0);
  for (const status of statuses) expect(status).toBeLessThan(500);
  expect(statuses.at(-1)).toBeGreaterThanOrEqual(400);
}

describe('Host header', () => {
  for (const host of ['a b', '[::1', '%%%', '', 'exa mple.com:80', 'host:99999999', 'x/y']) {
    it(`answers 400 problem+json to Host ${JSON.stringify(host)} on a list endpoint`, async () => {
      const before = await tableCounts(server.services.store);
      const exchange = await rawExchange(port, get('/agents?limit=2', `Host: ${host}\r\nConnection: close\r\n`));
      expect(exchange.statuses).toEqual([400]);
      expect(exchange.data).toMatch(/content-type: application\/problem\+json/i);
      expect(exchange.data).toContain('"code":"invalid_host"');
      expect(exchange.closed).toBe(true);
      expect(await tableCounts(server.services.store)).toEqual(before);
    });
  }

  it('answers 400 to an HTTP/1.1 request without Host', async () => {
    const exchange = await rawExchange(port, 'GET /api/v1/agents HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(exchange.statuses).toEqual([400]);
  });

  it('serves valid hosts, with relative Link headers that do not depend on them', async () => {
    for (const host of ['localhost', '127.0.0.1:8787', '[::1]:8787', 'api.example.com']) {
      const exchange = await rawExchange(port, get('/agents?limit=2', `Host: ${host}\r\nConnection: close\r\n`));
      expect(exchange.statuses).toEqual([200]);
      expect(exchange.data).toMatch(/^link: <\/api\/v1\/agents\?limit=2&page=2>; rel="next"/im);
    }
  });
});

describe('slow and oversized requests', () => {
  it('closes a request whose body stalls, within the request deadline, and writes nothing', async () => {
    const before = await tableCounts(server.services.store);
    const exchange = await rawExchange(
      port,
      `POST /api/v1/agents/${agentId}/reviews HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1048000\r\n\r\n{"rating":`,
      { waitMs: REQUEST_TIMEOUT_MS + 3_000 },
    );
    expect(exchange.closed).toBe(true);
    expect(exchange.elapsedMs).toBeLessThan(REQUEST_TIMEOUT_MS + 1_500);
    for (const status of exchange.statuses) expect(status).toBe(408);
    expect(await tableCounts(server.services.store)).toEqual(before);
  });

  describe('an answer given while the body is still arriving', () => {
    // A client that uploads without waiting (curl, urllib) must get the answer, not a reset on its send:
    // the server reads and drops the rest of the body (docs/api.md, "Bad input").
    const overLimit = 1_100_000;
    const searchHead = (framing: string, extra = '') =>
      `POST /api/v1/agents/search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${extra}${framing}\r\n`;
    const health = get('/health', 'Host: localhost\r\nConnection: close\r\n');

    for (const chunked of [false, true]) {
      const framing = chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${overLimit}\r\n`;
      it(`answers a ${chunked ? 'chunked' : 'Content-Length'} body over 1 MiB 413, takes all of it, then serves the next request`, async () => {
        const exchange = await uploadExchange(port, searchHead(framing), { bodyBytes: overLimit, chunked, after: health });
        expect(exchange.socketError).toBeNull();
        expect(exchange.sentBytes).toBe(overLimit);
        expect(exchange.statuses).toEqual([413, 200]);
        expect(exchange.data).toContain('"code":"payload_too_large"');
        expect(exchange.serverEnded).toBe(true);
      });
    }

    it('half-closes after the 413 when the client asked to close, and still takes the whole upload', async () => {
      const exchange = await uploadExchange(port, searchHead(`Content-Length: ${overLimit}\r\n`, 'Connection: close\r\n'), {
        bodyBytes: overLimit,
      });
      expect(exchange.socketError).toBeNull();
      expect(exchange.sentBytes).toBe(overLimit);
      expect(exchange.statuses).toEqual([413]);
      expect(exchange.serverEnded).toBe(true);
    });

    it('answers an unknown API key 401 from the headers and takes the slow body after it, writing nothing', async () => {
      const before = await tableCounts(server.services.store);
      const bodyBytes = 512 * 1024;
      const head =
        `POST /api/v1/agents/${agentId}/reviews HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer adk_unknown\r\n` +
        `Content-Type: application/json\r\nConnection: close\r\nContent-Length: ${bodyBytes}\r\n\r\n`;
      const exchange = await uploadExchange(port, head, { bodyBytes, pieceBytes: 32 * 1024, gapMs: 20 });
      expect(exchange.socketError).toBeNull();
      expect(exchange.sentBytes).toBe(bodyBytes);
      expect(exchange.statuses).toEqual([401]);
      expect(await tableCounts(server.services.store)).toEqual(before);
    });

    it('answers twelve early 401s with bodies on one keep-alive connection, keeping no listener of each', async () => {
      const warnings: string[] = [];
      const onWarning = (warning: Error) => warnings.push(warning.name);
      process.on('warning', onWarning);
      try {
        const request = (last: boolean) =>
          `POST /api/v1/agents/${agentId}/reviews HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer adk_unknown\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${reviewBody.length}\r\n${last ? 'Connection: close\r\n' : ''}\r\n${reviewBody}`;
        const requests = Array.from({ length: 12 }, (_, i) => request(i === 11));
        const exchange = await rawExchange(port, requests, { gapMs: 20 });
        expect(exchange.statuses).toEqual(Array(12).fill(401));
        expect(exchange.closed).toBe(true);
        await new Promise((wait) => setImmediate(wait));
        expect(warnings).not.toContain('MaxListenersExceededWarning');
      } finally {
        process.off('warning', onWarning);
      }
    });

    it('closes an upload that stalls after its 413 at the request deadline, without a second answer', async () => {
      const exchange = await uploadExchange(port, searchHead(`Content-Length: ${overLimit}\r\n`), {
        bodyBytes: overLimit,
        stallAfterBytes: 128 * 1024,
        waitMs: REQUEST_TIMEOUT_MS + 3_000,
      });
      expect(exchange.closed).toBe(true);
      expect(exchange.elapsedMs).toBeLessThan(REQUEST_TIMEOUT_MS + 1_500);
      expect(exchange.statuses).toEqual([413]);
    });

    it('closes, without a second answer, a chunked body whose framing breaks after its 413', async () => {
      const piece = 'a'.repeat(overLimit);
      const framed = `${piece.length.toString(16)}\r\n${piece}\r\n`;
      const exchange = await rawExchange(port, [searchHead('Transfer-Encoding: chunked\r\n'), framed, 'not a chunk size\r\n\r\n'], {
        gapMs: 100,
      });
      expect(exchange.statuses).toEqual([413]);
      expect(exchange.closed).toBe(true);
    });

    it('tells a client that asks first (Expect: 100-continue) 413 in place of 100 Continue, so it sends no body', async () => {
      const exchange = await rawExchange(port, searchHead(`Content-Length: ${overLimit}\r\n`, 'Expect: 100-continue\r\n'), {
        waitMs: 1_000,
      });
      expect(exchange.statuses).toEqual([413]);
      expect(exchange.data).toContain('"code":"payload_too_large"');
    });

    it('still sends 100 Continue to a client that asks first with a body within the limit, then answers it', async () => {
      const body = '{"query":"socket"}';
      const exchange = await rawExchange(
        port,
        [searchHead(`Content-Length: ${body.length}\r\n`, 'Expect: 100-continue\r\nConnection: close\r\n'), body],
        { gapMs: 300 },
      );
      expect(exchange.statuses).toEqual([100, 200]);
    });

    it('cuts an upload that goes on past 16 MiB after its 413', async () => {
      const bodyBytes = 64 * 1024 * 1024;
      const exchange = await uploadExchange(port, searchHead(`Content-Length: ${bodyBytes}\r\n`), {
        bodyBytes,
        pieceBytes: 1024 * 1024,
        gapMs: 0,
      });
      expect(exchange.statuses).toEqual([413]);
      expect(exchange.closed).toBe(true);
      expect(exchange.sentBytes).toBeLessThan(bodyBytes);
    });
  });

  it('answers 408 to headers that never finish, within the header deadline', async () => {
    const exchange = await rawExchange(port, ['GET /api/v1/health HTTP/1.1\r\n', 'Host: localhost\r\n'], {
      waitMs: HEADERS_TIMEOUT_MS + 3_000,
      gapMs: 100,
    });
    expect(exchange.closed).toBe(true);
    expect(exchange.statuses).toEqual([408]);
    expect(exchange.elapsedMs).toBeLessThan(HEADERS_TIMEOUT_MS + 1_000);
  });

  it('answers 431 to 70 KB of headers and closes', async () => {
    const headers = Array.from({ length: 70 }, (_, i) => `X-Filler-${i}: ${'a'.repeat(1000)}\r\n`).join('');
    const exchange = await rawExchange(port, get('/health', `Host: localhost\r\n${headers}`));
    expect(exchange.statuses).toEqual([431]);
    expect(exchange.data).toContain('"code":"headers_too_large"');
    expect(exchange.closed).toBe(true);
  });

  it('takes headers just under 16 KiB', async () => {
    const exchange = await rawExchange(port, get('/health', `Host: localhost\r\nX-Filler: ${'a'.repeat(15_000)}\r\nConnection: close\r\n`));
    expect(exchange.statuses).toEqual([200]);
  });

  it('keeps /health answering within a second while 1,500 idle sockets are open, then closes them all', async () => {
    // Its own server with a longer header deadline, so the 1,500 are measured while open, not while being cut.
    const idle = await startTestServer({ transport: { headersTimeoutMs: IDLE_HEADERS_TIMEOUT_MS, timeoutCheckIntervalMs: 250 } });
    const idlePort = portOf(idle.origin);
    await (await fetch(`${idle.apiBaseUrl}/health`)).arrayBuffer();
    // The 1,500 come from another process, as they would from outside: in this one, the client's and the
    // server's 3,000 descriptors shared one process's limit, and the server stopped accepting at 1,024.
    const flood = spawn(process.execPath, ['-e', IDLE_FLOOD_SCRIPT, String(idlePort), '1500'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = readline.createInterface({ input: flood.stdout! });
    const nextLine = (prefix: string, timeoutMs: number) =>
      new Promise<string | null>((resolve) => {
        const timer = setTimeout(() => resolve(null), timeoutMs);
        lines.on('line', (line) => {
          if (!line.startsWith(prefix)) return;
          clearTimeout(timer);
          resolve(line);
        });
      });
    try {
      expect(await nextLine('open', 20_000)).toBe('open 1500');
      // Generous: on a loaded machine cutting 1,500 sockets has taken over 15 s past the deadline. With Node's
      // default listen backlog (511) ~600 of the 1,500 overflowed the accept queue and came in on the kernel's
      // SYN-ACK retries (1, 3, 7, 15, 31 s): under CI load some missed this wait. The server's backlog is 4,096.
      const closedLine = nextLine('closed', IDLE_HEADERS_TIMEOUT_MS + 40_000);
      let progress = 'no progress line yet';
      lines.on('line', (line) => {
        if (line.startsWith('progress')) progress = line;
      });
      // /health over a connection opened before the flood (as a monitor's would be), three times.
      const latencies: number[] = [];
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        const health = await fetch(`${idle.apiBaseUrl}/health`);
        latencies.push(performance.now() - started);
        expect(health.status).toBe(200);
        await health.arrayBuffer();
      }
      console.log(`/health with 1,500 idle sockets open: ${latencies.map((ms) => ms.toFixed(1)).join(', ')} ms`);
      for (const ms of latencies) expect(ms).toBeLessThan(1_000);
      // None is held: each is answered 408 and closed by the server at the header deadline.
      const closed = await closedLine;
      console.log(`idle sockets: ${closed}`);
      expect(closed, `not all closed; last ${progress}`).toMatch(/^closed 1500 408s 1500 /);
    } finally {
      flood.kill();
      await idle.close();
    }
  }, 90_000);
});

describe('framing', () => {
  it('answers pipelined requests in order', async () => {
    const exchange = await rawExchange(
      port,
      get('/health') + get('/agents?limit=1') + get('/health', 'Host: localhost\r\nConnection: close\r\n'),
    );
    expect(exchange.statuses).toEqual([200, 200, 200]);
    expect(exchange.closed).toBe(true);
  });

  // Held to the end of the turn (the default), and released as each is held (a hold of 0 ms: the time is always up).
  it.each([ANSWER_HOLD.ms, 0])('answers pipelined searches in order and whole, their answers held up to %d ms', async (holdMs) => {
    const defaultHold = ANSWER_HOLD.ms;
    ANSWER_HOLD.ms = holdMs;
    try {
      const queries = ['agent', 'data pipeline', 'securty'];
      const exchange = await rawExchange(
        port,
        queries
          .map((q, i) => get(`/agents/search?q=${encodeURIComponent(q)}`, i === 2 ? 'Host: localhost\r\nConnection: close\r\n' : undefined))
          .join(''),
      );
      expect(exchange.statuses).toEqual([200, 200, 200]);
      expect([...exchange.data.matchAll(/\{"query":("[^"]*")/g)].map((match) => JSON.parse(match[1]!))).toEqual(queries);
      expect(exchange.closed).toBe(true);
    } finally {
      ANSWER_HOLD.ms = defaultHold;
    }
  });

  it('survives clients that leave before their search is answered', async () => {
    await Promise.all(
      Array.from({ length: 20 }, () => {
        return new Promise<void>((resolve) => {
          const socket = net.connect(port, '127.0.0.1', () => {
            socket.write(get('/agents/search?q=agent'));
            setImmediate(() => socket.destroy());
          });
          socket.on('close', () => resolve());
          socket.on('error', () => undefined);
        });
      }),
    );
    const response = await server.api('/agents/search?q=agent');
    expect(response.status).toBe(200);
  });

  it('stops at a malformed request in a pipeline', async () => {
    const exchange = await rawExchange(port, get('/health') + 'NOT HTTP AT ALL\r\n\r\n' + get('/health'));
    // The parser refuses the second request while the first may still be answering: a 400, then the socket closes.
    expectClientError(exchange.statuses);
    expect(exchange.statuses.filter((status) => status === 400)).toHaveLength(1);
    expect(exchange.closed).toBe(true);
  });

  it('refuses Content-Length with Transfer-Encoding (request smuggling) and runs neither request', async () => {
    const before = await tableCounts(server.services.store);
    const smuggled = `POST /api/v1/agents/${agentId}/reviews HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${reviewBody.length}\r\n\r\n${reviewBody}`;
    const chunked = `0\r\n\r\n${smuggled}`;
    const exchange = await rawExchange(
      port,
      `POST /api/v1/agents/${agentId}/reviews HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${chunked.length}\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}`,
    );
    expectClientError(exchange.statuses);
    expect(exchange.statuses).toEqual([400]);
    expect(exchange.closed).toBe(true);
    expect(await tableCounts(server.services.store)).toEqual(before);
  });

  it('refuses two different Content-Length values and an obfuscated Transfer-Encoding', async () => {
    const before = await tableCounts(server.services.store);
    for (const headers of [
      `Content-Length: ${reviewBody.length}\r\nContent-Length: 5\r\n`,
      `Content-Length: ${reviewBody.length}\r\nTransfer-Encoding: xchunked\r\n`,
      `Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n`,
    ]) {
      const exchange = await rawExchange(
        port,
        `POST /api/v1/agents/${agentId}/reviews HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${headers}\r\n${reviewBody}`,
      );
      expectClientError(exchange.statuses);
      expect(exchange.closed).toBe(true);
    }
    expect(await tableCounts(server.services.store)).toEqual(before);
  });
});

describe('methods', () => {
  it('answers a known path with another method 405 and Allow', async () => {
    const response = await server.api('/agents', { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(await response.json()).toMatchObject({ status: 405, code: 'method_not_allowed' });

    const search = await server.api('/agents/search', { method: 'PUT' });
    expect(search.status).toBe(405);
    expect(search.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');

    const byId = await server.api(`/agents/${agentId}`, { method: 'PATCH' });
    expect(byId.status).toBe(405);
  });

  it('still answers an unknown path 404', async () => {
    const response = await server.api('/nothing-here', { method: 'DELETE' });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
  });

  it('answers a bare OPTIONS 204 with Allow, not a text/plain 400', async () => {
    const response = await server.api('/agents', { method: 'OPTIONS' });
    expect(response.status).toBe(204);
    expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });
});

describe('hooks', () => {
  /** The hooks of one kind on a GET route, by name, as Fastify lists them (`path` as its tree shows it). */
  function routeHooks(app: TestServer['app'], path: string, name: string): string[] {
    const routes = app.printRoutes({ includeHooks: true, commonPrefix: false, method: 'GET' });
    const escaped = path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    const block = new RegExp(`── ${escaped} \\(GET\\)\\n((?:.*•.*\\n)+)`).exec(routes)?.[1] ?? '';
    return JSON.parse(new RegExp(`\\(${name}\\) (\\[.*\\])`).exec(block)?.[1] ?? '[]') as string[];
  }

  it('runs two onRequest hooks and one onSend hook on an API route, and answer batching on search only', () => {
    // Every request pays for each: nosniff, CORS and the Host check are one hook (createRequestHeadersHook), then
    // API keys and limits; the cookie plugin's writer is the one onSend hook (cookies are parsed where read). Search,
    // whose answers are slow to make, hands each on at the end of the event loop's turn (installAnswerBatching).
    for (const path of ['/search', '/api/v1/claims/:id']) {
      expect(routeHooks(server.app, path, 'onRequest')).toEqual(['requestHeaders()', 'anonymous()']);
    }
    expect(routeHooks(server.app, '/api/v1/claims/:id', 'onSend')).toEqual(['fastifyCookieOnSendHandler()']);
    expect(routeHooks(server.app, '/search', 'onSend')).toEqual(['fastifyCookieOnSendHandler()', 'answerAtEndOfTurn()']);
  });

  it('writes each answer at once when answer batching is off', async () => {
    const unbatched = await startTestServer({ transport: { batchAnswers: false } });
    try {
      expect(routeHooks(unbatched.app, '/search', 'onSend')).toEqual(['fastifyCookieOnSendHandler()']);
      const response = await unbatched.api('/agents/search?q=agent');
      expect(response.status).toBe(200);
    } finally {
      await unbatched.close();
    }
  });
});

describe('CORS', () => {
  const origin = 'https://client.example';

  it('allows reads from any origin and exposes the limit and paging headers', async () => {
    const response = await server.api('/agents?limit=1', { headers: { origin } });
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-expose-headers')).toBe('RateLimit, RateLimit-Policy, Retry-After, Link');
  });

  it('sends CORS headers on errors too (404, 400, 405)', async () => {
    for (const [path, init] of [
      ['/agents/nope-404', {}],
      ['/agents?limit=1000', {}],
      ['/agents', { method: 'DELETE' }],
    ] as const) {
      const response = await server.api(path, { ...init, headers: { origin } });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  it('lets POST /agents/search through a preflight, and no other POST', async () => {
    const preflight = (path: string) =>
      server.api(path, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
    const search = await preflight('/agents/search');
    expect(search.status).toBe(204);
    expect(search.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST');
    expect(search.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');

    const reviews = await preflight(`/agents/${agentId}/reviews`);
    expect(reviews.headers.get('access-control-allow-methods')).toBe('GET, HEAD');
  });

  it('sends no CORS headers on /trpc or /me', async () => {
    for (const url of [`${server.origin}/trpc/stats.overview`, `${server.apiBaseUrl}/me`]) {
      const response = await fetch(url, { headers: { origin } });
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    }
  });
});

describe('CORS on 429', () => {
  it('a limited answer carries CORS and exposes Retry-After and RateLimit', async () => {
    const limited = await startTestServer({ rateLimit: { enabled: true, anonymousReads: 1 } });
    try {
      const origin = 'https://client.example';
      expect((await limited.api('/agents', { headers: { origin } })).status).toBe(200);
      const response = await limited.api('/agents', { headers: { origin } });
      expect(response.status).toBe(429);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-expose-headers')).toContain('Retry-After');
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      await limited.close();
    }
  });
});
