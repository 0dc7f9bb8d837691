import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createConfig } from '../../src-api/config';
import { openDatabase, type Db } from '../../src-api/db/client';
import { createServices, type Services } from '../../src-api/services';
import { newsletterTokenFromOutbox } from '../helpers/newsletter';
import { agentInput, makeTempDir } from '../helpers/test-server';

/**
 * The review, submission and newsletter services on a real SQLite file with a
 * clock the test moves by hand: every stored time is the clock's, in UTC.
 */
let db: Db;
let services: Services;
let now: Date;

beforeEach(() => {
  const dataDir = makeTempDir();
  db = openDatabase(path.join(dataDir, 'test.sqlite'));
  now = new Date('2025-03-01T12:00:00.000Z');
  services = createServices({ db, config: createConfig({ dataDir }), clock: { now: () => now } });
});
afterEach(() => db.$client.close());

const at = (iso: string) => {
  now = new Date(iso);
};

describe('reviews', () => {
  it('stamps reviews with the clock and lists them by creation time, newest first', async () => {
    const agent = await services.agents.edits.create(agentInput(), { emitEvents: false });
    at('2025-03-02T08:00:00.000Z');
    const later = await services.reviews.create(agent.id, { rating: 5, comment: null, reviewer_name: null });
    // Written afterwards, but dated earlier (e.g. another process with a slower clock).
    at('2025-03-01T08:00:00.000Z');
    const earlier = await services.reviews.create(agent.id, { rating: 3, comment: null, reviewer_name: null });

    expect(later.created_at).toBe('2025-03-02T08:00:00.000Z');
    expect((await services.reviews.listVisible(agent.id, { page: 1, limit: 20 })).items.map((review) => review.id)).toEqual([
      later.id,
      earlier.id,
    ]);
    for (const review of [later, earlier]) {
      const event = (await services.events.listRecent()).find((candidate) => candidate.data.review_id === review.id);
      expect(event).toMatchObject({ type: 'review.created', createdAt: review.created_at });
    }
  });

  it('stamps the audit entry of a hide with the clock', async () => {
    const agent = await services.agents.edits.create(agentInput(), { emitEvents: false });
    const review = await services.reviews.create(agent.id, { rating: 1, comment: 'spam', reviewer_name: null });
    at('2025-03-05T10:30:00.000Z');
    await services.reviews.setHidden(review.id, true, 'mod');
    const [entry] = (await services.audit.list({ page: 1, limit: 1, entityType: 'review' })).items;
    expect(entry).toMatchObject({ action: 'review.hide', createdAt: '2025-03-05T10:30:00.000Z' });
  });
});

describe('submissions', () => {
  const input = {
    name: 'Clocked Agent',
    tagline: 'Tells the time',
    source_url: 'https://example.com/clocked',
    description: '',
    author: '',
    capabilities: [],
    categories: [],
    type: 'other' as const,
  };

  it('stamps filing and decision times with the clock', async () => {
    const submission = await services.submissions.submit(input);
    expect(submission).toMatchObject({ created_at: '2025-03-01T12:00:00.000Z', updated_at: '2025-03-01T12:00:00.000Z' });

    at('2025-03-03T09:15:00.000Z');
    const approved = await services.submissions.approve(submission.id, { actor: 'mod' });

    expect(approved).toMatchObject({
      created_at: '2025-03-01T12:00:00.000Z',
      updated_at: '2025-03-03T09:15:00.000Z',
      decided_at: '2025-03-03T09:15:00.000Z',
    });
    expect((await services.agents.getRow(approved.agent_id!)).createdAt).toBe('2025-03-03T09:15:00.000Z');
  });

  it('lists by filing time, newest first', async () => {
    at('2025-03-02T00:00:00.000Z');
    const newer = await services.submissions.submit(input);
    at('2025-03-01T00:00:00.000Z');
    const older = await services.submissions.submit({ ...input, source_url: 'https://example.com/other' });
    expect((await services.submissions.list({ page: 1, limit: 20 })).items.map((submission) => submission.id)).toEqual([
      newer.id,
      older.id,
    ]);
    expect(await services.submissions.countPending()).toBe(2);
  });
});

