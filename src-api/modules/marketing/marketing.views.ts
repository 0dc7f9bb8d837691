import { z } from 'zod';
import { ValidationError } from '../../errors';
import { conversionRate, evaluateAbTest, wilsonInterval } from './ab-test-stats';
import type { AbTestResult, AdminMarketingPost, Channel, MarketingPost, Tone } from './marketing.schemas';
import type { AbTestRow, AbTestVariantRow, MarketingPostRow } from './marketing.table';

/** The marketing rows as the API and the console show them, and the input check both writers use. */

export function toMarketingPost(row: MarketingPostRow): MarketingPost {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    tone: row.tone as Tone,
    status: row.status,
    channel: row.channel as Channel,
    ...(row.agentId !== null && { agent_id: row.agentId }),
    created_at: row.createdAt,
    ...(row.publishedAt !== null && { published_at: row.publishedAt }),
  };
}

export function toAdminMarketingPost(row: MarketingPostRow): AdminMarketingPost {
  return { ...toMarketingPost(row), version: row.version, source_event_id: row.sourceEventId, source_event_type: row.sourceEventType };
}

/** A test with its variants, evaluated: rates, Wilson intervals, p-value and winner (see ab-test-stats.ts). */
export function toAbTestResult(test: AbTestRow, variants: AbTestVariantRow[]): AbTestResult {
  const ordered = [...variants].sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  const evaluation = evaluateAbTest(ordered);
  return {
    id: test.id,
    name: test.name,
    status: test.status,
    created_at: test.createdAt,
    ...(test.completedAt !== null && { completed_at: test.completedAt }),
    variants: ordered.map((variant) => ({
      id: variant.id,
      label: variant.label,
      post_id: variant.postId,
      impressions: variant.impressions,
      conversions: variant.conversions,
      rate: conversionRate(variant),
      interval: wilsonInterval(variant),
    })),
    ...(evaluation.winner !== null && { winner: evaluation.winner }),
    ...(evaluation.pValue !== null && { p_value: evaluation.pValue }),
  };
}

export function parseOrThrow<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const errors = result.error.issues.map((issue) => ({
    pointer: `/${issue.path.join('/')}`,
    detail: issue.message,
  }));
  throw new ValidationError(`Invalid input: ${errors.map((e) => `${e.pointer} ${e.detail}`).join('; ')}`, errors);
}
