import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleExtensions } from '../../src-api/console/console.extensions';
import { newsletterTokenFromOutbox, subscribeConfirmed } from '../helpers/newsletter';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { trpcClient } from '../helpers/trpc';

/** newsletter.* over real HTTP with the admin token, as the console's web build calls it. */
const ADMIN_TOKEN = 'test-admin-token-newsletter-0123';

let server: TestServer;

const ADDRESSES = ['first@example.com', 'Second.Reader@Example.org', 'third@news.example.com', '=HYPERLINK("x")@evil.example'];
const PENDING = 'waiting@example.net';
const GONE = 'gone@example.net';

beforeAll(async () => {
  server = await startTestServer(
    { adminToken: ADMIN_TOKEN },
    { extensions: (services, adminToken) => consoleExtensions(services, adminToken) },
  );
  const { store, newsletter } = server.services;
  // Through the public endpoint, as readers subscribe, each confirmed with the token its mail carries.
  for (const email of ADDRESSES.slice(0, 3)) {
    expect((await server.post('/newsletter', { email })).status).toBe(202);
    await newsletter.confirm(await newsletterTokenFromOutbox(store, email, 'confirm'));
  }
  // An address a spreadsheet would take for a formula (the REST schema would refuse it, the store need not).
  await subscribeConfirmed(store, newsletter, ADDRESSES[3]!);
  // Neither of these is on the list: one never confirmed, one left.
  expect((await server.post('/newsletter', { email: PENDING })).status).toBe(202);
  await subscribeConfirmed(store, newsletter, GONE);
  await newsletter.unsubscribe(await newsletterTokenFromOutbox(store, GONE, 'unsubscribe'));
});
afterAll(() => server.close());

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

const { query, mutation } = trpcClient(() => server.origin, ADMIN_TOKEN);

describe('newsletter.list', () => {
  it('lists every address newest first with its status and the total', async () => {
    const { status, body } = await query('newsletter.list');
    expect(status).toBe(200);
    const data = body.result.data;
    expect(data).toMatchObject({ page: 1, limit: 20, total: 6 });
    expect(data.subscribers.map((s: { email: string; status: string }) => [s.email, s.status])).toEqual([
      [GONE, 'unsubscribed'],
      [PENDING, 'pending'],
      ...[...ADDRESSES].reverse().map((email) => [email, 'subscribed']),
    ]);
    expect(data.subscribers[2]).toEqual({
      id: expect.stringMatching(/^nls_/),
      email: ADDRESSES[3],
      status: 'subscribed',
      created_at: expect.stringMatching(/Z$/),
      confirmed_at: expect.stringMatching(/Z$/),
    });
    expect(data.subscribers[1].confirmed_at).toBeNull();
  });

  it('filters by status', async () => {
    const confirmed = (await query('newsletter.list', { status: 'subscribed' })).body.result.data;
    expect(confirmed.total).toBe(4);
    expect(
      (await query('newsletter.list', { status: 'pending' })).body.result.data.subscribers.map((s: { email: string }) => s.email),
    ).toEqual([PENDING]);
    const bad = await query('newsletter.list', { status: 'maybe' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.code).toBe('validation_failed');
  });

  it('pages', async () => {
    const second = (await query('newsletter.list', { page: 2, limit: 3, status: 'subscribed' })).body.result.data;
    expect(second).toMatchObject({ page: 2, limit: 3, total: 4 });
    expect(second.subscribers.map((s: { email: string }) => s.email)).toEqual([ADDRESSES[0]]);
  });

  it('searches any part of the address, case-insensitively, and counts only the matches', async () => {
    const found = (await query('newsletter.list', { q: 'EXAMPLE.ORG' })).body.result.data;
    expect(found.total).toBe(1);
    expect(found.subscribers.map((s: { email: string }) => s.email)).toEqual(['Second.Reader@Example.org']);
    const none = (await query('newsletter.list', { q: 'nobody-here' })).body.result.data;
    expect(none).toMatchObject({ subscribers: [], total: 0 });
    // Wildcards of LIKE are plain characters.
    expect((await query('newsletter.list', { q: '%' })).body.result.data.total).toBe(0);
  });

  it('refuses a page size over 100', async () => {
    const { status, body } = await query('newsletter.list', { limit: 101 });
    expect(status).toBe(400);
    expect(body.error.data.code).toBe('validation_failed');
    expect(body.error.data.errors[0].pointer).toBe('/limit');
  });
});

describe('newsletter.count', () => {
  it('counts addresses by status; only confirmed ones are subscribed', async () => {
    expect((await query('newsletter.count')).body.result.data).toEqual({ subscribed: 4, pending: 1, unsubscribed: 1 });
  });
});

describe('newsletter.exportCsv', () => {
  it('returns the confirmed subscribers only as spreadsheet-safe CSV, oldest first, after a header row', async () => {
    const { status, body } = await mutation('newsletter.exportCsv');
    expect(status).toBe(200);
    const csv: string = body.result.data.csv;
    const lines = csv.split('\r\n');
    expect(lines.at(-1)).toBe('');
    expect(lines[0]).toBe('email,status,subscribed_at');
    expect(lines.slice(1, 4).map((line) => line.split(',')[0])).toEqual(ADDRESSES.slice(0, 3));
    expect(lines[1]).toMatch(/^first@example\.com,subscribed,\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    // The formula is quoted and defused.
    expect(lines[4]).toMatch(/^"'=HYPERLINK\(""x""\)@evil\.example",subscribed,/);
    // Neither the unconfirmed nor the departed address is exported.
    expect(lines).toHaveLength(6);
    expect(csv).not.toContain(PENDING);
    expect(csv).not.toContain(GONE);
  });

  it('is audited: who exported, and how many rows', async () => {
    await mutation('newsletter.exportCsv');
    const entry = (await server.services.audit.list({ page: 1, limit: 1, action: 'newsletter.export' })).items[0];
    expect(entry).toMatchObject({
      actor: 'admin-token',
      entityType: 'newsletter',
      entityId: 'subscribers',
      after: { rows: 4, subscribed: 4 },
    });
  });

  it('is a mutation: a GET is refused', async () => {
    const response = await fetch(`${server.origin}/trpc/newsletter.exportCsv`, { headers: auth });
    expect(response.status).toBe(405);
  });

  it('needs the admin token', async () => {
    const response = await fetch(`${server.origin}/trpc/newsletter.exportCsv`, { method: 'POST' });
    expect(response.status).toBe(401);
  });
});
