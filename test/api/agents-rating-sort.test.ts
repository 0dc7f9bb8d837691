import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  const { agents, reviews } = server.services;
  const review = (id: string, rating: number) => reviews.create(id, { rating, comment: 'ok', reviewer_name: 'r' });
  const lucky = await agents.edits.create(agentInput({ name: 'One Star Wonder' }), { emitEvents: false });
  await review(lucky.id, 5);
  const steady = await agents.edits.create(agentInput({ name: 'Steady Fifty' }), { emitEvents: false });
  for (let i = 0; i < 50; i++) await review(steady.id, i < 40 ? 5 : 4); // 4.8 on average
  const poor = await agents.edits.create(agentInput({ name: 'Often Poor' }), { emitEvents: false });
  for (let i = 0; i < 10; i++) await review(poor.id, 2);
  await agents.edits.create(agentInput({ name: 'Never Rated' }), { emitEvents: false });
});
afterAll(() => server.close());

describe('GET /agents?sort=rating', () => {
  it('orders by the Bayesian mean of the trust score: one 5-star review does not outrank fifty 4.8s; unrated last', async () => {
    const names = async (query: string) =>
      ((await json(await server.api(`/agents?${query}`))).agents as { name: string }[]).map((agent) => agent.name);
    expect(await names('sort=rating')).toEqual(['Steady Fifty', 'One Star Wonder', 'Often Poor', 'Never Rated']);
    expect(await names('sort=rating&order=asc')).toEqual(['Often Poor', 'One Star Wonder', 'Steady Fifty', 'Never Rated']);
  });
});
