import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { createAuditService, type AuditService } from '../../src-api/modules/audit/audit.service';
import type { AuditRow } from '../../src-api/modules/audit/audit.table';
import { NotFoundError } from '../../src-api/errors';
import { bothStores } from '../helpers/both-stores';

/**
 * The audit log's reads (list with its filters, get, facets), ported to the
 * data-access seam, on SQLite and on PostgreSQL: the same entries written
 * through the store read back the same on both (test/api/audit-admin.test.ts
 * covers the tRPC side on SQLite).
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const entry = (id: string, createdAt: string, fields: Partial<AuditRow> = {}): AuditRow => ({
  id,
  actor: 'mod',
  action: 'agent.update',
  entityType: 'agent',
  entityId: 'agt_one',
  before: null,
  after: null,
  createdAt,
  ...fields,
});

describe.each(stores.dialects)('audit reads on $dialect', ({ open }) => {
  let store: Store;
  let audit: AuditService;
  const ids = (rows: AuditRow[]) => rows.map((row) => row.id);

  beforeAll(async () => {
    store = await open();
    audit = createAuditService({
      store,
      clock: { now: () => new Date('2025-01-04T00:00:00.000Z') },
      ids: { next: () => 'aud_unused', agent: () => 'agt_unused' },
    });
    await store.run(
      store.db.insert(store.t.auditLog).values([
        entry('aud_1', '2025-01-01T09:00:00.000Z', {
          before: { name: 'Old “name” 🚀' },
          after: { name: 'New', tags: ['a', 1, true, null] },
        }),
        entry('aud_2', '2025-01-02T09:00:00.000Z', {
          actor: 'alice',
          action: 'key.create',
          entityType: 'api_key',
          entityId: 'key_A_b%c',
        }),
        entry('aud_3', '2025-01-03T09:00:00.000Z', { actor: 'Zed', action: 'review.hide', entityType: 'review', entityId: 'rev_x' }),
        entry('aud_4', '2025-01-03T09:00:00.000Z', { actor: 'bob', action: 'review.show', entityType: 'review', entityId: 'rev_x' }),
      ]),
    );
  }, 180_000);

  it('lists newest first with the total, a page at a time', async () => {
    const all = await audit.list({ page: 1, limit: 10 });
    expect(all.total).toBe(4);
    expect(ids(all.items).slice(2)).toEqual(['aud_2', 'aud_1']);
    // Two entries of one millisecond: the order is stable (SQLite: insertion order; PostgreSQL: by id).
    expect(ids(all.items).slice(0, 2).sort()).toEqual(['aud_3', 'aud_4']);
    const pages = [...(await audit.list({ page: 1, limit: 3 })).items, ...(await audit.list({ page: 2, limit: 3 })).items];
    expect(ids(pages)).toEqual(ids(all.items));
    expect(await audit.list({ page: 3, limit: 3 })).toEqual({ items: [], page: 3, limit: 3, total: 4 });
  });

  it('keeps JSON before/after values as written', async () => {
    expect(await audit.get('aud_1')).toEqual(
      entry('aud_1', '2025-01-01T09:00:00.000Z', { before: { name: 'Old “name” 🚀' }, after: { name: 'New', tags: ['a', 1, true, null] } }),
    );
    await expect(audit.get('aud_missing')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('narrows by actor, action, entity, id substring and time range', async () => {
    const list = async (query: Omit<Parameters<AuditService['list']>[0], 'page' | 'limit'>) =>
      ids((await audit.list({ page: 1, limit: 10, ...query })).items);
    expect(await list({ entityType: 'review', entityId: 'rev_x', actor: 'bob' })).toEqual(['aud_4']);
    expect(await list({ action: 'key.create' })).toEqual(['aud_2']);
    // Case-insensitive, and "%" / "_" are plain characters, not wildcards.
    expect(await list({ q: 'A_B%' })).toEqual(['aud_2']);
    expect(await list({ q: 'a%b' })).toEqual([]);
    expect(await list({ from: '2025-01-02T09:00:00.000Z', to: '2025-01-03T09:00:00.000Z' })).toEqual(['aud_2']);
    expect((await audit.list({ page: 1, limit: 10, entityType: 'review' })).total).toBe(2);
  });

  it('lists the actors, actions and entity types in byte order', async () => {
    expect(await audit.facets()).toEqual({
      actors: ['Zed', 'alice', 'bob', 'mod'],
      actions: ['agent.update', 'key.create', 'review.hide', 'review.show'],
      entityTypes: ['agent', 'api_key', 'review'],
    });
  });
});
