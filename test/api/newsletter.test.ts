import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, type TestServer } from '../helpers/test-server';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const subscribe = (body: unknown) => server.post('/newsletter', body);

function subscriberRows(): number {
  return (server.services.db.$client.prepare('SELECT count(*) AS n FROM newsletter_subscribers').get() as { n: number }).n;
}

describe('POST /newsletter', () => {
  it('subscribes a new address: 201 with exactly email and status', async () => {
    const response = await subscribe({ email: 'reader@example.com' });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await json(response)).toEqual({ email: 'reader@example.com', status: 'subscribed' });
  });

  it('answers 200 with the same body for the same address in any case, without a second row', async () => {
    const first = await subscribe({ email: 'Ann.Smith@Example.com' });
    expect(first.status).toBe(201);
    const firstBody = await json(first);
    const rows = subscriberRows();

    for (const again of ['Ann.Smith@Example.com', 'ann.smith@example.com', '  ANN.SMITH@EXAMPLE.COM ']) {
      const response = await subscribe({ email: again });
      expect(response.status).toBe(200);
      expect(await json(response)).toEqual(firstBody);
    }
    expect(subscriberRows()).toBe(rows);
  });

  it('stores the address trimmed', async () => {
    const response = await subscribe({ email: '  spaced@example.com  ' });
    expect(response.status).toBe(201);
    expect((await json(response)).email).toBe('spaced@example.com');
  });

  it.each([
    ['not an address', { email: 'not-an-email' }, '/email'],
    ['no at-sign domain', { email: 'someone@' }, '/email'],
    ['a number', { email: 42 }, '/email'],
    ['no email', {}, '/email'],
    ['an unknown field', { email: 'x@example.com', name: 'X' }, '/'],
    ['an address over 254 characters', { email: `${'a'.repeat(250)}@example.com` }, '/email'],
  ])('400s %s and writes nothing', async (_name, body, pointer) => {
    const rows = subscriberRows();
    const response = await subscribe(body);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    const problem = await json(response);
    expect(problem).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(problem.errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer);
    expect(subscriberRows()).toBe(rows);
  });
});

describe('newsletter for moderators', () => {
  it('counts, lists newest first and searches case-insensitively', async () => {
    const marker = `list${Date.now()}`;
    for (const name of ['one', 'two', 'three']) await subscribe({ email: `${name}.${marker}@example.com` });
    const { newsletter } = server.services;

    expect(newsletter.count()).toBe(subscriberRows());
    const page = newsletter.list({ page: 1, limit: 2, q: marker.toUpperCase() });
    expect(page).toMatchObject({ page: 1, limit: 2, total: 3 });
    expect(page.items.map((subscriber) => subscriber.email)).toEqual([`three.${marker}@example.com`, `two.${marker}@example.com`]);
    expect(page.items[0]).toEqual({
      id: expect.stringMatching(/^nls_/),
      email: `three.${marker}@example.com`,
      status: 'subscribed',
      created_at: expect.stringMatching(/Z$/),
    });
    expect(newsletter.list({ page: 2, limit: 2, q: marker }).items.map((subscriber) => subscriber.email)).toEqual([
      `one.${marker}@example.com`,
    ]);
  });

  it('exports CSV with a header row, every subscriber, and formula-looking cells defused', async () => {
    for (const email of ['-cmd@example.com', '+sum@example.com', "o'neil@example.com"]) {
      expect((await subscribe({ email })).status).toBe(201);
    }

    const csv = server.services.newsletter.exportCsv();
    const lines = csv.split('\r\n');

    expect(lines[0]).toBe('email,status,subscribed_at');
    expect(lines.at(-1)).toBe(''); // every record ends with CRLF
    expect(lines).toHaveLength(subscriberRows() + 2);
    expect(lines).toContainEqual(expect.stringMatching(/^'-cmd@example\.com,subscribed,\d{4}-\d\d-\d\dT[\d:.]+Z$/));
    expect(lines).toContainEqual(expect.stringMatching(/^'\+sum@example\.com,subscribed,/));
    expect(lines).toContainEqual(expect.stringMatching(/^o'neil@example\.com,subscribed,/));
  });
});
