import { desc, like, sql } from 'drizzle-orm';
import { insertionOrder } from '../../src-api/db/dialect-sql';
import type { Store } from '../../src-api/db/store';
import type { NewsletterService } from '../../src-api/modules/newsletter/newsletter.service';

/**
 * The token of a link in the newest newsletter mail to `email`, read from the
 * mail outbox: only the mail holds the raw token (the database keeps its hash).
 * For tests that need confirmed subscribers without a mail server.
 */
export async function newsletterTokenFromOutbox(store: Store, email: string, link: 'confirm' | 'unsubscribe'): Promise<string> {
  const { mailOutbox } = store.t;
  const row = await store.first(
    store.db
      .select({ text: mailOutbox.text })
      .from(mailOutbox)
      .where(sql`lower(${mailOutbox.to}) = lower(${email.trim()}) AND ${like(mailOutbox.kind, 'newsletter.%')}`)
      .orderBy(desc(mailOutbox.createdAt), desc(insertionOrder(store, mailOutbox)))
      .limit(1),
  );
  if (!row) throw new Error(`no newsletter mail to ${email} in the outbox`);
  const token = new RegExp(`/dashboard/newsletter/${link}\\?token=([A-Za-z0-9_-]+)`).exec(row.text)?.[1];
  if (!token) throw new Error(`the newest newsletter mail to ${email} has no ${link} link`);
  return token;
}

/** Signs `email` up and follows the confirmation link from the outbox, as its owner would. */
export async function subscribeConfirmed(store: Store, newsletter: NewsletterService, email: string): Promise<void> {
  await newsletter.requestSubscription(email);
  await newsletter.confirm(await newsletterTokenFromOutbox(store, email, 'confirm'));
}
