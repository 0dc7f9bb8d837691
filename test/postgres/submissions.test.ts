import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { ConflictError, NotFoundError, QuotaExceededError, StaleVersionError } from '../../src-api/errors';
import type { AgentsService } from '../../src-api/modules/agents/agents.service';
import { createAuditService } from '../../src-api/modules/audit/audit.service';
import type { SubmissionInput } from '../../src-api/modules/submissions/submissions.schemas';
import { createSubmissionsService, type SubmissionsService } from '../../src-api/modules/submissions/submissions.service';
import { agentRow, bothStores } from '../helpers/both-stores';

/**
 * Submissions on the data-access seam, on SQLite and on PostgreSQL: filing with its
 * quota and duplicate checks, the console's list, counts, corrections, rejections and
 * duplicate hints (test/api/submissions*.test.ts cover HTTP, tRPC and approval on SQLite;
 * approval waits for the agents' writes to be ported).
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

const T = (second: number) => `2025-04-01T10:00:${String(second).padStart(2, '0')}.000Z`;

describe.each(stores.dialects)('submissions on $dialect', ({ open }) => {
  let store: Store;
  let submissions: SubmissionsService;
  let now = new Date(T(0));
  let counter = 0;

  const input = (name: string, source: string, fields: Partial<SubmissionInput> = {}): SubmissionInput => ({
    name,
    tagline: `The tagline of ${name}`,
    source_url: source,
    description: '',
    author: 'Author',
    capabilities: ['search'],
    categories: [],
    type: 'other',
    ...fields,
  });

  beforeAll(async () => {
    store = await open();
    const clock = { now: () => now };
    const ids = { next: (prefix: string) => `${prefix}_${String(++counter).padStart(4, '0')}`, agent: () => 'agt_unused' };
    // The agents' source lookup is still a sync read on SQLite's Db: a stand-in knowing the one listed source.
    const agents = {
      findBySourceUrl: (url: string) => (url === 'https://listed.example/' ? { id: 'agt_listed', name: 'Listed' } : undefined),
    } as unknown as AgentsService;
    submissions = createSubmissionsService({
      store,
      clock,
      ids,
      agents,
      audit: createAuditService({ store, clock, ids }),
      quotas: true,
    });
    await store.run(
      store.db.insert(store.t.agents).values(
        agentRow({
          id: 'agt_dup',
          name: 'Weather Agent',
          sourceUrl: 'https://github.com/acme/weather',
          sourceUrlKey: 'github.com/acme/weather',
        }),
      ),
    );
  }, 180_000);

  it('files submissions, refusing a listed source, a pending duplicate and a sixth waiting one of a client', async () => {
    now = new Date(T(1));
    const first = await submissions.submit(input('Weather Bot', 'https://github.com/acme/weather-bot'), null, 'client-a');
    expect(first).toMatchObject({ status: 'pending', name: 'Weather Bot', created_at: T(1) });
    await expect(submissions.submit(input('Again', 'https://GITHUB.com/acme/weather-bot'), null, 'client-b')).rejects.toThrow(
      ConflictError,
    );
    await expect(submissions.submit(input('Listed', 'https://listed.example/'), null, 'client-b')).rejects.toThrow(ConflictError);
    for (let i = 2; i <= 5; i++) await submissions.submit(input(`Quota ${i}`, `https://quota.example/${i}`), null, 'client-a');
    await expect(submissions.submit(input('Quota 6', 'https://quota.example/6'), null, 'client-a')).rejects.toThrow(QuotaExceededError);
    expect(await submissions.countPending()).toBe(5);
  });

  it('lists newest first (the same instant in filing order), by part of name, tagline or source, case-insensitively and literally', async () => {
    now = new Date(T(2));
    const a = await submissions.submit(input('100% Literal', 'https://literal.example/a'));
    const b = await submissions.submit(input('Tie Two', 'https://literal.example/b', { tagline: 'Mentions 100% too' }));
    const ids = async (q?: string) => (await submissions.list({ page: 1, limit: 100, ...(q && { q }) })).items.map((item) => item.id);
    expect((await ids()).slice(0, 2)).toEqual([b.id, a.id]);
    expect(await ids('100%')).toEqual([b.id, a.id]);
    expect(await ids('10_')).toEqual([]);
    expect(await ids('LITERAL.EXAMPLE/A')).toEqual([a.id]);
    const page = await submissions.list({ page: 2, limit: 1, q: 'literal' });
    expect(page).toMatchObject({ page: 2, limit: 1, total: 2 });
    expect(page.items.map((item) => item.id)).toEqual([a.id]);
  });

  it('corrects, rejects (singly and in bulk) and counts, with versions and audit entries', async () => {
    now = new Date(T(3));
    const sub = await submissions.submit(input('Draft', 'https://draft.example/'));
    const corrected = await submissions.update(sub.id, { name: 'Draft, corrected' }, { actor: 'mod', expectedVersion: 1 });
    expect(corrected).toMatchObject({ name: 'Draft, corrected', version: 2 });
    await expect(submissions.reject(sub.id, 'No', { actor: 'mod', expectedVersion: 1 })).rejects.toThrow(StaleVersionError);
    expect(await submissions.reject(sub.id, 'Not an agent', { actor: 'mod', expectedVersion: 2 })).toMatchObject({
      status: 'rejected',
      reason: 'Not an agent',
      decided_by: 'mod',
      version: 3,
    });
    await expect(submissions.reject(sub.id, 'Again', { actor: 'mod' })).rejects.toThrow(ConflictError);
    const other = await submissions.submit(input('Other', 'https://other.example/'));
    const results = await submissions.bulkReject([other.id, sub.id, 'sub_missing'], 'Spam', 'mod');
    expect(results.map((result) => [result.id, result.ok])).toEqual([
      [other.id, true],
      [sub.id, false],
      ['sub_missing', false],
    ]);
    expect(await submissions.getPublic(other.id)).toMatchObject({ status: 'rejected', reason: 'Spam' });
    expect((await submissions.get(other.id)).decided_by).toBe('mod');
    await expect(submissions.get('sub_missing')).rejects.toThrow(NotFoundError);
    const counts = await submissions.countByStatus();
    expect(counts.rejected).toBe(2);
    expect(counts.approved).toBe(0);
    const { auditLog } = store.t;
    const actions = (await store.rows(store.db.select({ action: auditLog.action, entityId: auditLog.entityId }).from(auditLog)))
      .filter((row) => row.entityId === sub.id)
      .map((row) => row.action);
    expect(actions).toEqual(['submission.update', 'submission.reject']);
  });

  it('hints at listed agents and submissions with a similar name or the same repository', async () => {
    now = new Date(T(4));
    const sub = await submissions.submit(input('Weather Agent Pro', 'https://github.com/acme/weather-pro'));
    const hints = await submissions.findDuplicates(sub.id);
    expect(hints.agents.map((hint) => [hint.id, hint.matches])).toEqual([['agt_dup', ['similar_name']]]);
    expect(hints.submissions.map((hint) => hint.name)).toContain('Weather Bot');
  });
});
