import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { safeRequest, SafeRequestError, type SafeRequestFailure } from '../../src-api/lib/safe-http';

/** A real HTTP server on 127.0.0.1 whose routes are plain handlers; every request path is logged. */
interface Target {
  origin: string;
  port: number;
  requests: string[];
  close(): Promise<void>;
}

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void;

async function startTarget(routes: Record<string, Handler>): Promise<Target> {
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    response.on('error', () => {}); // the client may hang up on purpose
    const handler = routes[request.url ?? ''];
    if (handler) handler(request, response);
    else response.writeHead(404).end('not here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Awaits a rejection and returns it as a SafeRequestError (failing the test when it is anything else). */
async function failure(promise: Promise<unknown>): Promise<SafeRequestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SafeRequestError);
  return error as SafeRequestError;
}

let target: Target;
let streamedBytes = 0;

beforeAll(async () => {
  target = await startTarget({
    '/hello': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain', 'x-extra': 'yes' }).end('hello world'),
    '/echo': (req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, headers: req.headers, body })),
      );
    },
    '/redirect': (_req, res) => res.writeHead(302, { location: '/hello' }).end(),
    '/never': () => {
      /* never answers */
    },
    '/headers-then-stall': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    },
    '/big': (_req, res) => res.writeHead(200).end('x'.repeat(1024 * 1024)),
    '/endless': (_req, res) => {
      // Writes forever until the client hangs up: a client that did not stop reading would never finish.
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'y');
      const pump = (): void => {
        while (!res.destroyed) {
          streamedBytes += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
      };
      pump();
    },
    '/server-error': (_req, res) => res.writeHead(503).end('down'),
  });
});
afterAll(() => target.close());

