import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { ConflictError, DuplicateReviewError, NotFoundError } from '../../src-api/errors';
import type { AgentInput } from '../../src-api/modules/agents/agents.schemas';
import { bothStores } from '../helpers/both-stores';
import { storeServices } from '../helpers/store-services';

/**
 * The agents' writers ported to the Store, on SQLite and PostgreSQL 15, through the services
 * as createServices wires them: reviews (the rating under the agent's row lock: two at once
 * both count), the Agent Card refresh's writes, the trust refresh, agents.edits.create with
 * submissions.approve in one transaction, and reports.resolve. test/api covers HTTP and tRPC on SQLite.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const input = (name: string, source: string): AgentInput => ({
  name,
  tagline: `${name} does things`,
  description: '',
  author: 'Author',
  capabilities: ['search'],
  categories: [],
  type: 'other',
  source_url: source,
});

describe.each(stores.dialects)('agent writers on $dialect', ({ open }) => {
  let store: Store;
  let services: ReturnType<typeof storeServices>;
  let now = new Date('2026-03-01T10:00:00.000Z');

  const eventTypes = async (agentId: string) => {
    const { events } = store.t;
    const rows = await store.rows(store.db.select().from(events).orderBy(asc(events.createdAt), asc(events.id)));
    return rows.filter((row) => (row.data as { agent_id?: string }).agent_id === agentId).map((row) => row.type);
  };
  const auditActions = async (entityId: string) => {
    const { auditLog } = store.t;
    const rows = await store.rows(store.db.select().from(auditLog).where(eq(auditLog.entityId, entityId)));
    return rows.map((row) => row.action).sort();
  };

  beforeAll(async () => {
    store = await open();
    services = storeServices(store, { clock: { now: () => now }, quotas: true });
  }, 180_000);

  it('reviews: written with the rating and its event; two at once both count; the quota holds; unlisted agents 404', async () => {
    const { agents, reviews } = services;
    const agent = await agents.edits.create(input('Reviewed', 'https://example.org/reviewed'), { emitEvents: false });
    const review = await reviews.create(agent.id, { rating: 4, comment: 'Good', reviewer_name: 'Ann' }, { client: 'client-a' });
    expect(review).toMatchObject({ agent_id: agent.id, rating: 4, verified_reviewer: false, reply: null });
    expect(await agents.getRow(agent.id)).toMatchObject({ ratingCount: 1, ratingSum: 4, version: 2 });
    expect(await eventTypes(agent.id)).toEqual(['review.created']);
    expect((await agents.get(agent.id)).rating).toEqual({ average: 4, count: 1 });

    // At once, from different writers: each read the agent's row locked, so both are in the aggregate.
    await Promise.all([
      reviews.create(agent.id, { rating: 5, comment: null, reviewer_name: null }, { client: 'client-b' }),
      reviews.create(agent.id, { rating: 1, comment: null, reviewer_name: null }, { client: 'client-c' }),
      reviews.create(agent.id, { rating: 2, comment: null, reviewer_name: null }, { accountId: 'acc_1' }),
    ]);
    expect(await agents.getRow(agent.id)).toMatchObject({ ratingCount: 4, ratingSum: 12, version: 5 });

    // One writer twice at once: the second waits for the first and finds it (409 duplicate_review).
    const twice = await Promise.allSettled([
      reviews.create(agent.id, { rating: 3, comment: null, reviewer_name: null }, { client: 'client-d' }),
      reviews.create(agent.id, { rating: 3, comment: null, reviewer_name: null }, { client: 'client-d' }),
    ]);
    expect(twice.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((twice.find((result) => result.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateReviewError);
    expect(await agents.getRow(agent.id)).toMatchObject({ ratingCount: 5, ratingSum: 15 });

    await agents.edits.setListed(agent.id, false, { emitEvents: false });
    await expect(reviews.create(agent.id, { rating: 5, comment: null, reviewer_name: null })).rejects.toThrow(NotFoundError);
    await expect(reviews.create('agt_missing', { rating: 5, comment: null, reviewer_name: null })).rejects.toThrow(NotFoundError);
    expect(await agents.getRow(agent.id)).toMatchObject({ ratingCount: 5, ratingSum: 15 });
  });

  it('hiding a review takes it out of the rating once, even twice at once; showing it puts it back; get reads it', async () => {
    const { agents, reviews } = services;
    const agent = await agents.edits.create(input('Hidden', 'https://example.org/hidden'), { emitEvents: false });
    const kept = await reviews.create(agent.id, { rating: 5, comment: 'Great', reviewer_name: null });
    const spam = await reviews.create(agent.id, { rating: 1, comment: 'BUY NOW', reviewer_name: null });
    const archived: string[] = [];
    reviews.onHidden(async (review) => void archived.push(review.id));

    const [first, second] = await Promise.all([reviews.setHidden(spam.id, true, 'mod'), reviews.setHidden(spam.id, true, 'mod')]);
    expect([first.hidden, second.hidden]).toEqual([true, true]);
    expect(await agents.getRow(agent.id)).toMatchObject({ ratingCount: 1, ratingSum: 5 });
    expect(archived).toEqual([spam.id]);
    expect(await auditActions(spam.id)).toEqual(['review.hide']);
    expect(await reviews.get(spam.id)).toMatchObject({ id: spam.id, hidden: true, agent_name: 'Hidden', rating: 1 });

    await reviews.setHidden(spam.id, false, 'mod');
    expect(await agents.getRow(agent.id)).toMatchObject({ ratingCount: 2, ratingSum: 6 });
    expect((await reviews.get(kept.id)).hidden).toBe(false);
    await expect(reviews.get('rev_missing')).rejects.toThrow(NotFoundError);
    await expect(reviews.setHidden('rev_missing', true, 'mod')).rejects.toThrow(NotFoundError);
  });

  it('Agent Card refresh: a changed card is an agent.updated with its fields (audited for a moderator); an unchanged one and a 304 only move the fetch time', async () => {
    const { agents } = services;
    const card = { url: 'https://example.org/card.json', skills: [{ id: 's1', name: 'Search', description: 'finds', tags: [] }], etag: '"v1"' };
    const agent = await agents.edits.create(input('Carded', 'https://example.org/carded'), { emitEvents: false, card });
    expect(agent).toMatchObject({ agentCardUrl: card.url, agentCardEtag: '"v1"', agentCardFetchedAt: now.toISOString() });

    now = new Date('2026-03-09T10:00:00.000Z');
    const updated = await agents.edits.applyAgentCard(
      agent.id,
      { tagline: 'Now from the card' },
      { ...card, skills: [...card.skills, { id: 's2', name: 'Sort', description: 'finds', tags: [] }], etag: '"v2"' },
      { actor: 'mod' },
    );
    expect(updated).toMatchObject({ version: 2, tagline: 'Now from the card', agentCardEtag: '"v2"', agentCardFetchedAt: now.toISOString() });
    expect(updated.skills).toHaveLength(2);
    expect(await eventTypes(agent.id)).toEqual(['agent.updated']);
    expect(await auditActions(agent.id)).toEqual(['agent.update']);

    now = new Date('2026-03-16T10:00:00.000Z');
    const same = await agents.edits.applyAgentCard(agent.id, { tagline: 'Now from the card' }, { ...card, skills: updated.skills!, etag: '"v3"' });
    expect(same).toMatchObject({ version: 2, changeSeq: updated.changeSeq, agentCardEtag: '"v3"', agentCardFetchedAt: now.toISOString() });
    now = new Date('2026-03-23T10:00:00.000Z');
    await agents.edits.touchAgentCard(agent.id);
    expect(await agents.getRow(agent.id)).toMatchObject({ version: 2, agentCardEtag: '"v3"', agentCardFetchedAt: now.toISOString() });
    await agents.edits.touchAgentCard('agt_missing'); // gone meanwhile: nothing to touch
    expect(await eventTypes(agent.id)).toEqual(['agent.updated']);
    expect(await agents.agentCardsDue('2026-03-20T00:00:00.000Z', 10)).toEqual([]);
  });

  it('trust refresh: moves the age signal a slice at a time, each change a change (change_seq); then nothing left', async () => {
    const { agents } = services;
    await agents.refreshTrustScores(); // the scores as of now (each was computed when its agent was written)
    expect(await agents.refreshTrustScores()).toBe(0);
    now = new Date('2026-09-01T10:00:00.000Z');
    const seq = await agents.latestChangeSeqAsync();
    const { agents: table } = store.t;
    const count = (await store.rows(store.db.select({ id: table.id }).from(table))).length;
    const slices: number[] = [];
    for (let afterId: string | undefined = ''; afterId !== undefined; ) {
      const slice = await agents.refreshTrustScoresSlice(afterId, 2);
      slices.push(slice.changed);
      afterId = slice.lastId;
    }
    expect(slices.reduce((sum, changed) => sum + changed, 0)).toBe(count);
    expect(await agents.latestChangeSeqAsync()).toBe(seq + count);
    expect(await agents.refreshTrustScores()).toBe(0);
  });

  it('approving a submission lists its agent, with agent.registered and the audit entries, in one transaction; one source is listed once', async () => {
    const { agents, submissions } = services;
    const submitted = await submissions.submit(input('Approved One', 'https://example.org/approved'), null, 'client-s');
    const decided = await submissions.approve(submitted.id, { actor: 'mod' });
    expect(decided).toMatchObject({ status: 'approved', decided_by: 'mod' });
    const agent = await agents.getRow(decided.agent_id!);
    expect(agent).toMatchObject({ name: 'Approved One', listed: true, version: 1 });
    expect(await eventTypes(agent.id)).toEqual(['agent.registered']);
    expect(await auditActions(agent.id)).toEqual(['agent.create']);
    expect((await agents.findBySourceUrl('https://EXAMPLE.org/approved'))?.id).toBe(agent.id);

    // Two submissions of one source, approved at once: one lists it, the other is a conflict and leaves nothing.
    const a = await submissions.submit(input('Twin A', 'https://example.org/twin'), null, 'client-t');
    await submissions.reject(a.id, 'Resubmit', { actor: 'mod' }); // only one may wait per source: file the second after
    const b = await submissions.submit(input('Twin B', 'https://example.org/twin'), null, 'client-u');
    const { submissions: table } = store.t;
    await store.run(store.db.update(table).set({ status: 'pending', reason: null, decidedBy: null, decidedAt: null }).where(eq(table.id, a.id)));
    const results = await Promise.allSettled([submissions.approve(a.id, { actor: 'mod' }), submissions.approve(b.id, { actor: 'mod' })]);
    expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((results.find((result) => result.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
    const { agents: agentsTable } = store.t;
    const twins = await store.rows(store.db.select({ id: agentsTable.id }).from(agentsTable).where(eq(agentsTable.sourceUrlKey, 'example.org/twin')));
    expect(twins).toHaveLength(1);
    expect((await submissions.countByStatus()).pending).toBe(1);
  });

  it('resolving a report unlists or edits its agent in the same transaction, audited; a decided report is a conflict', async () => {
    const { agents, reports } = services;
    const agent = await agents.edits.create(input('Reported', 'https://example.org/reported'), { emitEvents: false });
    const first = await reports.create(agent.id, { reason: 'spam' }, { clientKey: 'client-r1' });
    const second = await reports.create(agent.id, { reason: 'broken' }, { clientKey: 'client-r2' });

    const edited = await reports.resolve(first.id, { resolution: 'edit', reason: 'Tagline fixed', patch: { tagline: 'Fixed' } }, 'mod');
    expect(edited).toMatchObject({ status: 'resolved', resolution: 'edit', agent_listed: true });
    expect((await agents.getRow(agent.id)).tagline).toBe('Fixed');
    await expect(reports.resolve(first.id, { resolution: 'dismiss', reason: 'again' }, 'mod')).rejects.toThrow(ConflictError);

    const unlisted = await reports.resolve(second.id, { resolution: 'unlist', reason: 'Spam' }, 'mod');
    expect(unlisted).toMatchObject({ status: 'resolved', agent_listed: false });
    expect(await eventTypes(agent.id)).toEqual(['agent.updated', 'agent.updated']);
    expect(await auditActions(agent.id)).toEqual(['agent.unlist', 'agent.update']);
    expect(await auditActions(second.id)).toEqual(['report.unlist']);
  });
});
