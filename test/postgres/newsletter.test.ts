import { and, desc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfig } from '../../src-api/config';
import type { Store } from '../../src-api/db/store';
import { createPublicUrl } from '../../src-api/lib/public-url';
import { createAuditService, type AuditService } from '../../src-api/modules/audit/audit.service';
import { createMailService } from '../../src-api/modules/mail/mail.service';
import { createNewsletterService, type NewsletterService } from '../../src-api/modules/newsletter/newsletter.service';
import { bothStores } from '../helpers/both-stores';

/**
 * The newsletter on the data-access seam, on SQLite and PostgreSQL 15: double
 * opt-in (the mail and its token rows in the sign-up's transaction), confirm and
 * unsubscribe links, the console's list, counts and the audited export, and two
 * sign-ups of one address at once. The HTTP side and the mail limits are covered
 * on SQLite by test/api/newsletter*.test.ts and test/unit/moderation-services.test.ts.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

describe.each(stores.dialects)('newsletter on $dialect', ({ open }) => {
  let store: Store;
  let audit: AuditService;
  let newsletter: NewsletterService;
  let now = new Date('2025-06-01T09:00:00.000Z');
  let counter = 0;

  /** The token of a link in the newest newsletter mail to `email` (only the mail holds the raw token). */
  const tokenFromOutbox = async (email: string, link: 'confirm' | 'unsubscribe') => {
    const { mailOutbox } = store.t;
    const rows = await store.rows(
      store.db
        .select({ text: mailOutbox.text })
        .from(mailOutbox)
        .where(and(eq(mailOutbox.to, email)))
        .orderBy(desc(mailOutbox.id)),
    );
    const token = new RegExp(`/dashboard/newsletter/${link}\\?token=([A-Za-z0-9_-]+)`).exec(rows[0]?.text ?? '')?.[1];
    if (!token) throw new Error(`no ${link} link in a mail to ${email}`);
    return token;
  };

  beforeAll(async () => {
    store = await open();
    const clock = { now: () => now };
    const ids = { next: (prefix: string) => `${prefix}_${String(++counter).padStart(5, '0')}`, agent: () => 'agt_unused' };
    const config = createConfig({});
    audit = createAuditService({ store, clock, ids });
    const mail = createMailService({ store, clock, ids, config });
    newsletter = createNewsletterService({ store, clock, ids, mail, publicUrl: createPublicUrl(config), audit });
  }, 180_000);

  it('signs up with double opt-in: a pending address, a mailed link, subscribed once confirmed', async () => {
    await newsletter.requestSubscription('  Ann@Example.org ');
    expect(await newsletter.counts()).toEqual({ pending: 1, subscribed: 0, unsubscribed: 0 });
    now = new Date(now.getTime() + 60_000);
    const confirm = await tokenFromOutbox('Ann@Example.org', 'confirm');
    expect(await newsletter.confirm(confirm)).toEqual({ email: 'Ann@Example.org', status: 'subscribed' });
    expect(await newsletter.count()).toBe(1);
    // A confirmation link works once.
    await expect(newsletter.confirm(confirm)).rejects.toMatchObject({ code: 'invalid_token' });
    // The same address in another case is the same subscriber: a notice, no second row.
    await newsletter.requestSubscription('ann@example.org');
    expect(await newsletter.counts()).toEqual({ pending: 0, subscribed: 1, unsubscribed: 0 });
  });

  it('two sign-ups of one new address at once make one subscriber', async () => {
    // One spelling: with two, which one is kept depends on which transaction inserts first (the other case of an
    // address is the same subscriber: the test above).
    await Promise.all([newsletter.requestSubscription('twice@example.org'), newsletter.requestSubscription('twice@example.org')]);
    const page = await newsletter.list({ page: 1, limit: 10, q: 'TWICE' });
    expect(page.items.map((item) => [item.email, item.status])).toEqual([['twice@example.org', 'pending']]);
  });

  it('lists newest first with a case-insensitive part of the address, and exports the confirmed ones, audited', async () => {
    for (const email of ['b_1@example.org', 'b%2@example.org']) {
      now = new Date(now.getTime() + 60_000);
      await newsletter.requestSubscription(email);
      await newsletter.confirm(await tokenFromOutbox(email, 'confirm'));
    }
    expect((await newsletter.list({ page: 1, limit: 10 })).items.map((item) => item.email)).toEqual([
      'b%2@example.org',
      'b_1@example.org',
      'twice@example.org',
      'Ann@Example.org',
    ]);
    // "_" and "%" are plain characters, not wildcards.
    expect((await newsletter.list({ page: 1, limit: 10, q: 'B_' })).items.map((item) => item.email)).toEqual(['b_1@example.org']);
    expect((await newsletter.list({ page: 1, limit: 1, status: 'subscribed' })).total).toBe(3);
    const csv = await newsletter.exportCsv({ actor: 'mod' });
    expect(csv.split('\r\n').slice(0, 4)).toEqual([
      'email,status,subscribed_at',
      'Ann@Example.org,subscribed,2025-06-01T09:01:00.000Z',
      expect.stringMatching(/^b_1@example\.org,subscribed,/),
      expect.stringMatching(/^b%2@example\.org,subscribed,/),
    ]);
    const entries = await audit.list({ page: 1, limit: 5, action: 'newsletter.export' });
    expect(entries.items.map((entry) => [entry.actor, entry.after])).toEqual([['mod', { rows: 3, subscribed: 3 }]]);
  });

  it('unsubscribes with the link of any newsletter mail, again and again', async () => {
    const unsubscribe = await tokenFromOutbox('b_1@example.org', 'unsubscribe');
    expect(await newsletter.unsubscribe(unsubscribe)).toEqual({ email: 'b_1@example.org', status: 'unsubscribed' });
    expect(await newsletter.unsubscribe(unsubscribe)).toEqual({ email: 'b_1@example.org', status: 'unsubscribed' });
    expect(await newsletter.counts()).toEqual({ pending: 1, subscribed: 2, unsubscribed: 1 });
    await expect(newsletter.unsubscribe('made-up')).rejects.toMatchObject({ code: 'invalid_token' });
  });
});