describe('safeRequest', () => {
  it('returns status, headers, body and latency', async () => {
    const response = await safeRequest({ url: `${target.origin}/hello`, timeoutMs: 2000, maxResponseBytes: 1024, allowPrivate: true });
    expect(response.status).toBe(200);
    expect(response.headers['x-extra']).toBe('yes');
    expect(response.body).toBe('hello world');
    expect(response.bytes).toBe(11);
    expect(response.truncated).toBe(false);
    expect(response.latencyMs).toBeGreaterThanOrEqual(0);
    expect(response.latencyMs).toBeLessThan(5000);
  });

  it('sends the method, headers and body, with a default User-Agent', async () => {
    const response = await safeRequest({
      url: `${target.origin}/echo`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-event': 'agent.registered' },
      body: '{"a":1}',
      allowPrivate: true,
    });
    const echoed = JSON.parse(response.body);
    expect(echoed).toMatchObject({ method: 'POST', body: '{"a":1}' });
    expect(echoed.headers['x-service-event']).toBe('agent.registered');
    expect(echoed.headers['content-length']).toBe('7');
    expect(echoed.headers['user-agent']).toMatch(/^AgentDirectory\//);
  });

  it('returns non-2xx statuses as responses, not errors', async () => {
    const response = await safeRequest({ url: `${target.origin}/server-error`, allowPrivate: true });
    expect(response.status).toBe(503);
    expect(response.body).toBe('down');
  });

  it('never follows a redirect', async () => {
    const before = target.requests.filter((r) => r === 'GET /hello').length;
    const response = await safeRequest({ url: `${target.origin}/redirect`, allowPrivate: true });
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe('/hello');
    // Give a would-be follow-up request time to arrive, then check it never did.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(target.requests.filter((r) => r === 'GET /hello').length).toBe(before);
  });

  it('times out when no response comes', async () => {
    const started = Date.now();
    const error = await failure(safeRequest({ url: `${target.origin}/never`, timeoutMs: 300, allowPrivate: true }));
    expect(error.reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5000); // well past the 300 ms deadline, far short of never: room for a loaded machine
  });

  it('counts the body in the deadline: headers alone are not enough', async () => {
    const started = Date.now();
    const error = await failure(safeRequest({ url: `${target.origin}/headers-then-stall`, timeoutMs: 300, allowPrivate: true }));
    expect(error.reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5000); // well past the 300 ms deadline, far short of never: room for a loaded machine
  });

  it('caps the body and says it was truncated', async () => {
    const response = await safeRequest({ url: `${target.origin}/big`, maxResponseBytes: 1000, allowPrivate: true });
    expect(response.status).toBe(200);
    expect(response.truncated).toBe(true);
    expect(response.bytes).toBe(1000);
    expect(response.body).toBe('x'.repeat(1000));
  });

  it('does not flag a body of exactly the cap as truncated', async () => {
    const response = await safeRequest({ url: `${target.origin}/hello`, maxResponseBytes: 11, allowPrivate: true });
    expect(response.truncated).toBe(false);
    expect(response.body).toBe('hello world');
  });

  it('stops reading an endless body at the cap and hangs up', async () => {
    const response = await safeRequest({
      url: `${target.origin}/endless`,
      timeoutMs: 5000,
      maxResponseBytes: 64 * 1024,
      allowPrivate: true,
    });
    expect(response.truncated).toBe(true);
    expect(response.bytes).toBe(64 * 1024);
    const sentAtCutOff = streamedBytes;
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The server notices the hang-up and stops: far less than it would have pushed in 200 ms.
    expect(streamedBytes - sentAtCutOff).toBeLessThan(8 * 1024 * 1024);
  });

  describe('private and loopback addresses', () => {
    const refusedUrls = [
      'http://127.0.0.1:PORT/hello',
      'http://localhost:PORT/hello', // a host name that resolves to loopback: checked after DNS
      'http://[::1]:PORT/hello',
      'http://0.0.0.0:PORT/hello',
      'http://[::ffff:127.0.0.1]:PORT/hello',
      'http://2130706433:PORT/hello', // 127.0.0.1 as a decimal number
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1:PORT/hello',
      'http://192.168.1.1:PORT/hello',
    ];

    it.each(refusedUrls)('refuses %s before connecting', async (template) => {
      const url = template.replace('PORT', String(target.port));
      const before = target.requests.length;
      const error = await failure(safeRequest({ url, timeoutMs: 2000 }));
      expect(error.reason, `${url}: ${error.message}`).toBe('private_address');
      expect(error.message).toMatch(/private, loopback or reserved address/);
      expect(target.requests.length).toBe(before);
    });

    it('names the resolved address when a host name resolves to loopback', async () => {
      const error = await failure(safeRequest({ url: `http://localhost:${target.port}/hello`, timeoutMs: 2000 }));
      expect(error.message).toMatch(/localhost resolves to (127\.0\.0\.1|::1)/);
    });

    it('reaches them when allowPrivate is set', async () => {
      const response = await safeRequest({ url: `http://localhost:${target.port}/hello`, allowPrivate: true });
      expect(response.body).toBe('hello world');
    });
  });

  it.each<[string, SafeRequestFailure]>([
    ['ftp://example.com/file', 'invalid_url'],
    ['file:///etc/passwd', 'invalid_url'],
    ['javascript:alert(1)', 'invalid_url'],
    ['data:text/plain,hello', 'invalid_url'],
    ['not a url', 'invalid_url'],
    ['/relative/path', 'invalid_url'],
  ])('refuses %s as %s', async (url, reason) => {
    const error = await failure(safeRequest({ url, allowPrivate: true }));
    expect(error.reason).toBe(reason);
  });

  it('refuses a header value that would split the request', async () => {
    const error = await failure(
      safeRequest({ url: `${target.origin}/hello`, headers: { 'x-a': 'b\r\nx-injected: 1' }, allowPrivate: true }),
    );
    expect(error.reason).toBe('invalid_request');
  });

  it('reports a refused connection', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await failure(safeRequest({ url: `http://127.0.0.1:${port}/`, allowPrivate: true }));
    expect(error.reason).toBe('connection');
    expect(error.message).toMatch(/refused/);
  });

  it('reports a peer that does not speak HTTP', async () => {
    const garbage = net.createServer((socket) => {
      socket.on('error', () => {});
      socket.resume(); // read (and drop) the request, so the socket sees the client hang up
      socket.end('HELLO THERE\r\n\r\n');
    });
    await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
    const { port } = garbage.address() as AddressInfo;
    try {
      const error = await failure(safeRequest({ url: `http://127.0.0.1:${port}/`, timeoutMs: 2000, allowPrivate: true }));
      expect(error.reason).toBe('protocol');
    } finally {
      await new Promise<void>((resolve) => garbage.close(() => resolve()));
    }
  });
});
