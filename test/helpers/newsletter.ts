import type { Db } from '../../src-api/db/client';
import type { NewsletterService } from '../../src-api/modules/newsletter/newsletter.service';

/**
 * The token of a link in the newest newsletter mail to `email`, read from the
 * mail outbox: only the mail holds the raw token (the database keeps its hash).
 * For tests that need confirmed subscribers without a mail server.
 */
export function newsletterTokenFromOutbox(db: Db, email: string, link: 'confirm' | 'unsubscribe'): string {
  const row = db.$client
    .prepare(
      "SELECT text_body AS text FROM mail_outbox WHERE lower(to_address) = lower(?) AND kind LIKE 'newsletter.%' ORDER BY created_at DESC, rowid DESC LIMIT 1",
    )
    .get(email.trim()) as { text: string } | undefined;
  if (!row) throw new Error(`no newsletter mail to ${email} in the outbox`);
  const token = new RegExp(`/dashboard/newsletter/${link}\\?token=([A-Za-z0-9_-]+)`).exec(row.text)?.[1];
  if (!token) throw new Error(`the newest newsletter mail to ${email} has no ${link} link`);
  return token;
}

/** Signs `email` up and follows the confirmation link from the outbox, as its owner would. */
export async function subscribeConfirmed(db: Db, newsletter: NewsletterService, email: string): Promise<void> {
  await newsletter.requestSubscription(email);
  await newsletter.confirm(newsletterTokenFromOutbox(db, email, 'confirm'));
}
