import { z } from 'zod';
import { isoDateTimeSchema, pageQuerySchema } from '../../lib/schemas';

export const MAX_REVIEW_COMMENT_LENGTH = 2_000;
export const MAX_REVIEWER_NAME_LENGTH = 100;

/** Optional free text: null and blank both mean "not given". */
function optionalText(maxLength: number, description: string) {
  return z
    .string()
    .trim()
    .max(maxLength)
    .nullish()
    .transform((value) => (value ? value : null))
    .describe(description);
}

export const reviewInputSchema = z.strictObject({
  rating: z.number().int().min(1).max(5).describe('Whole stars, 1 to 5'),
  comment: optionalText(MAX_REVIEW_COMMENT_LENGTH, `Optional, at most ${MAX_REVIEW_COMMENT_LENGTH} characters`),
  reviewer_name: optionalText(MAX_REVIEWER_NAME_LENGTH, `Optional, at most ${MAX_REVIEWER_NAME_LENGTH} characters`),
});
export type ReviewInput = z.infer<typeof reviewInputSchema>;

export const reviewReplySchema = z
  .object({
    body: z.string(),
    created_at: isoDateTimeSchema,
    updated_at: isoDateTimeSchema,
  })
  .meta({ id: 'ReviewReply', description: "The agent owner's answer to a review" });
export type ReviewReply = z.infer<typeof reviewReplySchema>;

export const reviewSchema = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    rating: z.number().int().min(1).max(5),
    comment: z.string().nullable(),
    reviewer_name: z.string().nullable(),
    verified_reviewer: z.boolean().describe('Written by a signed-in account (with a verified e-mail address)'),
    created_at: isoDateTimeSchema,
    reply: reviewReplySchema.nullable().describe("The agent owner's answer, null when there is none"),
  })
  .meta({ id: 'Review' });
export type Review = z.infer<typeof reviewSchema>;

export const reviewListQuerySchema = pageQuerySchema;

/** Console: the latest reviews across agents; `hidden` narrows to hidden or visible ones. */
export const listRecentReviewsQuerySchema = pageQuerySchema.extend({ hidden: z.boolean().optional() });
export type ListRecentReviewsQuery = z.infer<typeof listRecentReviewsQuerySchema>;

export const reviewListSchema = z.object({
  reviews: z.array(reviewSchema),
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
});

/** The console's view: hidden reviews too, flagged, with the agent's name for context. */
export interface ModeratedReview extends Review {
  hidden: boolean;
  agent_name: string;
}
