import type { Db } from '../../src-api/db/client';
import type { Store } from '../../src-api/db/store';
import type { Clock } from '../../src-api/lib/clock';
import type { IdGenerator } from '../../src-api/lib/ids';
import { createAgentsService } from '../../src-api/modules/agents/agents.service';
import { createAgentWrites } from '../../src-api/modules/agents/agent-writes';
import { createAuditService } from '../../src-api/modules/audit/audit.service';
import { createEventsService } from '../../src-api/modules/events/events.service';
import { createReportsService } from '../../src-api/modules/reports/reports.service';
import { createReviewsService } from '../../src-api/modules/reviews/reviews.service';
import { createSubmissionsService } from '../../src-api/modules/submissions/submissions.service';

/**
 * The agents, reviews, submissions and reports services wired on one store, as createServices
 * wires them, for the suites that run them on SQLite and PostgreSQL (test/helpers/both-stores.ts).
 * The SQLite Db (prepared statements, sync reads) is the store's own connection; none on PostgreSQL.
 */
export function storeServices(store: Store, { clock, quotas = false }: { clock: Clock; quotas?: boolean }) {
  let counter = 0;
  const ids: IdGenerator = {
    next: (prefix: string) => `${prefix}_${String(++counter).padStart(5, '0')}`,
    agent: (name: string) => `agt_${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}_${++counter}`,
  } as IdGenerator;
  const db = (store.dialect === 'sqlite' ? store.db : undefined) as Db;
  const base = { db, store, clock, ids };
  const events = createEventsService(base);
  const audit = createAuditService(base);
  const writes = createAgentWrites({ db, store, clock, events, onCommitted: () => agents.changed() });
  const agents = createAgentsService({ ...base, audit, writes, profileCacheEntries: 1000 });
  const reviews = createReviewsService({ ...base, agents, events, audit, quota: { enabled: quotas, windowMs: 24 * 60 * 60 * 1000 } });
  const submissions = createSubmissionsService({ ...base, agents, audit, quotas });
  const reports = createReportsService({ ...base, agents, audit, quotas });
  return { ids, events, audit, writes, agents, reviews, submissions, reports };
}
