import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src-api/errors';
import { countRows } from '../helpers/store-rows';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';

let server: TestServer;
let agentSeq = 0;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A fresh listed agent per test, so tests do not see each other's reviews. */
async function newAgent(options: { listed?: boolean } = {}): Promise<string> {
  const { agents } = server.services;
  const agent = await agents.edits.create(agentInput({ name: `Reviewed Agent ${++agentSeq}` }), { emitEvents: false });
  if (options.listed === false) await agents.edits.setListed(agent.id, false, { emitEvents: false });
  return agent.id;
}

const rowCount = (table: string) => countRows(server.services.store, table);

const writeCounts = async () => ({
  reviews: await rowCount('reviews'),
  events: await rowCount('events'),
  audit: await rowCount('audit_log'),
});

const postReview = (agentId: string, body: unknown) => server.post(`/agents/${agentId}/reviews`, body);

async function profileRating(agentId: string): Promise<{ average: number | null; count: number }> {
  return (await json(await server.api(`/agents/${agentId}`))).rating;
}

describe('POST /agents/{id}/reviews', () => {
  it('creates a review: 201 with exactly the review fields', async () => {
    const agentId = await newAgent();
    const response = await postReview(agentId, { rating: 4, comment: 'Solid and fast.', reviewer_name: 'Dana' });

    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toContain('application/json');
    const review = await json(response);
    expect(review).toEqual({
      id: expect.stringMatching(/^rev_[a-z0-9]+$/),
      agent_id: agentId,
      rating: 4,
      comment: 'Solid and fast.',
      reviewer_name: 'Dana',
      verified_reviewer: false,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      reply: null,
    });
  });

  it('answers null for the optional fields when they are absent', async () => {
    const agentId = await newAgent();
    const review = await json(await postReview(agentId, { rating: 5 }));
    expect(review).toMatchObject({ agent_id: agentId, rating: 5, comment: null, reviewer_name: null });
  });

  it("updates the agent's rating aggregate", async () => {
    const agentId = await newAgent();
    await postReview(agentId, { rating: 5 });
    await postReview(agentId, { rating: 2 });
    expect(await profileRating(agentId)).toEqual({ average: 3.5, count: 2 });
  });

  it('records review.created in the outbox with the review as its data', async () => {
    const agentId = await newAgent();
    const review = await json(await postReview(agentId, { rating: 3, comment: 'OK', reviewer_name: 'Lee' }));

    const recorded = (await server.services.events.listRecent(1000)).filter((event) => event.data.review_id === review.id);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ type: 'review.created', createdAt: expect.stringMatching(/Z$/) });
    expect(recorded[0]!.data).toEqual({
      review_id: review.id,
      agent_id: agentId,
      rating: 3,
      comment: 'OK',
      reviewer_name: 'Lee',
      created_at: review.created_at,
    });
  });

  it('accepts a comment of exactly 2,000 characters and a name of 100', async () => {
    const agentId = await newAgent();
    const response = await postReview(agentId, { rating: 1, comment: 'c'.repeat(2000), reviewer_name: 'n'.repeat(100) });
    expect(response.status).toBe(201);
  });

  it('404s an unknown or unlisted agent and writes nothing', async () => {
    const unlisted = await newAgent({ listed: false });
    const before = await writeCounts();
    for (const agentId of ['no-such-agent', unlisted]) {
      const response = await postReview(agentId, { rating: 5 });
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(await json(response)).toMatchObject({ status: 404, code: 'not_found' });
    }
    expect(await writeCounts()).toEqual(before);
    expect(await server.services.agents.getRow(unlisted)).toMatchObject({ ratingCount: 0, ratingSum: 0 });
  });

  it.each([
    ['rating 0', { rating: 0 }, '/rating'],
    ['rating 6', { rating: 6 }, '/rating'],
    ['rating 3.5', { rating: 3.5 }, '/rating'],
    ['rating "5"', { rating: '5' }, '/rating'],
    ['rating null', { rating: null }, '/rating'],
    ['no rating', { comment: 'Great' }, '/rating'],
    ['comment of 2,001 characters', { rating: 4, comment: 'c'.repeat(2001) }, '/comment'],
    ['reviewer_name of 101 characters', { rating: 4, reviewer_name: 'n'.repeat(101) }, '/reviewer_name'],
    ['comment as a number', { rating: 4, comment: 42 }, '/comment'],
    ['an unknown field', { rating: 4, stars: 4 }, '/'],
  ])('400s %s and writes nothing', async (_name, body, pointer) => {
    const agentId = await newAgent();
    const before = await writeCounts();
    const response = await postReview(agentId, body);

    expect(response.status).toBe(400);
    const problem = await json(response);
    expect(problem).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(problem.errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer);
    expect(await writeCounts()).toEqual(before);
    expect(await profileRating(agentId)).toEqual({ average: null, count: 0 });
  });
});

