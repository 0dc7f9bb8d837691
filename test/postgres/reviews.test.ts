import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { NotFoundError } from '../../src-api/errors';
import type { AgentsService } from '../../src-api/modules/agents/agents.service';
import { createReviewsService, type ReviewsService } from '../../src-api/modules/reviews/reviews.service';
import { agentRow, bothStores } from '../helpers/both-stores';

/**
 * The reviews' list reads (the public list of an agent, the console's lists),
 * ported to the data-access seam, on SQLite and on PostgreSQL: the same rows
 * written through the store read back the same on both (test/api/reviews.test.ts
 * covers the HTTP and tRPC side, and the writes, on SQLite).
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const T = (minute: number) => `2025-02-01T10:${String(minute).padStart(2, '0')}:00.000Z`;

describe.each(stores.dialects)('review lists on $dialect', ({ open }) => {
  let store: Store;
  let reviews: ReviewsService;

  const review = (id: string, agentId: string, minute: number, fields: { hidden?: boolean; accountId?: string } = {}) => ({
    id,
    agentId,
    rating: (minute % 5) + 1,
    comment: `comment “${id}” 🚀`,
    reviewerName: minute % 2 ? `Reviewer ${id}` : null,
    hidden: fields.hidden ?? false,
    accountId: fields.accountId ?? null,
    clientKey: fields.accountId ? null : 'client',
    createdAt: T(minute),
  });

  beforeAll(async () => {
    store = await open();
    const known = new Set(['agt_one', 'agt_two', 'agt_unlisted']);
    const lookup = (id: string) => {
      if (!known.has(id)) throw new NotFoundError('Agent', id);
      return {};
    };
    reviews = createReviewsService({
      store,
      clock: { now: () => new Date(T(59)) },
      ids: { next: () => 'rev_unused', agent: () => 'agt_unused' },
      // The agents' reads are not ported yet: a stand-in that knows which agents exist.
      agents: { get: lookup, getRow: lookup } as unknown as AgentsService,
      events: undefined as never,
      audit: undefined as never,
      quota: { enabled: false, windowMs: 0 },
    });
    const { agents, reviews: table, reviewReplies } = store.t;
    await store.run(
      store.db
        .insert(agents)
        .values([
          agentRow({ id: 'agt_one', name: 'One', sourceUrlKey: 'example.org/one', changeSeq: 1 }),
          agentRow({ id: 'agt_two', name: 'Two “2”', sourceUrlKey: 'example.org/two', changeSeq: 2 }),
          agentRow({ id: 'agt_unlisted', name: 'Gone', sourceUrlKey: 'example.org/gone', listed: false, changeSeq: 3 }),
        ]),
    );
    await store.run(
      store.db
        .insert(table)
        .values([
          review('rev_a', 'agt_one', 1),
          review('rev_b', 'agt_one', 2, { hidden: true }),
          review('rev_c', 'agt_one', 3, { accountId: 'acc_1' }),
          review('rev_d', 'agt_two', 4),
          review('rev_e', 'agt_unlisted', 5),
          review('rev_f', 'agt_one', 6),
        ]),
    );
    await store.run(
      store.db.insert(reviewReplies).values({
        id: 'rpl_1',
        reviewId: 'rev_c',
        agentId: 'agt_one',
        accountId: 'acc_owner',
        body: 'Thanks!',
        createdAt: T(7),
        updatedAt: T(8),
      }),
    );
  }, 180_000);

  it('lists an agent’s visible reviews newest first, with replies, a page at a time', async () => {
    const page = await reviews.listVisible('agt_one', { page: 1, limit: 2 });
    expect(page.total).toBe(3);
    expect(page.items).toEqual([
      {
        id: 'rev_f',
        agent_id: 'agt_one',
        rating: 2,
        comment: 'comment “rev_f” 🚀',
        reviewer_name: null,
        verified_reviewer: false,
        created_at: T(6),
        reply: null,
      },
      {
        id: 'rev_c',
        agent_id: 'agt_one',
        rating: 4,
        comment: 'comment “rev_c” 🚀',
        reviewer_name: 'Reviewer rev_c',
        verified_reviewer: true,
        created_at: T(3),
        reply: { body: 'Thanks!', created_at: T(7), updated_at: T(8) },
      },
    ]);
    expect((await reviews.listVisible('agt_one', { page: 2, limit: 2 })).items.map((item) => item.id)).toEqual(['rev_a']);
    await expect(reviews.listVisible('agt_missing', { page: 1, limit: 2 })).rejects.toThrow(NotFoundError);
  });

  it('lists every review of an agent for the console, hidden ones flagged, with the agent’s name', async () => {
    const page = await reviews.listForAgent('agt_one', { page: 1, limit: 10 });
    expect(page.total).toBe(4);
    expect(page.items.map((item) => [item.id, item.hidden, item.agent_name])).toEqual([
      ['rev_f', false, 'One'],
      ['rev_c', false, 'One'],
      ['rev_b', true, 'One'],
      ['rev_a', false, 'One'],
    ]);
    expect(page.items[1]!.reply).toEqual({ body: 'Thanks!', created_at: T(7), updated_at: T(8) });
  });

  it('lists the latest reviews across agents, optionally only hidden or only visible ones', async () => {
    const recent = await reviews.listRecent({ page: 1, limit: 3 });
    expect(recent.total).toBe(6);
    expect(recent.items.map((item) => [item.id, item.agent_name])).toEqual([
      ['rev_f', 'One'],
      ['rev_e', 'Gone'],
      ['rev_d', 'Two “2”'],
    ]);
    const hidden = await reviews.listRecent({ page: 1, limit: 10, hidden: true });
    expect([hidden.total, hidden.items.map((item) => item.id)]).toEqual([1, ['rev_b']]);
    expect((await reviews.listRecent({ page: 1, limit: 10, hidden: false })).total).toBe(5);
  });
});
