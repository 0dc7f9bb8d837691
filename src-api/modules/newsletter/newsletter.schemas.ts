import { z } from 'zod';
import { emailSchema, pageQuerySchema } from '../../lib/schemas';
import type { SubscriberStatus } from './newsletter.table';

export const SUBSCRIBER_STATUSES = ['pending', 'subscribed', 'unsubscribed'] as const satisfies readonly SubscriberStatus[];
export type { SubscriberStatus };

export const newsletterInputSchema = z.strictObject({
  email: emailSchema.describe('The address to subscribe; compared case-insensitively, so each address is on the list once'),
});

/** The one answer to a sign-up, whatever the address's state: nobody learns who is subscribed. */
export const confirmationSentSchema = z
  .object({
    email: z.string().describe('The address as sent in this request (trimmed), never a stored spelling'),
    status: z.literal('confirmation_sent'),
  })
  .meta({ id: 'NewsletterSignUp' });
export type ConfirmationSent = z.infer<typeof confirmationSentSchema>;

export const newsletterTokenInputSchema = z.strictObject({
  token: z.string().min(1).max(200).describe('The token from the link in a newsletter mail'),
});

export const subscriptionSchema = z
  .object({
    email: z.string().describe('The subscribed address'),
    status: z.enum(['subscribed', 'unsubscribed']),
  })
  .meta({ id: 'NewsletterSubscription' });
export type Subscription = z.infer<typeof subscriptionSchema>;

/** RFC 8058: the body a mail client POSTs to the List-Unsubscribe URL. */
export const oneClickBodySchema = z.object({
  'List-Unsubscribe': z.literal('One-Click').describe('Always "One-Click" (RFC 8058)'),
});
export const oneClickQuerySchema = z.object({
  token: z.string().min(1).max(200).describe('The token of the List-Unsubscribe URL'),
});

/** The console's view of a subscriber. */
export interface Subscriber {
  id: string;
  email: string;
  status: SubscriberStatus;
  created_at: string;
  confirmed_at: string | null;
}

export const listSubscribersQuerySchema = pageQuerySchema.extend({
  /** Part of the address, case-insensitive. */
  q: z.string().trim().max(254).optional(),
  /** Only subscribers in this state; all of them when absent. */
  status: z.enum(SUBSCRIBER_STATUSES).optional(),
});
export type ListSubscribersQuery = z.infer<typeof listSubscribersQuerySchema>;