describe('GET /agents/{id}/reviews', () => {
  it('lists newest first with page, limit, total and Link headers', async () => {
    const agentId = await newAgent();
    const created = [];
    for (let rating = 1; rating <= 5; rating++) created.push(await json(await postReview(agentId, { rating })));
    const newestFirst = created.map((review) => review.id).reverse();

    const first = await server.api(`/agents/${agentId}/reviews?limit=2`);
    expect(first.status).toBe(200);
    const firstBody = await json(first);
    expect(firstBody).toEqual({ reviews: [created[4], created[3]], page: 1, limit: 2, total: 5 });
    expect(first.headers.get('link')).toBe(`</api/v1/agents/${agentId}/reviews?limit=2&page=2>; rel="next"`);

    const middle = await server.api(`/agents/${agentId}/reviews?limit=2&page=2`);
    expect((await json(middle)).reviews.map((review: { id: string }) => review.id)).toEqual(newestFirst.slice(2, 4));
    expect(middle.headers.get('link')).toBe(
      `</api/v1/agents/${agentId}/reviews?limit=2&page=3>; rel="next", </api/v1/agents/${agentId}/reviews?limit=2&page=1>; rel="prev"`,
    );

    const last = await server.api(`/agents/${agentId}/reviews?limit=2&page=3`);
    expect((await json(last)).reviews.map((review: { id: string }) => review.id)).toEqual(newestFirst.slice(4));
    expect(last.headers.get('link')).toBe(`</api/v1/agents/${agentId}/reviews?limit=2&page=2>; rel="prev"`);
  });

  it('defaults to page 1 of 20 and answers an empty list for an agent without reviews', async () => {
    const agentId = await newAgent();
    const response = await server.api(`/agents/${agentId}/reviews`);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ reviews: [], page: 1, limit: 20, total: 0 });
    expect(response.headers.get('link')).toBeNull();
  });

  it('404s an unknown or unlisted agent', async () => {
    const unlisted = await newAgent({ listed: false });
    for (const agentId of ['no-such-agent', unlisted]) {
      const response = await server.api(`/agents/${agentId}/reviews`);
      expect(response.status).toBe(404);
      expect((await json(response)).code).toBe('not_found');
    }
  });

  it('400s a bad page or limit', async () => {
    const agentId = await newAgent();
    for (const query of ['page=0', 'limit=0', 'limit=101', 'limit=ten']) {
      const response = await server.api(`/agents/${agentId}/reviews?${query}`);
      expect(response.status).toBe(400);
      expect((await json(response)).code).toBe('validation_failed');
    }
  });
});

