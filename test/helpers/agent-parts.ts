import type { Store } from '../../src-api/db/store';
import { systemClock, type Clock } from '../../src-api/lib/clock';
import { createIdGenerator, type IdGenerator } from '../../src-api/lib/ids';
import { createAgentEdits } from '../../src-api/modules/agents/agent-edits';
import { createAgentReads } from '../../src-api/modules/agents/agent-reads';
import { createAgentWrites } from '../../src-api/modules/agents/agent-writes';
import type { AgentsService } from '../../src-api/modules/agents/agents.service';
import { createAuditService } from '../../src-api/modules/audit/audit.service';
import { createEventsService } from '../../src-api/modules/events/events.service';

/**
 * The agents' parts on one Store, wired as services.ts wires them (events, audit, reads,
 * the write path and the edits), for the test/postgres suites of modules that write agents:
 * createServices still needs SQLite's Db, so on PostgreSQL they are built here. `agents` is
 * the AgentsService face those modules use (findRowAsync and edits).
 */
export function agentParts(store: Store, { clock = systemClock, ids = createIdGenerator() }: { clock?: Clock; ids?: IdGenerator } = {}) {
  // SQLite's Db for the write path's prepared statements; none on PostgreSQL.
  const db = store.dialect === 'sqlite' ? store.db : undefined;
  const events = createEventsService({ store, clock, ids });
  const audit = createAuditService({ store, clock, ids });
  const reads = createAgentReads({ store, profileCacheEntries: 100 });
  const writes = createAgentWrites({ db, store, clock, events, onCommitted: () => reads.changed() });
  const edits = createAgentEdits({ store, writes, audit, clock, ids });
  const agents = { findRowAsync: reads.findRowAsync, edits } as unknown as AgentsService;
  return { db, events, audit, reads, writes, edits, agents };
}
