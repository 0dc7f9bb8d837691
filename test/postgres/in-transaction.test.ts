import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src-api/config';
import type { Store } from '../../src-api/db/store';
import { createAuditService, type AuditService } from '../../src-api/modules/audit/audit.service';
import { createEventsService, type EventsService } from '../../src-api/modules/events/events.service';
import { createMailService, type MailService } from '../../src-api/modules/mail/mail.service';
import { createMarketingService } from '../../src-api/modules/marketing/marketing.service';
import { createFanOut } from '../../src-api/modules/webhooks/webhooks.fan-out';
import type { WebhookEndpointRow } from '../../src-api/modules/webhooks/webhooks.table';
import { agentRow, bothStores } from '../helpers/both-stores';

/**
 * The in-transaction helpers (db/README.md, step 2): audit.recordInTransaction,
 * mail.queueInTransaction and events.recordInTransaction with its listeners
 * (the webhook fan-out, marketing drafts), on SQLite and PostgreSQL 15. They
 * join the caller's store transaction (and refuse to run outside one), commit
 * or roll back with it, and wake their workers only after the commit. Also the
 * events' reads (get, listRecent).
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const NOW = '2025-03-01T12:00:00.000Z';

describe.each(stores.dialects)('in-transaction helpers on $dialect', ({ open }) => {
  let store: Store;
  let audit: AuditService;
  let mail: MailService;
  let events: EventsService;
  const announced: string[] = [];
  const generationErrors: unknown[] = [];
  let counter = 0;
  const ids = { next: (prefix: string) => `${prefix}_${String(++counter).padStart(6, '0')}`, agent: () => 'agt_unused' };

  const countOf = async (table: keyof Store['t']) => (await store.first(store.db.select({ n: count() }).from(store.t[table])))?.n ?? 0;
  const endpoint = (id: string, fields: Partial<WebhookEndpointRow> = {}): WebhookEndpointRow => ({
    id,
    url: `https://example.org/${id}`,
    events: [],
    secret: 'whsec_test',
    previousSecret: null,
    previousSecretExpiresAt: null,
    description: '',
    active: true,
    disabledReason: null,
    consecutiveFailures: 0,
    version: 1,
    ownerAccountId: null,
    scope: 'all',
    createdAt: NOW,
    updatedAt: NOW,
    ...fields,
  });
  const deliveriesOf = async (eventId: string) =>
    (
      await store.rows(
        store.db
          .select({ endpointId: store.t.webhookDeliveries.endpointId, status: store.t.webhookDeliveries.status })
          .from(store.t.webhookDeliveries)
          .where(eq(store.t.webhookDeliveries.eventId, eventId)),
      )
    )
      .map((row) => `${row.endpointId}:${row.status}`)
      .sort();

  beforeAll(async () => {
    store = await open();
    const clock = { now: () => new Date(NOW) };
    audit = createAuditService({ store, clock, ids });
    mail = createMailService({ store, clock, ids, config: { mail: defaultConfig.mail } });
    events = createEventsService({ store, clock, ids });
    const fanOut = createFanOut({ store, clock, ids, announce: () => announced.push('deliveries') });
    events.addListener(async (event) => void (await fanOut.inTransaction(event)));
    createMarketingService({ store, clock, ids, events, audit, onGenerationError: (error) => generationErrors.push(error) });

    const { agents, webhookEndpoints } = store.t;
    await store.run(
      store.db
        .insert(agents)
        .values([
          agentRow({ id: 'agt_owned', name: 'Owned', sourceUrlKey: 'example.org/owned', ownerAccountId: 'acc_1', changeSeq: 1 }),
          agentRow({ id: 'agt_free', name: 'Free', sourceUrlKey: 'example.org/free', changeSeq: 2 }),
          agentRow({ id: 'agt_hidden', name: 'Hidden', sourceUrlKey: 'example.org/hidden', listed: false, changeSeq: 3 }),
        ]),
    );
    await store.run(
      store.db
        .insert(webhookEndpoints)
        .values([
          endpoint('whk_all'),
          endpoint('whk_reviews', { events: ['review.created'] }),
          endpoint('whk_owned', { scope: 'owned', ownerAccountId: 'acc_1' }),
          endpoint('whk_other_owner', { scope: 'owned', ownerAccountId: 'acc_2' }),
          endpoint('whk_off', { active: false, disabledReason: 'test' }),
        ]),
    );
  }, 180_000);

  it('each helper refuses to run outside a store transaction, and writes nothing', async () => {
    const before = [await countOf('auditLog'), await countOf('mailOutbox'), await countOf('events')];
    await expect(audit.recordInTransaction({ actor: 'mod', action: 'x', entityType: 'agent', entityId: 'agt_free' })).rejects.toThrow(
      /audit\.recordInTransaction must be called inside the caller's store\.transaction\(\)/,
    );
    await expect(mail.queueInTransaction({ kind: 'test', to: 'a@example.org', subject: 'S', paragraphs: ['p'] })).rejects.toThrow(
      /mail\.queueInTransaction must be called inside/,
    );
    await expect(events.recordInTransaction('agent.updated', { agent_id: 'agt_free' })).rejects.toThrow(
      /events\.recordInTransaction must be called inside/,
    );
    expect([await countOf('auditLog'), await countOf('mailOutbox'), await countOf('events')]).toEqual(before);
  });

  it('audit and mail rows commit with the transaction; the mail worker is woken after the commit', async () => {
    const wakes: number[] = [];
    const stop = mail.onQueued(() => void countOf('mailOutbox').then((n) => wakes.push(n)));
    try {
      const mailsBefore = await countOf('mailOutbox');
      const { entry, mailId } = await store.transaction(async () => {
        const entry = await audit.recordInTransaction({
          actor: 'mod',
          action: 'key.create',
          entityType: 'api_key',
          entityId: 'key_1',
          after: { a: [1] },
        });
        const mailId = await mail.queueInTransaction({
          kind: 'test.hello',
          to: 'reader@example.org',
          subject: 'Hello “you” 🚀',
          paragraphs: ['Hi'],
        });
        await new Promise((resolve) => setImmediate(resolve));
        expect(wakes).toEqual([]); // not while the row is uncommitted
        return { entry, mailId };
      });
      expect(await store.first(store.db.select().from(store.t.auditLog).where(eq(store.t.auditLog.id, entry.id)))).toEqual(entry);
      const queued = await store.first(store.db.select().from(store.t.mailOutbox).where(eq(store.t.mailOutbox.id, mailId)));
      expect(queued).toMatchObject({
        kind: 'test.hello',
        to: 'reader@example.org',
        subject: 'Hello “you” 🚀',
        status: 'pending',
        nextAttemptAt: NOW,
      });
      await expect.poll(() => wakes).toEqual([mailsBefore + 1]); // woken once, and it saw the committed row
    } finally {
      stop();
    }
  });

  it('audit and mail rows roll back with the transaction, and nothing is woken', async () => {
    let woken = 0;
    const stop = mail.onQueued(() => woken++);
    const before = [await countOf('auditLog'), await countOf('mailOutbox')];
    await expect(
      store.transaction(async () => {
        await audit.recordInTransaction({ actor: 'mod', action: 'key.revoke', entityType: 'api_key', entityId: 'key_2' });
        await mail.queueInTransaction({ kind: 'test.undone', to: 'b@example.org', subject: 'S', paragraphs: ['p'] });
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    await new Promise((resolve) => setTimeout(resolve, 20));
    stop();
    expect(woken).toBe(0);
    expect([await countOf('auditLog'), await countOf('mailOutbox')]).toEqual(before);
  });

  it('an event fans out to its subscribers and makes its marketing drafts in the same transaction', async () => {
    announced.length = 0;
    const event = await store.transaction(async () => {
      const recorded = await events.recordInTransaction('agent.registered', {
        agent_id: 'agt_owned',
        name: 'Owned',
        source_url: 'https://x.org',
      });
      expect(announced).toEqual([]); // the dispatcher hears of it after the commit
      return recorded;
    });
    expect(announced).toEqual(['deliveries']);
    const stored = await store.first(store.db.select().from(store.t.events).where(eq(store.t.events.id, event.id)));
    expect(stored).toEqual({
      id: event.id,
      type: 'agent.registered',
      data: { agent_id: 'agt_owned', name: 'Owned', source_url: 'https://x.org' },
      createdAt: NOW,
    });
    // Every kind, and the owner's own endpoint; not review-only, another owner's, or a disabled one.
    expect(await deliveriesOf(event.id)).toEqual(['whk_all:pending', 'whk_owned:pending']);
    const posts = await store.rows(
      store.db.select().from(store.t.marketingPosts).where(eq(store.t.marketingPosts.sourceEventId, event.id)),
    );
    expect(posts.length).toBeGreaterThan(0);
    expect(new Set(posts.map((post) => post.agentId))).toEqual(new Set(['agt_owned']));

    // A review event of an agent nobody owns: the review-only endpoint too, owned ones not.
    const review = await store.transaction(() =>
      events.recordInTransaction('review.created', { agent_id: 'agt_free', review_id: 'rev_none', rating: 2 }),
    );
    expect(await deliveriesOf(review.id)).toEqual(['whk_all:pending', 'whk_reviews:pending']);
    // Rated 2: no drafts; an unlisted agent: none either.
    const unlisted = await store.transaction(() =>
      events.recordInTransaction('agent.verified', { agent_id: 'agt_hidden', name: 'Hidden', via: 'claim' }),
    );
    for (const id of [review.id, unlisted.id]) {
      expect(await store.rows(store.db.select().from(store.t.marketingPosts).where(eq(store.t.marketingPosts.sourceEventId, id)))).toEqual(
        [],
      );
    }
    expect(generationErrors).toEqual([]);

    // The outbox's reads: one event by id; the latest, newest first (one millisecond here: in the order written).
    expect(await events.get(event.id)).toEqual(stored);
    expect(await events.get('evt_missing')).toBeUndefined();
    expect((await events.listRecent(3)).map((row) => row.id)).toEqual([unlisted.id, review.id, event.id]);
  });

  it('a rolled-back change takes its event, deliveries and drafts with it', async () => {
    announced.length = 0;
    const before = [await countOf('events'), await countOf('webhookDeliveries'), await countOf('marketingPosts')];
    await expect(
      store.transaction(async () => {
        await events.recordInTransaction('agent.registered', { agent_id: 'agt_free', name: 'Free', source_url: 'https://x.org' });
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect([await countOf('events'), await countOf('webhookDeliveries'), await countOf('marketingPosts')]).toEqual(before);
    expect(announced).toEqual([]);
  });

  it('failing draft generation is undone alone: the event and its deliveries commit', async () => {
    // The next id the generator takes is already a post's: its insert fails (on PostgreSQL that
    // aborts the whole transaction unless the listener runs in a savepoint).
    const taken = `post_${String(counter + 3).padStart(6, '0')}`; // after the event's and two deliveries' ids
    await store.run(
      store.db.insert(store.t.marketingPosts).values({
        id: taken,
        title: 't',
        body: 'b',
        tone: 'playful',
        channel: 'blog',
        status: 'draft',
        agentId: null,
        sourceEventId: null,
        sourceEventType: null,
        version: 1,
        createdAt: NOW,
        publishedAt: null,
      }),
    );
    const postsBefore = await countOf('marketingPosts');
    const event = await store.transaction(() =>
      events.recordInTransaction('agent.registered', { agent_id: 'agt_free', name: 'Free', source_url: 'https://x.org' }),
    );
    expect(generationErrors).toHaveLength(1);
    expect(
      await store.first(store.db.select({ id: store.t.events.id }).from(store.t.events).where(eq(store.t.events.id, event.id))),
    ).toEqual({ id: event.id });
    expect(await deliveriesOf(event.id)).toEqual(['whk_all:pending']);
    expect(await countOf('marketingPosts')).toBe(postsBefore);
  });
});
