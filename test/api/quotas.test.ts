import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';

/**
 * The quotas against abuse of contract section 3, per client (today the IP
 * address, IPv6 by its /64; clients are told apart with X-Forwarded-For
 * behind --trust-proxy): one review per agent per client per 24 h (409
 * duplicate_review), at most 5 pending claims and 5 pending submissions
 * (409 quota_exceeded). A refused write writes nothing. `--rate-limit off`
 * turns them off.
 */

let server: TestServer;
let unlimited: TestServer;

beforeAll(async () => {
  // Limits on, with room enough that only the quotas can refuse.
  server = await startTestServer({ trustProxy: 1, rateLimit: { enabled: true, writes: 1_000, anonymousReads: 1_000 } });
  unlimited = await startTestServer({ trustProxy: 1 });
});
afterAll(async () => {
  await server?.close();
  await unlimited?.close();
});

const from = (ip: string) => ({ 'x-forwarded-for': ip });
const newAgent = async (target: TestServer, name: string) =>
  (await target.services.agents.edits.create(agentInput({ name }), { emitEvents: false })).id;

describe('one review per agent per client per 24 h', () => {
  it('a second review of one agent from one address is a 409 duplicate_review and writes nothing', async () => {
    const agentId = await newAgent(server, 'Quota Target');
    const first = await server.post(`/agents/${agentId}/reviews`, { rating: 5 }, from('198.51.100.7'));
    expect(first.status).toBe(201);
    const second = await server.post(`/agents/${agentId}/reviews`, { rating: 5, comment: 'again' }, from('198.51.100.7'));
    expect(second.status).toBe(409);
    expect(second.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await json(second)).toMatchObject({ status: 409, code: 'duplicate_review' });
    expect((await server.services.agents.get(agentId)).rating).toEqual({ average: 5, count: 1 });
    expect((await server.services.reviews.listVisible(agentId, { page: 1, limit: 10 })).total).toBe(1);

    // Another agent from the same address, and the same agent from another address, are fine.
    expect(
      (await server.post(`/agents/${await newAgent(server, 'Quota Other')}/reviews`, { rating: 4 }, from('198.51.100.7'))).status,
    ).toBe(201);
    expect((await server.post(`/agents/${agentId}/reviews`, { rating: 4 }, from('198.51.100.8'))).status).toBe(201);
  });

  it('twenty 5-star reviews from one address count once in the rating and the trust score', async () => {
    const agentId = await newAgent(server, 'Stuffing Target');
    const before = (await server.services.agents.get(agentId)).trust_score;
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++)
      statuses.push((await server.post(`/agents/${agentId}/reviews`, { rating: 5 }, from('203.0.113.99'))).status);
    expect(statuses[0]).toBe(201);
    expect(statuses.slice(1).every((status) => status === 409)).toBe(true);
    const after = await server.services.agents.get(agentId);
    expect(after.rating.count).toBe(1);
    // One review moves the Bayesian review signal a little, nowhere near the 27 of 30 points twenty did.
    expect(after.trust_score - before).toBeLessThan(5);
  });

  it('IPv6 counts by /64: another address in the same /64 is the same client', async () => {
    const agentId = await newAgent(server, 'Quota Six');
    expect((await server.post(`/agents/${agentId}/reviews`, { rating: 3 }, from('2001:db8:1:2::1'))).status).toBe(201);
    const sameNetwork = await server.post(`/agents/${agentId}/reviews`, { rating: 3 }, from('2001:db8:1:2:ffff::9'));
    expect(sameNetwork.status).toBe(409);
    expect((await server.post(`/agents/${agentId}/reviews`, { rating: 3 }, from('2001:db8:1:3::1'))).status).toBe(201);
  });

  it('--rate-limit off turns the quota off', async () => {
    const agentId = await newAgent(unlimited, 'Unlimited Target');
    for (let i = 0; i < 3; i++)
      expect((await unlimited.post(`/agents/${agentId}/reviews`, { rating: 5 }, from('198.51.100.7'))).status).toBe(201);
  });

  it('the console and tools (no client) are not limited', async () => {
    const agentId = await newAgent(server, 'Tool Target');
    await server.services.reviews.create(agentId, { rating: 4, comment: null, reviewer_name: null });
    await server.services.reviews.create(agentId, { rating: 4, comment: null, reviewer_name: null });
    expect((await server.services.agents.get(agentId)).rating.count).toBe(2);
  });
});

describe('pending claims and submissions per client', () => {
  it('a sixth pending claim from one client is a 409 quota_exceeded; others are not affected', async () => {
    const claim = (agentId: string, ip: string) =>
      server.post('/claims', { agent_id: agentId, claimant_name: 'Ada', claimant_email: 'ada@example.com' }, from(ip));
    for (let i = 0; i < 5; i++) expect((await claim(await newAgent(server, `Claim Quota ${i}`), '192.0.2.50')).status).toBe(201);
    const target = await newAgent(server, 'Claim Quota 5');
    const sixth = await claim(target, '192.0.2.50');
    expect(sixth.status).toBe(409);
    expect(await json(sixth)).toMatchObject({ code: 'quota_exceeded' });
    expect((await server.services.claims.list({ page: 1, limit: 100, agent_id: target })).total).toBe(0);
    expect((await claim(target, '192.0.2.51')).status).toBe(201);
  });

  it('a sixth waiting submission from one client is a 409 quota_exceeded; a decision frees a slot', async () => {
    const submit = (i: number, ip: string) =>
      server.post(
        '/submit',
        { name: `Quota Sub ${i}`, tagline: 'Waits', source_url: `https://example.com/quota-sub/${ip}/${i}` },
        from(ip),
      );
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await submit(i, '192.0.2.60');
      expect(response.status).toBe(201);
      ids.push((await json(response)).id);
    }
    const sixth = await submit(5, '192.0.2.60');
    expect(sixth.status).toBe(409);
    expect(await json(sixth)).toMatchObject({ code: 'quota_exceeded' });
    expect((await server.services.submissions.list({ page: 1, limit: 100, q: 'Quota Sub 5' })).total).toBe(0); // nothing written
    expect((await submit(5, '192.0.2.61')).status).toBe(201);
    await server.services.submissions.reject(ids[0]!, 'not an agent', { actor: 'moderator' });
    expect((await submit(6, '192.0.2.60')).status).toBe(201);
  });

  it('IPv6 clients count by /64 for claims too', async () => {
    const claim = (agentId: string, ip: string) =>
      server.post('/claims', { agent_id: agentId, claimant_name: 'Ada', claimant_email: 'ada@example.com' }, from(ip));
    for (let i = 0; i < 5; i++) expect((await claim(await newAgent(server, `Six Claim ${i}`), `2001:db8:9:9::${i + 1}`)).status).toBe(201);
    const sixth = await claim(await newAgent(server, 'Six Claim 5'), '2001:db8:9:9:abcd::1');
    expect(sixth.status).toBe(409);
    expect(await json(sixth)).toMatchObject({ code: 'quota_exceeded' });
  });

  it('--rate-limit off turns the submission quota off', async () => {
    for (let i = 0; i < 7; i++) {
      const response = await unlimited.post(
        '/submit',
        { name: `Free Sub ${i}`, tagline: 'Waits', source_url: `https://example.com/free-sub/${i}` },
        from('192.0.2.70'),
      );
      expect(response.status).toBe(201);
    }
  });
});
