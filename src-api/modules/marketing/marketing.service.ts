import type { Store } from '../../db/store';
import type { Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { AuditService } from '../audit/audit.service';
import type { EventsService } from '../events/events.service';
import type { EventRow } from '../events/events.table';
import { createAbTests } from './marketing.ab-tests';
import { createMarketingDrafts } from './marketing.drafts';
import { marketingMetrics } from './marketing.metrics';
import { createMarketingPosts } from './marketing.posts';

export { toAbTestResult, toAdminMarketingPost, toMarketingPost } from './marketing.views';
export type { ModeratorOptions } from './marketing.posts';

export interface MarketingServiceDeps {
  /** Everything runs through the data-access seam, on SQLite and PostgreSQL alike. */
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  events: EventsService;
  audit: AuditService;
  /** Told when generating posts for an event fails; the directory write goes on regardless. */
  onGenerationError?: (error: unknown, event: EventRow) => void;
}

/**
 * Marketing: drafts generated from directory events (marketing.drafts.ts), the posts and their
 * moderation (marketing.posts.ts), A/B tests (marketing.ab-tests.ts) and the metrics
 * (marketing.metrics.ts). The drafts listen to the events outbox from here.
 */
export function createMarketingService({ store, clock, ids, events, audit, onGenerationError }: MarketingServiceDeps) {
  const drafts = createMarketingDrafts({ store, ids, onGenerationError });
  const service = {
    ...drafts,
    ...createMarketingPosts({ store, clock, audit }),
    ...createAbTests({ store, clock, audit }),
    metrics: () => marketingMetrics(store, clock),
  };

  events.addListener(async (event) => void (await drafts.handleEventInTransaction(event)));

  return service;
}

export type MarketingService = ReturnType<typeof createMarketingService>;
