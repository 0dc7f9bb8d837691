import { asc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { StaleVersionError } from '../../src-api/errors';
import { type AuditService } from '../../src-api/modules/audit/audit.service';
import { type AgentEdits } from '../../src-api/modules/agents/agent-edits';
import { encodeCursor } from '../../src-api/modules/agents/agent-feed';
import { type AgentReads } from '../../src-api/modules/agents/agent-reads';
import { type AgentWrites } from '../../src-api/modules/agents/agent-writes';
import type { AgentRow } from '../../src-api/modules/agents/agents.table';
import { bothStores } from '../helpers/both-stores';
import { agentParts } from '../helpers/agent-parts';
import { gate } from '../helpers/gate';
import { lockWaitOrSettled } from '../helpers/lock-wait';

/**
 * The agents' async write path (agent-writes.write) and the moderators' edits on it
 * (agent-edits.ts), on SQLite and PostgreSQL 15: change_seq from max + 1 under SQLite's
 * write lock and from a sequence under an advisory lock on PostgreSQL, events and audit
 * entries in the same transaction, readers following at once.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

describe.each(stores.dialects)('agent writes on $dialect', ({ dialect, open }) => {
  let store: Store;
  let writes: AgentWrites;
  let reads: AgentReads;
  let edits: AgentEdits;
  let audit: AuditService;

  const seqs = async () => {
    const { agents } = store.t;
    const rows = await store.rows(store.db.select({ id: agents.id, seq: agents.changeSeq }).from(agents).orderBy(asc(agents.changeSeq)));
    return rows.map((row) => row.seq);
  };
  const eventsOf = async (agentId: string) => {
    const { events } = store.t;
    const rows = await store.rows(store.db.select().from(events).orderBy(asc(events.createdAt)));
    return rows.filter((row) => (row.data as { agent_id?: string }).agent_id === agentId).map((row) => [row.type, row.data]);
  };
  const newRow = (id: string) => writes.newRow({ id, name: `Agent ${id}`, tagline: 'Writes', sourceUrl: `https://example.org/${id}` });

  beforeAll(async () => {
    store = await open();
    ({ audit, reads, writes, edits } = agentParts(store));
  });

  it('creates agents with consecutive change_seqs and their events, readable at once', async () => {
    const written = await writes.write(
      ['agt_w1', 'agt_w2', 'agt_w3'].map((id) => ({ kind: 'create' as const, row: newRow(id) })),
      { emitEvents: true },
    );
    expect(written.map((row) => row.changeSeq)).toEqual([1, 2, 3]);
    expect(await seqs()).toEqual([1, 2, 3]);
    expect(await eventsOf('agt_w2')).toEqual([
      ['agent.registered', { agent_id: 'agt_w2', name: 'Agent agt_w2', source_url: 'https://example.org/agt_w2' }],
    ]);
    expect(await reads.getRow('agt_w3')).toEqual(written[2]);
  });

  it('edits: version, change_seq, event and audit in one transaction; the cached profile follows; a stale version writes nothing', async () => {
    expect((await reads.get('agt_w1')).tagline).toBe('Writes'); // cached now
    const next = await edits.update('agt_w1', { tagline: 'Edited' }, { actor: 'mod', expectedVersion: 1 });
    expect(next).toMatchObject({ version: 2, changeSeq: 4, tagline: 'Edited' });
    expect((await reads.get('agt_w1')).tagline).toBe('Edited');
    expect((await eventsOf('agt_w1')).at(-1)).toEqual([
      'agent.updated',
      { agent_id: 'agt_w1', name: 'Agent agt_w1', changed_fields: ['tagline'] },
    ]);
    const { auditLog } = store.t;
    const entries = await store.rows(store.db.select().from(auditLog).where(eq(auditLog.entityId, 'agt_w1')));
    expect(entries.map((entry) => [entry.actor, entry.action])).toEqual([['mod', 'agent.update']]);

    await expect(edits.setListed('agt_w1', false, { actor: 'mod', expectedVersion: 1 })).rejects.toThrow(StaleVersionError);
    expect(await reads.getRow('agt_w1')).toMatchObject({ listed: true, version: 2 });
    // Unchanged: nothing written, no change_seq.
    expect(await edits.setStatus('agt_w1', 'active', null)).toMatchObject({ version: 2, changeSeq: 4 });

    const verified = await edits.setVerified('agt_w2', true, { via: 'claim' });
    expect(verified).toMatchObject({ verified: true, changeSeq: 5 });
    expect((await eventsOf('agt_w2')).at(-1)).toEqual(['agent.verified', { agent_id: 'agt_w2', name: 'Agent agt_w2', via: 'claim' }]);
  });

  it('concurrent edits keep every change: unique change_seqs, in commit order, none lost on one row', async () => {
    const before = Math.max(...(await seqs()));
    await Promise.all([
      edits.update('agt_w3', { name: 'Renamed' }),
      edits.setStatus('agt_w3', 'deprecated', 'Old'),
      edits.setListed('agt_w2', false),
      edits.update('agt_w1', { author: 'Someone' }),
      edits.setVerified('agt_w3', true),
    ]);
    const after = await seqs();
    expect(new Set(after).size).toBe(after.length);
    expect(Math.max(...after)).toBe(before + 5);
    // Three edits of agt_w3 at once: each read the row locked, so all three are in it.
    expect(await reads.getRow('agt_w3')).toMatchObject({
      name: 'Renamed',
      status: 'deprecated',
      statusMessage: 'Old',
      verified: true,
      version: 4,
    });
    const feed = JSON.parse((await reads.changesJson(undefined, 100)).toString()) as { changes: { agent_id: string; change: string }[] };
    // In commit order, which on PostgreSQL is the order the writers got the change_seq lock: not asserted.
    expect(feed.changes.map((change) => [change.agent_id, change.change]).sort()).toEqual([
      ['agt_w1', 'updated'],
      ['agt_w2', 'removed'],
      ['agt_w3', 'updated'],
    ]);
  });

  // SQLite: a transaction holds the only write lock, so a second writer waits for the first by design.
  it.runIf(dialect === 'postgres')(
    'a write commits while another is still open; the open one draws its change_seq at commit, past what readers saw',
    async () => {
      const written = gate();
      const hold = gate();
      const first = store.transaction(async () => {
        const [row] = await writes.write([{ kind: 'create', row: newRow('agt_slow') }], { emitEvents: true });
        written.open();
        await hold.wait;
        return row!;
      });
      await written.wait;
      let settled = false;
      const second = writes.write([{ kind: 'create', row: newRow('agt_quick') }]).finally(() => (settled = true));
      // Before change_seqs were drawn at commit, the second waited here for the first's cursor lock.
      await lockWaitOrSettled(store, () => settled);
      expect(settled).toBe(true);
      const [quick] = await second;
      const seen = await writes.latestChangeSeq();
      expect(seen).toBe(quick!.changeSeq);
      const feedAfter = async (seq: number) => {
        const feed = JSON.parse((await reads.changesJson(encodeCursor(seq), 100)).toString()) as { changes: { agent_id: string }[] };
        return feed.changes.map((change) => change.agent_id);
      };
      expect(await feedAfter(seen)).toEqual([]);
      hold.open();
      const slow = await first;
      // Committed after a reader saw `seen`: a higher change_seq, so a reader at `seen` finds it.
      expect(slow.changeSeq).toBeGreaterThan(seen);
      expect(await feedAfter(seen)).toEqual(['agt_slow']);
      expect(await reads.getRow('agt_slow')).toMatchObject({ changeSeq: slow.changeSeq });
    },
  );

  it('owner hooks: a rename reaches each owned profile, a close detaches them; no events; in the caller’s transaction, undone with it', async () => {
    const { agents } = store.t;
    const owned = ['agt_o1', 'agt_o2', 'agt_o3'];
    await writes.write(
      owned.map((id, i) => ({
        kind: 'create' as const,
        row: writes.newRow({
          id,
          name: `Owned ${id}`,
          tagline: 'Owned',
          sourceUrl: `https://example.org/${id}`,
          ownerAccountId: i < 2 ? 'acc_owner' : 'acc_other',
          ownerName: i === 1 ? 'New Name' : 'Old Name',
        }),
      })),
    );
    const ownerOf = async (id: string) => {
      const row = await reads.getRow(id);
      return [row.ownerAccountId, row.ownerName, row.version];
    };
    const before = Math.max(...(await seqs()));

    await edits.renameOwner('acc_owner', 'New Name');
    // agt_o2 showed the new name already: unchanged, no version, no change_seq.
    expect(await Promise.all(owned.map(ownerOf))).toEqual([
      ['acc_owner', 'New Name', 2],
      ['acc_owner', 'New Name', 1],
      ['acc_other', 'Old Name', 1],
    ]);
    expect(Math.max(...(await seqs()))).toBe(before + 1);
    expect((await reads.get('agt_o1')).owner).toMatchObject({ name: 'New Name' });

    // Inside the caller's transaction (accounts.close's): undone when the caller's change is.
    await expect(
      store.transaction(async () => {
        await edits.detachOwner('acc_owner');
        expect(await store.first(store.db.select().from(agents).where(eq(agents.id, 'agt_o1')).limit(1))).toMatchObject({
          ownerAccountId: null,
        });
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await ownerOf('agt_o1')).toEqual(['acc_owner', 'New Name', 2]);

    await store.transaction(() => edits.detachOwner('acc_owner'));
    expect(await Promise.all(owned.map(ownerOf))).toEqual([
      [null, null, 3],
      [null, null, 2],
      ['acc_other', 'Old Name', 1],
    ]);
    expect((await reads.get('agt_o1')).owner).toBeNull();
    expect(await Promise.all(owned.map(eventsOf))).toEqual([[], [], []]);
    const written = await seqs();
    await edits.detachOwner('acc_nobody'); // owns nothing: nothing written
    expect(await seqs()).toEqual(written);
  });

  it('an edit in the caller’s transaction (a claim approved, its owner written with the mark) commits or rolls back with it', async () => {
    const owner = { accountId: 'acc_claimer', name: 'Claimer' };
    await expect(
      store.transaction(async () => {
        await edits.setVerified('agt_o3', true, { via: 'claim', owner, actor: 'mod' });
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await reads.getRow('agt_o3')).toMatchObject({ verified: false, ownerAccountId: 'acc_other', version: 1 });

    const { auditLog } = store.t;
    const next = await store.transaction(async () => {
      const verified = await edits.setVerified('agt_o3', true, { via: 'claim', owner, actor: 'mod' });
      await audit.recordInTransaction({ actor: 'mod', action: 'claim.approve', entityType: 'claim', entityId: 'clm_1' });
      return verified;
    });
    expect(next).toMatchObject({ verified: true, ownerAccountId: 'acc_claimer', ownerName: 'Claimer', version: 2 });
    expect((await eventsOf('agt_o3')).at(-1)).toEqual(['agent.verified', { agent_id: 'agt_o3', name: 'Owned agt_o3', via: 'claim' }]);
    const entries = await store.rows(store.db.select().from(auditLog).where(eq(auditLog.actor, 'mod')));
    expect(
      entries
        .map((entry) => entry.action)
        .filter((action) => action !== 'agent.update')
        .sort(),
    ).toEqual(['agent.verify', 'claim.approve']);
  });

  it('a rolled-back write leaves nothing; the next one counts on past every change_seq', async () => {
    const before = await seqs();
    await expect(
      store.transaction(async () => {
        await writes.write([{ kind: 'create', row: newRow('agt_gone') }], { emitEvents: true });
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await seqs()).toEqual(before);
    expect(await eventsOf('agt_gone')).toEqual([]);

    // (Rows copied in with their own change_seqs: `cli copy-data` moves the sequence past them, test/postgres/copy-data.)
    const [next] = await writes.write([{ kind: 'create', row: newRow('agt_after') }]);
    expect(next!.changeSeq).toBe(Math.max(...before) + 1);
    expect(Number((await store.all<{ n: number }>(sql`SELECT count(*) AS n FROM agents`))[0]!.n)).toBe(before.length + 1);
  });

  it('an update writes every column that changed, of every kind, and keeps the rest: the row read back is the one returned', async () => {
    // SQLite sets only the changed columns (agent-writes writeSqlite): arrays, booleans, nulls and numbers must all count as changes.
    const { agents } = store.t;
    const stored = async (id: string) => store.first(store.db.select().from(agents).where(eq(agents.id, id)).limit(1));
    const [created] = await writes.write([
      { kind: 'create', row: writes.newRow({ ...newRow('agt_cols'), capabilities: ['a', 'b'], statusMessage: 'old', status: 'deprecated' }) },
    ]);
    const steps: Array<Partial<AgentRow>> = [
      { capabilities: ['a', 'b'] }, // a new array, the same content: no change of capabilities
      { capabilities: ['a', 'c'], categories: ['x'], verified: true },
      { status: 'active', ownerAccountId: 'acc_cols', ownerName: 'Owner' },
      { ratingCount: 2, ratingSum: 9, listed: false },
      { skills: [{ id: 's', name: 'S', description: 'd', tags: [] }], ownerName: null, agentCardUrl: 'https://example.org/card' },
      { skills: null, sourceUrl: 'https://example.org/cols-moved' },
    ];
    let current = (await stored('agt_cols'))!;
    expect(current).toEqual(created);
    for (const changes of steps) {
      const [next] = await writes.write([{ kind: 'update', current, next: writes.changedRow(current, changes), changedFields: [] }]);
      expect(next).toMatchObject(changes);
      current = (await stored('agt_cols'))!;
      expect(current).toEqual(next);
    }
    expect(current).toMatchObject({ version: 7, statusMessage: null, sourceUrlKey: 'example.org/cols-moved', verified: true });
  });
});
