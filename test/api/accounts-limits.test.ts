import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOOD_PASSWORD } from '../helpers/accounts';
import { json, startTestServer, type TestServer } from '../helpers/test-server';

let server: TestServer;

beforeAll(async () => {
  // Limits on (the test server turns them off by default), writes generous so only the sign-in limit bites.
  server = await startTestServer({ rateLimit: { enabled: true, writes: 1000 } });
  await server.services.accounts.createVerified(
    { email: 'locked@example.test', name: 'Locked', roles: [], password: GOOD_PASSWORD },
    'test',
  );
});
afterAll(() => server.close());

describe('sign-in limit', () => {
  it('answers 429 after 10 failed attempts for an account, even with the right password, with Retry-After', async () => {
    for (let i = 0; i < 10; i++) {
      const response = await server.post(
        '/sessions',
        { email: 'locked@example.test', password: `wrong password ${i}` },
        { 'x-forwarded-for': `10.0.0.${i}` },
      );
      expect(response.status).toBe(401);
    }
    const blocked = await server.post('/sessions', { email: 'locked@example.test', password: GOOD_PASSWORD });
    expect(blocked.status).toBe(429);
    expect((await json(blocked)).code).toBe('rate_limited');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(800);
  });

  it('counts per IP too: 10 failures on unknown addresses from one client block its next attempt', async () => {
    const other = await startTestServer({ rateLimit: { enabled: true, writes: 1000 } });
    try {
      for (let i = 0; i < 10; i++)
        expect((await other.post('/sessions', { email: `ghost${i}@example.test`, password: 'wrong password' })).status).toBe(401);
      expect((await other.post('/sessions', { email: 'fresh@example.test', password: 'wrong password' })).status).toBe(429);
    } finally {
      await other.close();
    }
  });

  it('is exact for attempts in flight together: 15 at once, 10 × 401 and 5 × 429; a right password is no failure', async () => {
    const other = await startTestServer({ rateLimit: { enabled: true, writes: 1000 } });
    try {
      await other.services.accounts.createVerified(
        { email: 'busy@example.test', name: 'Busy', roles: [], password: GOOD_PASSWORD },
        'test',
      );
      // A right password first, from the same IP: it does not count against the IP's ten.
      expect((await other.post('/sessions', { email: 'busy@example.test', password: GOOD_PASSWORD })).status).toBe(201);
      const responses = await Promise.all(
        Array.from({ length: 15 }, () => other.post('/sessions', { email: 'busy@example.test', password: 'wrong password' })),
      );
      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status === 401)).toHaveLength(10);
      expect(statuses.filter((status) => status === 429)).toHaveLength(5);
    } finally {
      await other.close();
    }
  });
});
