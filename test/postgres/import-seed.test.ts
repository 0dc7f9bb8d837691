import { asc, count, eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { seedDemoDirectoryIfEmpty } from '../../src-api/demo/seed-demo';
import { systemClock } from '../../src-api/lib/clock';
import { createIdGenerator } from '../../src-api/lib/ids';
import { type AgentWrites } from '../../src-api/modules/agents/agent-writes';
import { importAgents, type ImportDeps } from '../../src-api/modules/agents/agents-import';
import { ImportRejectedError } from '../../src-api/modules/agents/import-records';
import { bothStores } from '../helpers/both-stores';
import { agentParts } from '../helpers/agent-parts';
import { gate } from '../helpers/gate';
import { plainAgentInput } from '../helpers/indexable-agent';
import { lockWaitOrSettled } from '../helpers/lock-wait';

/**
 * `cli import` and the demo seeder on the data-access seam, on SQLite and PostgreSQL 15:
 * both write agents through agent-writes.write (change_seq, trust score, events)
 * in one store transaction. test/cli covers the command and the import racing another
 * writer on SQLite; here two processes seeding one empty PostgreSQL database at once seed it once.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

function partsOf(store: Store): ImportDeps & { agentWrites: AgentWrites } {
  const ids = createIdGenerator();
  const { audit, writes } = agentParts(store, { ids });
  return { store, clock: systemClock, ids, audit, agentWrites: writes };
}

const record = (n: number, fields: Record<string, unknown> = {}) => ({
  value: { name: `Imported ${n}`, tagline: `Tagline ${n}`, source_url: `https://example.com/imported-${n}`, ...fields },
  line: n,
});

describe.each(stores.dialects)('import and demo seeding on $dialect', ({ dialect, open, openAgain }) => {
  it('imports new agents and updates, checks every record first, and audits the import', async () => {
    const store = await open();
    const deps = partsOf(store);
    const { agents, auditLog, events } = store.t;
    const first = await importAgents(deps, [record(1, { id: 'agt-one' }), record(2), record(3)], { actor: 'cli', source: 'a.jsonl' });
    expect(first).toEqual({ total: 3, created: 3, updated: 0, unchanged: 0 });
    const rows = await store.rows(store.db.select().from(agents).orderBy(asc(agents.changeSeq)));
    expect(rows.map((row) => row.changeSeq)).toEqual([1, 2, 3]);
    expect(rows[0]).toMatchObject({ id: 'agt-one', sourceUrlKey: 'example.com/imported-1', version: 1 });

    const rejected = await importAgents(deps, [
      { value: { id: 'agt-one', tagline: 'Changed' }, line: 1 },
      record(4, { source_url: 'https://EXAMPLE.com/imported-2' }),
    ]).catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(ImportRejectedError);
    expect((rejected as ImportRejectedError).issues.map((issue) => issue.pointer)).toEqual(['/source_url']);
    expect((await store.first(store.db.select().from(agents).where(eq(agents.id, 'agt-one'))))?.tagline).toBe('Tagline 1');

    const second = await importAgents(deps, [{ value: { id: 'agt-one', tagline: 'Changed' }, line: 1 }, record(2, { id: rows[1]!.id })], {
      actor: 'cli',
      emitEvents: true,
    });
    expect(second).toEqual({ total: 2, created: 0, updated: 1, unchanged: 1 });
    expect(await store.first(store.db.select().from(agents).where(eq(agents.id, 'agt-one')))).toMatchObject({
      tagline: 'Changed',
      version: 2,
      changeSeq: 4,
    });
    expect((await store.rows(store.db.select().from(events))).map((event) => event.type)).toEqual(['agent.updated']);
    const audited = await store.rows(store.db.select().from(auditLog).where(eq(auditLog.action, 'agent.import')));
    expect(audited.map((entry) => entry.after)).toEqual([
      { total: 3, created: 3, updated: 0, unchanged: 0, emit_events: false },
      { total: 2, created: 0, updated: 1, unchanged: 1, emit_events: true },
    ]);
  });

  // SQLite: the import's transaction and the edit's cannot overlap (one write lock).
  it.runIf(dialect === 'postgres')(
    'an import waits for an edit of a row it updates and keeps it, instead of deadlocking with it',
    async () => {
      const store = await open();
      const deps = partsOf(store);
      const { edits } = agentParts(store);
      await importAgents(deps, [record(1, { id: 'agt-held' })]);
      const edited = gate();
      const hold = gate();
      const edit = store.transaction(async () => {
        await edits.update('agt-held', { tagline: 'Edited meanwhile' });
        edited.open();
        await hold.wait;
      });
      await edited.wait;
      let settled = false;
      const imported = importAgents(deps, [{ value: { id: 'agt-held', name: 'Renamed by import' }, line: 1 }]).finally(
        () => (settled = true),
      );
      await lockWaitOrSettled(store, () => settled); // the import waits for the edit's row
      hold.open();
      // Had the import taken the change cursor first, the edit would wait for it to commit while it waits for the
      // edit's row: PostgreSQL would fail one of them.
      await edit;
      expect(await imported).toMatchObject({ updated: 1 });
      const { agents } = store.t;
      expect(await store.first(store.db.select().from(agents).where(eq(agents.id, 'agt-held')))).toMatchObject({
        name: 'Renamed by import',
        tagline: 'Edited meanwhile',
        version: 3,
      });
    },
  );

  it.runIf(dialect === 'postgres')(
    'an agent created meanwhile with an id in the file is locked before the change cursor too, while an edit holds it',
    async () => {
      const store = await open();
      const deps = partsOf(store);
      const { edits } = agentParts(store);
      // Planned as a create; before the import's transaction another writer creates it (so the plan made
      // again updates it) and an edit of it holds the row, committing only once the import waits.
      const late = {
        value: { id: 'agt-late', name: 'Imported late', tagline: 'From the file', source_url: 'https://example.com/late' },
        line: 1,
      };
      const edited = gate();
      const hold = gate();
      let edit: Promise<void> | undefined;
      const afterPlan = async () => {
        await edits.create(plainAgentInput('Created elsewhere', { tagline: 'Meanwhile', source_url: 'https://example.com/late' }), {
          id: 'agt-late',
        });
        edit = store.transaction(async () => {
          await edits.update('agt-late', { tagline: 'Edited meanwhile' });
          edited.open();
          await hold.wait;
        });
        await edited.wait;
      };
      let settled = false;
      const imported = importAgents(deps, [late], { afterPlan }).finally(() => (settled = true));
      await edited.wait;
      await lockWaitOrSettled(store, () => settled); // the import waits for the edit's row, holding no cursor
      hold.open();
      // Had the import written the row it found under the cursor, the edit would wait for the cursor at its
      // commit while the import waits for its row: PostgreSQL would fail one of them (40P01).
      await edit;
      expect(await imported).toEqual({ total: 1, created: 0, updated: 1, unchanged: 0 });
      const { agents } = store.t;
      expect(await store.first(store.db.select().from(agents).where(eq(agents.id, 'agt-late')))).toMatchObject({
        name: 'Imported late',
        tagline: 'From the file',
        version: 3,
      });
    },
  );

  it('seeds an empty directory once, even when two processes start at the same moment', async () => {
    const store = await open();
    const other = await openAgain(store);
    const options = { baseDate: '2025-06-01T00:00:00.000Z' };
    const seed = (on: Store) => seedDemoDirectoryIfEmpty(partsOf(on), options);
    // PostgreSQL: side by side. SQLite: one after the other (two connections in one event loop would
    // wait on each other's write lock with the loop blocked; across processes BEGIN IMMEDIATE orders them).
    const [a, b] = dialect === 'postgres' ? await Promise.all([seed(store), seed(other)]) : [await seed(store), await seed(other)];
    const seeded = [a, b].filter((summary) => summary !== undefined);
    expect(seeded).toHaveLength(1);
    const { agents, reviews } = store.t;
    const listed = (await store.first(store.db.select({ n: count() }).from(agents).where(eq(agents.listed, true))))?.n;
    expect(listed).toBe(seeded[0]!.agents);
    expect((await store.first(store.db.select({ n: count() }).from(reviews)))?.n).toBe(seeded[0]!.reviews);
    expect(await seedDemoDirectoryIfEmpty(partsOf(other), options)).toBeUndefined();
  });
});