describe('newsletter', () => {
  const confirmedAt = async (email: string, iso: string) => {
    await services.newsletter.requestSubscription(email);
    at(iso);
    await subscribeConfirmedToken(email);
  };
  const subscribeConfirmedToken = async (email: string) =>
    services.newsletter.confirm(await newsletterTokenFromOutbox(services.store, email, 'confirm'));

  it('exports confirmed subscribers oldest first with the confirmation time as subscribed_at', async () => {
    at('2025-03-02T00:00:00.000Z');
    await confirmedAt('second@example.com', '2025-03-02T00:05:00.000Z');
    at('2025-03-01T00:00:00.000Z');
    await confirmedAt('first@example.com', '2025-03-01T00:10:00.000Z');
    await services.newsletter.requestSubscription('not-yet@example.com');
    expect(await services.newsletter.exportCsv()).toBe(
      'email,status,subscribed_at\r\n' +
        'first@example.com,subscribed,2025-03-01T00:10:00.000Z\r\n' +
        'second@example.com,subscribed,2025-03-02T00:05:00.000Z\r\n',
    );
  });

  it('keeps one row per address in any case, and subscribes it only when confirmed', async () => {
    await services.newsletter.requestSubscription('Case@Example.com');
    await services.newsletter.requestSubscription('case@example.COM');
    expect(await services.newsletter.counts()).toEqual({ pending: 1, subscribed: 0, unsubscribed: 0 });
    expect(await subscribeConfirmedToken('case@example.com')).toEqual({ email: 'Case@Example.com', status: 'subscribed' });
    expect(await services.newsletter.count()).toBe(1);
  });

  it('mails an address at most 3 times an hour, however often it is asked for', async () => {
    const mailsTo = (email: string) =>
      (
        db.$client.prepare("SELECT count(*) AS n FROM mail_outbox WHERE to_address = ? AND kind LIKE 'newsletter.%'").get(email) as {
          n: number;
        }
      ).n;
    for (let i = 0; i < 5; i++) await services.newsletter.requestSubscription('flooded@example.com');
    expect(mailsTo('flooded@example.com')).toBe(3);
    at('2025-03-01T12:59:00.000Z');
    await services.newsletter.requestSubscription('flooded@example.com');
    expect(mailsTo('flooded@example.com')).toBe(3);
    at('2025-03-01T13:00:01.000Z');
    await services.newsletter.requestSubscription('flooded@example.com');
    expect(mailsTo('flooded@example.com')).toBe(4);
    // Subscribed addresses are capped the same way (their notices count).
    await subscribeConfirmedToken('flooded@example.com');
    for (let i = 0; i < 5; i++) await services.newsletter.requestSubscription('flooded@example.com');
    expect(mailsTo('flooded@example.com')).toBe(6);
  });

  it('confirmation links expire after 48 hours, unsubscribe links after a year', async () => {
    await services.newsletter.requestSubscription('late@example.com');
    const confirm = await newsletterTokenFromOutbox(services.store, 'late@example.com', 'confirm');
    const unsubscribe = await newsletterTokenFromOutbox(services.store, 'late@example.com', 'unsubscribe');
    at('2025-03-03T12:00:01.000Z');
    await expect(services.newsletter.confirm(confirm)).rejects.toThrow(expect.objectContaining({ status: 400, code: 'invalid_token' }));
    expect((await services.newsletter.counts()).pending).toBe(1);
    // A fresh link works; the unsubscribe link of the first mail still does, until a year has passed.
    await services.newsletter.requestSubscription('late@example.com');
    await subscribeConfirmedToken('late@example.com');
    at('2026-02-28T12:00:00.000Z');
    expect(await services.newsletter.unsubscribe(unsubscribe)).toEqual({ email: 'late@example.com', status: 'unsubscribed' });
    at('2026-03-01T12:00:01.000Z');
    await expect(services.newsletter.unsubscribe(unsubscribe)).rejects.toThrow(expect.objectContaining({ code: 'invalid_token' }));
  });
});