describe('moderating reviews', () => {
  it('hides a review: gone from the public list and the rating, audited, no event', async () => {
    const agentId = await newAgent();
    const kept = await json(await postReview(agentId, { rating: 5 }));
    const spam = await json(await postReview(agentId, { rating: 1, comment: 'buy cheap followers' }));
    const eventsBefore = await rowCount('events');

    const hidden = await server.services.reviews.setHidden(spam.id, true, 'moderator@example.com');

    expect(hidden).toMatchObject({ id: spam.id, hidden: true });
    expect(await json(await server.api(`/agents/${agentId}/reviews`))).toEqual({ reviews: [kept], page: 1, limit: 20, total: 1 });
    expect(await profileRating(agentId)).toEqual({ average: 5, count: 1 });
    expect(await rowCount('events')).toBe(eventsBefore);

    const audit = await server.services.audit.list({ page: 1, limit: 10, entityType: 'review', entityId: spam.id });
    expect(audit.items).toHaveLength(1);
    expect(audit.items[0]).toMatchObject({
      actor: 'moderator@example.com',
      action: 'review.hide',
      before: expect.objectContaining({ id: spam.id, hidden: false }),
      after: expect.objectContaining({ id: spam.id, hidden: true }),
    });
  });

  it('shows a hidden review again and restores the rating', async () => {
    const agentId = await newAgent();
    const review = await json(await postReview(agentId, { rating: 2 }));
    await server.services.reviews.setHidden(review.id, true, 'mod');
    expect(await profileRating(agentId)).toEqual({ average: null, count: 0 });

    await server.services.reviews.setHidden(review.id, false, 'mod');

    expect(await profileRating(agentId)).toEqual({ average: 2, count: 1 });
    expect((await json(await server.api(`/agents/${agentId}/reviews`))).reviews).toEqual([review]);
    const actions = (await server.services.audit.list({ page: 1, limit: 10, entityId: review.id })).items.map((entry) => entry.action);
    expect(actions.sort()).toEqual(['review.hide', 'review.unhide']);
  });

  it('changes nothing when the review is already in the asked state', async () => {
    const agentId = await newAgent();
    const review = await json(await postReview(agentId, { rating: 4 }));
    await server.services.reviews.setHidden(review.id, true, 'mod');
    const before = await writeCounts();

    await server.services.reviews.setHidden(review.id, true, 'mod');

    expect(await writeCounts()).toEqual(before);
    expect(await profileRating(agentId)).toEqual({ average: null, count: 0 });
  });

  it('lists every review of an agent for the console, hidden ones flagged', async () => {
    const agentId = await newAgent();
    const visible = await json(await postReview(agentId, { rating: 4 }));
    const spam = await json(await postReview(agentId, { rating: 1 }));
    await server.services.reviews.setHidden(spam.id, true, 'mod');

    const page = await server.services.reviews.listForAgent(agentId, { page: 1, limit: 20 });

    expect(page.total).toBe(2);
    expect(page.items.map((review) => [review.id, review.hidden])).toEqual([
      [spam.id, true],
      [visible.id, false],
    ]);
    expect(page.items[0]!.agent_name).toBe((await server.services.agents.getRow(agentId)).name);
  });

  it('lists the latest reviews across agents, optionally only hidden ones', async () => {
    const first = await json(await postReview(await newAgent(), { rating: 3 }));
    const second = await json(await postReview(await newAgent(), { rating: 1 }));
    await server.services.reviews.setHidden(second.id, true, 'mod');

    const recent = await server.services.reviews.listRecent({ page: 1, limit: 2 });
    expect(recent.items.map((review) => review.id)).toEqual([second.id, first.id]);
    expect(recent.total).toBe(await rowCount('reviews'));

    const hiddenOnly = await server.services.reviews.listRecent({ page: 1, limit: 100, hidden: true });
    expect(hiddenOnly.items.every((review) => review.hidden)).toBe(true);
    expect(hiddenOnly.items.map((review) => review.id)).toContain(second.id);
  });

  it('throws NotFoundError for an unknown review or agent', async () => {
    await expect(server.services.reviews.setHidden('rev_missing', true, 'mod')).rejects.toThrow(NotFoundError);
    await expect(server.services.reviews.listForAgent('no-such-agent', { page: 1, limit: 20 })).rejects.toThrow(NotFoundError);
  });
});
