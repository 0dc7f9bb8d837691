import type { PublicUrl } from '../../lib/public-url';
import type { QueueMailInput } from '../mail/mail.service';
import type { AccountRow } from './accounts.table';

/**
 * The mails of the account flows. Links point at the developer dashboard's
 * pages, which read the token from the query and call the REST API.
 */
export const DASHBOARD_PATHS = {
  verifyEmail: '/dashboard/verify-email',
  resetPassword: '/dashboard/reset-password',
  signIn: '/dashboard/sign-in',
  forgotPassword: '/dashboard/forgot-password',
} as const;

type Recipient = Pick<AccountRow, 'email' | 'name'>;

export function accountMails(publicUrl: PublicUrl) {
  return {
    verify(account: Recipient, token: string): QueueMailInput {
      return {
        kind: 'account.verify',
        to: account.email,
        subject: 'Confirm your e-mail address for Agent Directory',
        paragraphs: [
          `Hello ${account.name},`,
          'Confirm this address to finish creating your Agent Directory account. The link works once, for 24 hours.',
        ],
        action: { label: 'Confirm my address', url: publicUrl.link(DASHBOARD_PATHS.verifyEmail, { token }) },
        footer: ['If you did not sign up, ignore this mail: no account is created without this confirmation.'],
      };
    },

    alreadyRegistered(account: Recipient): QueueMailInput {
      return {
        kind: 'account.exists',
        to: account.email,
        subject: 'You already have an Agent Directory account',
        paragraphs: [
          `Hello ${account.name},`,
          'Someone (perhaps you) tried to sign up for Agent Directory with this address. You already have an account, so nothing was changed.',
          `Sign in at ${publicUrl.link(DASHBOARD_PATHS.signIn)}, or reset your password if you have forgotten it.`,
        ],
        action: { label: 'Reset my password', url: publicUrl.link(DASHBOARD_PATHS.forgotPassword) },
        footer: ['If it was not you, you can ignore this mail.'],
      };
    },

    passwordReset(account: Recipient, token: string): QueueMailInput {
      return {
        kind: 'account.password_reset',
        to: account.email,
        subject: 'Reset your Agent Directory password',
        paragraphs: [
          `Hello ${account.name},`,
          'Choose a new password with the link below. It works once, for one hour; setting a new password signs you out everywhere.',
        ],
        action: { label: 'Choose a new password', url: publicUrl.link(DASHBOARD_PATHS.resetPassword, { token }) },
        footer: ['If you did not ask for this, ignore this mail: your password stays as it is.'],
      };
    },

    setPasswordUrl(token: string): string {
      return publicUrl.link(DASHBOARD_PATHS.resetPassword, { token });
    },
  };
}
