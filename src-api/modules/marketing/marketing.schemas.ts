import { z } from 'zod';
import { idParamSchema, isoDateTimeSchema, pageQuerySchema } from '../../lib/schemas';
import { CHANNELS, TONES } from './marketing.generator';

export { CHANNELS, TONES, type Channel, type Tone } from './marketing.generator';

export const POST_STATUSES = ['draft', 'scheduled', 'published', 'archived'] as const;
export const AB_TEST_STATUSES = ['running', 'completed'] as const;

/** How many UTC days `by_day` covers, today included. */
export const METRICS_WINDOW_DAYS = 30;

export const toneSchema = z.enum(TONES);
export const channelSchema = z.enum(CHANNELS);
export const postStatusSchema = z.enum(POST_STATUSES);

export const listPostsQuerySchema = pageQuerySchema.extend({
  status: postStatusSchema.optional(),
  tone: toneSchema.optional(),
  channel: channelSchema.optional(),
  agent_id: idParamSchema.optional(),
});
export type ListPostsQuery = z.infer<typeof listPostsQuerySchema>;

/** What the public API lists: drafts and scheduled posts stay in the console. */
export const PUBLIC_POST_STATUSES = ['published', 'archived'] as const;
export const publicListPostsQuerySchema = listPostsQuerySchema.extend({
  status: z.enum(PUBLIC_POST_STATUSES).optional(),
});

export const marketingPostSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    body: z.string(),
    tone: toneSchema,
    status: postStatusSchema,
    channel: channelSchema,
    agent_id: z.string().optional().describe('The agent the post is about; absent for posts about no single agent'),
    created_at: isoDateTimeSchema,
    published_at: isoDateTimeSchema.optional().describe('Present once the post has been published'),
  })
  .meta({ id: 'MarketingPost', description: 'A post generated from a directory event (several tones per event)' });
export type MarketingPost = z.infer<typeof marketingPostSchema>;

export const postListSchema = z.object({
  posts: z.array(marketingPostSchema),
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
});

export const intervalSchema = z
  .object({ low: z.number(), high: z.number() })
  .describe('95 % Wilson score interval of the conversion rate; [0, 1] before any impression');

export const abVariantSchema = z.object({
  id: z.string(),
  label: z.string(),
  post_id: z.string(),
  impressions: z.number().int(),
  conversions: z.number().int(),
  rate: z.number().describe('conversions / impressions (0 before any impression)'),
  interval: intervalSchema,
});

export const abTestSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    status: z.enum(AB_TEST_STATUSES),
    created_at: isoDateTimeSchema,
    completed_at: isoDateTimeSchema.optional(),
    variants: z.array(abVariantSchema),
    winner: z
      .string()
      .optional()
      .describe(
        'Label of the variant with the higher rate, present only when p_value < 0.05 and every variant has at least 30 impressions',
      ),
    p_value: z
      .number()
      .optional()
      .describe('Two-sided p-value of a pooled two-proportion z-test; present once both variants have impressions'),
  })
  .meta({ id: 'AbTest', description: 'An A/B test between two posts, with results computed from stored counts' });
export type AbTestResult = z.infer<typeof abTestSchema>;

export const listAbTestsQuerySchema = pageQuerySchema.extend({
  status: z.enum(AB_TEST_STATUSES).optional(),
});
export type ListAbTestsQuery = z.infer<typeof listAbTestsQuerySchema>;

export const abTestListSchema = z.object({
  ab_tests: z.array(abTestSchema),
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
});

export const marketingMetricsSchema = z
  .object({
    tone_distribution: z.record(z.string(), z.number().int()).describe('Posts per tone, every tone listed'),
    channel_distribution: z.record(z.string(), z.number().int()).describe('Posts per channel, every channel listed'),
    publish_counts: z.object({
      total: z.number().int().describe('All posts, whatever their status'),
      by_status: z.record(z.string(), z.number().int()).describe('Posts per status, every status listed; sums to total'),
      by_day: z
        .array(z.object({ date: z.string().describe('UTC day, YYYY-MM-DD'), count: z.number().int() }))
        .describe(`Posts published on each of the last ${METRICS_WINDOW_DAYS} UTC days (today included), oldest first, zeros included`),
    }),
  })
  .meta({ id: 'MarketingMetrics' });
export type MarketingMetrics = z.infer<typeof marketingMetricsSchema>;

/** What a moderator may change on a post. */
export const postPatchSchema = z.strictObject({
  title: z.string().trim().min(1).max(200).optional(),
  body: z.string().trim().min(1).max(20_000).optional(),
  tone: toneSchema.optional(),
  channel: channelSchema.optional(),
});
export type PostPatch = z.infer<typeof postPatchSchema>;

/** Counts to add to a variant (from the channel's analytics). */
export const abResultSchema = z.strictObject({
  impressions: z.number().int().min(0).max(1_000_000_000),
  conversions: z.number().int().min(0).max(1_000_000_000),
});
export type AbResult = z.infer<typeof abResultSchema>;

/** The console's view of a post: the public fields plus moderation ones. */
export interface AdminMarketingPost extends MarketingPost {
  version: number;
  source_event_id: string | null;
  source_event_type: string | null;
}
