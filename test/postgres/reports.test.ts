import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { NotFoundError, QuotaExceededError } from '../../src-api/errors';
import { createReportsService, type ReportsService } from '../../src-api/modules/reports/reports.service';
import { agentRow, bothStores } from '../helpers/both-stores';
import { agentParts } from '../helpers/agent-parts';

/**
 * Abuse reports on the data-access seam, on SQLite and PostgreSQL 15: filing
 * (listed agents only, one open report per agent and client, also when a client
 * sends eight at once), the queue with its filters, the counts and the per-agent
 * flags. test/api/lifecycle-reports.test.ts covers resolving and the HTTP and tRPC side on SQLite.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

describe.each(stores.dialects)('reports on $dialect', ({ open }) => {
  let store: Store;
  let reports: ReportsService;
  let now = new Date('2025-05-01T08:00:00.000Z');
  let counter = 0;

  beforeAll(async () => {
    store = await open();
    const { audit, agents } = agentParts(store);
    reports = createReportsService({
      store,
      clock: { now: () => now },
      ids: { next: (prefix: string) => `${prefix}_${String(++counter).padStart(4, '0')}`, agent: () => 'agt_unused' },
      agents,
      audit,
      quotas: true,
    });
    await store.run(
      store.db
        .insert(store.t.agents)
        .values([
          agentRow({ id: 'agt_one', name: 'One “1”', sourceUrlKey: 'example.org/one', changeSeq: 1 }),
          agentRow({ id: 'agt_two', name: 'Two', sourceUrlKey: 'example.org/two', changeSeq: 2 }),
          agentRow({ id: 'agt_off', name: 'Off', sourceUrlKey: 'example.org/off', listed: false, changeSeq: 3 }),
        ]),
    );
  }, 180_000);

  const file = (agentId: string, clientKey: string, details?: string) => {
    now = new Date(now.getTime() + 60_000);
    return reports.create(agentId, { reason: 'spam', details, contact_email: undefined }, { clientKey });
  };

  it('files reports on listed agents, one open report per agent and client', async () => {
    const first = await file('agt_one', '10.0.0.1', '  copies another agent 🚀  ');
    expect(first).toEqual({ id: first.id, agent_id: 'agt_one', reason: 'spam', status: 'open', created_at: now.toISOString() });
    await expect(file('agt_one', '10.0.0.1')).rejects.toBeInstanceOf(QuotaExceededError);
    await file('agt_one', '10.0.0.2');
    await file('agt_two', '10.0.0.1');
    await expect(file('agt_off', '10.0.0.1')).rejects.toBeInstanceOf(NotFoundError);
    await expect(file('agt_none', '10.0.0.1')).rejects.toBeInstanceOf(NotFoundError);
    const stored = await store.first(store.db.select().from(store.t.reports).where(eq(store.t.reports.id, first.id)));
    expect(stored).toMatchObject({ details: 'copies another agent 🚀', clientKey: '10.0.0.1', status: 'open', version: 1 });
  });

  it('eight reports of one client on one agent at the same moment: one is filed, the others refused', async () => {
    await store.run(
      store.db.insert(store.t.agents).values(agentRow({ id: 'agt_race', name: 'Race', sourceUrlKey: 'example.org/race', changeSeq: 4 })),
    );
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => file('agt_race', '10.0.0.9')));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    expect(refused).toHaveLength(7);
    expect(refused.every((reason) => reason instanceof QuotaExceededError)).toBe(true);
    const filed = await store.rows(store.db.select().from(store.t.reports).where(eq(store.t.reports.agentId, 'agt_race')));
    expect(filed).toHaveLength(1);
    await store.run(store.db.delete(store.t.reports).where(eq(store.t.reports.agentId, 'agt_race')));
    await store.run(store.db.delete(store.t.agents).where(eq(store.t.agents.id, 'agt_race')));
  });

  it('lists the queue newest first with agent names, filtered and paged, and counts it', async () => {
    const page = await reports.list({ page: 1, limit: 2 });
    expect(page.total).toBe(3);
    expect(page.items.map((item) => [item.agent_id, item.agent_name, item.agent_listed])).toEqual([
      ['agt_two', 'Two', true],
      ['agt_one', 'One “1”', true],
    ]);
    expect((await reports.list({ page: 2, limit: 2 })).items.map((item) => item.details)).toEqual(['copies another agent 🚀']);
    expect((await reports.list({ page: 1, limit: 10, agent_id: 'agt_two' })).items).toHaveLength(1);
    expect((await reports.list({ page: 1, limit: 10, status: 'dismissed' })).total).toBe(0);
    expect(await reports.countByStatus()).toEqual({ open: 3, dismissed: 0, resolved: 0 });
    expect(await reports.openCounts(['agt_one', 'agt_two', 'agt_off'])).toEqual({ agt_one: 2, agt_two: 1 });
    expect(await reports.openCounts([])).toEqual({});
  });

  it('takes a new report from a client once its last one is no longer open', async () => {
    const { reports: table } = store.t;
    await store.run(store.db.update(table).set({ status: 'dismissed' }).where(eq(table.agentId, 'agt_two')));
    await file('agt_two', '10.0.0.1');
    expect(await reports.countByStatus()).toEqual({ open: 3, dismissed: 1, resolved: 0 });
  });
});
