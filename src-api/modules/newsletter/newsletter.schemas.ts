import { z } from 'zod';
import { emailSchema, pageQuerySchema } from '../../lib/schemas';

export const SUBSCRIPTION_STATUSES = ['subscribed', 'unsubscribed'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const newsletterInputSchema = z.strictObject({
  email: emailSchema.describe('The address to subscribe; compared case-insensitively, so each address is subscribed once'),
});

export const subscriptionSchema = z
  .object({
    email: z.string().describe('The address as it was first subscribed'),
    status: z.enum(SUBSCRIPTION_STATUSES),
  })
  .meta({ id: 'NewsletterSubscription' });
export type Subscription = z.infer<typeof subscriptionSchema>;

/** The console's view of a subscriber. */
export interface Subscriber {
  id: string;
  email: string;
  status: SubscriptionStatus;
  created_at: string;
}

export const listSubscribersQuerySchema = pageQuerySchema.extend({
  /** Part of the address, case-insensitive. */
  q: z.string().trim().max(254).optional(),
});
export type ListSubscribersQuery = z.infer<typeof listSubscribersQuerySchema>;
