import type { PublicUrl } from '../../lib/public-url';
import type { MailContent } from '../mail/mail-templates';
import type { QueueMailInput } from '../mail/mail.service';

/**
 * Where newsletter links lead. People open the dashboard's pages, which read
 * the token and call the REST API (a GET that changed state would be
 * triggered by every link scanner); mail clients POST to the one-click URL
 * (RFC 8058), which the REST API serves itself.
 */
export const NEWSLETTER_PATHS = {
  confirm: '/dashboard/newsletter/confirm',
  unsubscribe: '/dashboard/newsletter/unsubscribe',
  /** The REST route of newsletter.routes.ts under /api/v1. */
  oneClickUnsubscribe: '/api/v1/newsletter/unsubscribe/one-click',
} as const;

/** How long the confirmation link works. */
export const CONFIRM_TTL_MS = 48 * 60 * 60_000;
/** Unsubscribe links keep working long after the mail was read, and any number of times. */
export const UNSUBSCRIBE_TTL_MS = 365 * 24 * 60 * 60_000;
/**
 * Sign-ups mail an address at most this many times an hour, whoever asks (the write limit is per
 * IP, so many IPs could otherwise flood one inbox); further requests get the same 202 and no mail.
 */
export const MAILS_PER_ADDRESS_PER_HOUR = 3;

export function newsletterMails(publicUrl: PublicUrl) {
  /**
   * Every newsletter mail goes through here, so none lacks the way out: an
   * unsubscribe link for people and the List-Unsubscribe headers for mail clients.
   */
  const newsletterMail = (to: string, unsubscribeToken: string, content: MailContent & { kind: string }): QueueMailInput => ({
    ...content,
    to,
    footer: [...(content.footer ?? []), `Unsubscribe: ${publicUrl.link(NEWSLETTER_PATHS.unsubscribe, { token: unsubscribeToken })}`],
    headers: {
      'List-Unsubscribe': `<${publicUrl.link(NEWSLETTER_PATHS.oneClickUnsubscribe, { token: unsubscribeToken })}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  });

  return {
    confirm(to: string, tokens: { confirm: string; unsubscribe: string }): QueueMailInput {
      return newsletterMail(to, tokens.unsubscribe, {
        kind: 'newsletter.confirm',
        subject: 'Confirm your subscription to the Agent Directory newsletter',
        paragraphs: [
          'Hello,',
          'Someone (we hope you) asked to receive the Agent Directory newsletter at this address. ' +
            'Confirm with the link below and you are on the list; it works once, for 48 hours.',
        ],
        action: { label: 'Confirm my subscription', url: publicUrl.link(NEWSLETTER_PATHS.confirm, { token: tokens.confirm }) },
        footer: ['If you did not ask for it, ignore this mail: nothing is sent to you without this confirmation.'],
      });
    },

    alreadySubscribed(to: string, unsubscribeToken: string): QueueMailInput {
      return newsletterMail(to, unsubscribeToken, {
        kind: 'newsletter.already_subscribed',
        subject: 'You are already subscribed to the Agent Directory newsletter',
        paragraphs: [
          'Hello,',
          'Someone (perhaps you) asked to subscribe this address to the Agent Directory newsletter. ' +
            'It is on the list already, so nothing was changed.',
        ],
        footer: ['If you would rather not receive the newsletter, use the link below.'],
      });
    },
  };
}
