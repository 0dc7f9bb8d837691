import { executionAsyncId } from 'node:async_hooks';
import { count, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src-api/db/store';
import { sqliteTables } from '../../src-api/db/store-sqlite';
import { agentRow, bothStores } from '../helpers/both-stores';
import { gate } from '../helpers/gate';

/**
 * The data-access seam (src-api/db/store.ts): the same cases on a real SQLite
 * file and a real PostgreSQL 15. Queries are written once; transactions commit,
 * roll back, nest as savepoints, and never let another caller's statement in.
 */
const stores = bothStores();
afterAll(() => stores.cleanup());

describe.each(stores.dialects)('the store on $dialect', ({ dialect, open }) => {
  let store: Store;
  beforeAll(async () => {
    store = await open();
  }, 180_000);

  const agentById = (id: string) => store.first(store.db.select().from(store.t.agents).where(eq(store.t.agents.id, id)));
  const versionOf = async (id: string) =>
    (await store.first(store.db.select({ version: store.t.agents.version }).from(store.t.agents).where(eq(store.t.agents.id, id))))
      ?.version;
  const insertAgent = (id: string, version = 1) =>
    store.run(store.db.insert(store.t.agents).values(agentRow({ id, version, sourceUrlKey: `example.org/${id}` })));
  const setVersion = (id: string, version: number) =>
    store.run(store.db.update(store.t.agents).set({ version }).where(eq(store.t.agents.id, id)));

  it('has every table under its schema.ts name', () => {
    expect(store.dialect).toBe(dialect);
    expect(Object.keys(store.t)).toEqual(Object.keys(sqliteTables()));
  });

  it('reads a row back with the same JS values: booleans, integers, reals, JSON, null', async () => {
    const row = agentRow({ id: 'agt_types', verified: true, listed: false, statusMessage: null });
    expect(await store.run(store.db.insert(store.t.agents).values(row))).toBe(1);
    expect(await agentById('agt_types')).toEqual(row);
    const { agents } = store.t;
    const [counted] = await store.rows(
      store.db
        .select({ n: count(), verified: sql<number>`sum(CASE WHEN ${agents.verified} THEN 1 ELSE 0 END)`.mapWith(Number) })
        .from(agents)
        .where(eq(agents.id, 'agt_types')),
    );
    expect(counted).toEqual({ n: 1, verified: 1 });
    expect(await store.first(store.db.select().from(agents).where(eq(agents.id, 'agt_none')))).toBeUndefined();
    const raw = await store.all<{ id: string }>(sql`SELECT ${agents.id} AS id FROM ${agents} WHERE ${eq(agents.listed, false)}`);
    expect(raw).toEqual([{ id: 'agt_types' }]);
  });

  it('commits a transaction, which its callees join without being passed it', async () => {
    expect(store.inTransaction).toBe(false);
    const result = await store.transaction(async () => {
      await insertAgent('agt_commit');
      const deeper = async () => (store.inTransaction ? setVersion('agt_commit', 5) : 0);
      return deeper();
    });
    expect(result).toBe(1);
    expect(store.inTransaction).toBe(false);
    expect(await versionOf('agt_commit')).toBe(5);
  });

  it('rolls back every write of a transaction that throws, and rethrows', async () => {
    const failed = store.transaction(async () => {
      await insertAgent('agt_rollback');
      throw new Error('undo');
    });
    await expect(failed).rejects.toThrow('undo');
    expect(await agentById('agt_rollback')).toBeUndefined();
  });

  it('a transaction inside a transaction is a savepoint', async () => {
    await store.transaction(async () => {
      await insertAgent('agt_outer');
      await expect(
        store.transaction(async () => {
          await insertAgent('agt_inner');
          throw new Error('inner only');
        }),
      ).rejects.toThrow('inner only');
    });
    expect(await versionOf('agt_outer')).toBe(1);
    expect(await agentById('agt_inner')).toBeUndefined();
  });

  it('a read outside a transaction never sees a write that is then rolled back', async () => {
    const written = gate();
    const hold = gate();
    const transaction = store.transaction(async () => {
      await insertAgent('agt_phantom');
      written.open();
      await hold.wait;
      throw new Error('undo');
    });
    await written.wait;
    const read = agentById('agt_phantom');
    hold.open();
    await expect(transaction).rejects.toThrow('undo');
    expect(await read).toBeUndefined();
  });

  it('a write outside a transaction waits for the open one and does not land inside it', async () => {
    await insertAgent('agt_wait');
    const written = gate();
    const hold = gate();
    const transaction = store.transaction(async () => {
      await setVersion('agt_wait', 2);
      written.open();
      await hold.wait;
      return versionOf('agt_wait');
    });
    await written.wait;
    let landed = false;
    const outside = setVersion('agt_wait', 3).then((changed) => ((landed = true), changed));
    // Give the outside write its chance to run (SQLite: the lock; PostgreSQL: the row lock).
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(landed).toBe(false);
    hold.open();
    expect(await transaction).toBe(2);
    expect(await outside).toBe(1);
    expect(await versionOf('agt_wait')).toBe(3);
  });

  it('two concurrent read-then-write transactions lose no write', async () => {
    await insertAgent('agt_counter', 0);
    const { agents } = store.t;
    const log: string[] = [];
    // PostgreSQL: the one holding the row waits until the other has begun, so the two overlap whatever
    // the load (the other then waits for the row; without the lock it would read 0 and write 1 over
    // the first one's 1). SQLite: the second cannot begin before the first ends, so neither waits.
    const began = { a: gate(), b: gate() };
    const bump = (label: 'a' | 'b') =>
      store.transaction(async () => {
        log.push(`${label} begins`);
        began[label].open();
        const row = await store.first(
          store.forUpdate(store.db.select({ version: agents.version }).from(agents).where(eq(agents.id, 'agt_counter'))),
        );
        if (dialect === 'postgres') await began[label === 'a' ? 'b' : 'a'].wait;
        await new Promise((resolve) => setImmediate(resolve)); // the other caller runs meanwhile
        await setVersion('agt_counter', row!.version + 1);
        log.push(`${label} commits`);
      });
    await Promise.all([bump('a'), bump('b')]);
    expect(await versionOf('agt_counter')).toBe(2);
    // SQLite: the second waits for the first to end, never nests into it. PostgreSQL: both begin
    // (which BEGIN a pooled connection answers first is up to the server), then the row lock orders them.
    if (dialect === 'sqlite') expect(log).toEqual(['a begins', 'a commits', 'b begins', 'b commits']);
    else expect(log.slice(0, 2).sort()).toEqual(['a begins', 'b begins']);
  });

  it('a waiting transaction keeps its writes when the one before it rolls back', async () => {
    const written = gate();
    const hold = gate();
    const first = store.transaction(async () => {
      await insertAgent('agt_first');
      written.open();
      await hold.wait;
      throw new Error('undo first');
    });
    await written.wait;
    const second = store.transaction(() => insertAgent('agt_second'));
    hold.open();
    await expect(first).rejects.toThrow('undo first');
    expect(await second).toBe(1);
    expect(await agentById('agt_first')).toBeUndefined();
    expect(await versionOf('agt_second')).toBe(1);
  });

  it('work a transaction leaves running runs outside it once it has ended', async () => {
    let later!: Promise<boolean>;
    await store.transaction(async () => {
      later = new Promise((resolve) => setTimeout(resolve, 10)).then(() => store.inTransaction);
    });
    expect(await later).toBe(false);
  });

  it('switches its scopes off between transactions (no async hooks then), and on for the next', async () => {
    // With Node's async hooks off, code after an await runs with no async id.
    const asyncIdAfterAwait = async (): Promise<number> => {
      await null;
      return executionAsyncId();
    };
    await store.transaction(async () => {
      await insertAgent('agt_scope_one');
    });
    expect(await asyncIdAfterAwait()).toBe(0);
    // The next transaction finds its scope again through promises and a timer: all its writes roll back with it.
    let idInside = 0;
    const undone = store.transaction(async () => {
      await insertAgent('agt_scope_two');
      await new Promise((resolve) => setTimeout(resolve, 5));
      await setVersion('agt_scope_two', 7);
      expect(store.inTransaction).toBe(true);
      idInside = await asyncIdAfterAwait();
      throw new Error('undo');
    });
    await expect(undone).rejects.toThrow('undo');
    expect(idInside).not.toBe(0);
    expect(await agentById('agt_scope_two')).toBeUndefined();
    expect(await versionOf('agt_scope_one')).toBe(1);
    expect(await asyncIdAfterAwait()).toBe(0);
  });

  it('afterCommit runs once the outermost transaction has committed, never after a rollback', async () => {
    const log: string[] = [];
    expect(() => store.afterCommit(() => log.push('outside'))).toThrow(/needs a store transaction/);
    await store.transaction(async () => {
      store.afterCommit(() => log.push(`outer sees agt_after: ${store.inTransaction}`));
      await insertAgent('agt_after');
      await store.transaction(async () => store.afterCommit(() => log.push('kept savepoint')));
      await store
        .transaction(async () => {
          store.afterCommit(() => log.push('undone savepoint'));
          throw new Error('undo savepoint');
        })
        .catch(() => undefined);
      log.push('body ends');
    });
    expect(log).toEqual(['body ends', 'outer sees agt_after: false', 'kept savepoint']);
    await expect(
      store.transaction(async () => {
        store.afterCommit(() => log.push('rolled back'));
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(log).not.toContain('rolled back');
  });

  it('beforeCommit: one step per key, run in the outermost transaction just before COMMIT; a throw there rolls back', async () => {
    const key = Symbol('test step');
    const log: string[] = [];
    const step = async (state: string[]) => {
      log.push(`step: ${state.join(', ')} (in transaction: ${store.inTransaction})`);
      await setVersion('agt_step', 7);
    };
    expect(() => store.beforeCommit(key, () => [], step)).toThrow(/needs a store transaction/);
    await store.transaction(async () => {
      await insertAgent('agt_step');
      store.beforeCommit<string[]>(key, () => [], step).push('outer');
      await store.transaction(async () => store.beforeCommit<string[]>(key, () => ['not made again'], step).push('savepoint'));
      log.push('body ends');
    });
    expect(log).toEqual(['body ends', 'step: outer, savepoint (in transaction: true)']);
    expect(await versionOf('agt_step')).toBe(7);

    await expect(
      store.transaction(async () => {
        await setVersion('agt_step', 8);
        store.beforeCommit(key, () => [], async () => {
          throw new Error('step fails');
        });
      }),
    ).rejects.toThrow('step fails');
    expect(await versionOf('agt_step')).toBe(7);
  });

  it('an afterCommit callback sees the committed rows from outside the transaction', async () => {
    let seen: Promise<number | undefined> | undefined;
    await store.transaction(async () => {
      await insertAgent('agt_visible');
      store.afterCommit(() => (seen = versionOf('agt_visible')));
    });
    expect(await seen).toBe(1);
  });

  it('run() counts the rows a statement changed, builder or raw SQL', async () => {
    await insertAgent('agt_tally1');
    await insertAgent('agt_tally2');
    const { agents } = store.t;
    expect(
      await store.run(
        store.db
          .update(agents)
          .set({ version: 9 })
          .where(sql`${agents.id} LIKE 'agt_tally%'`),
      ),
    ).toBe(2);
    expect(await store.run(sql`UPDATE ${agents} SET version = 10 WHERE ${agents.id} LIKE 'agt_tally%'`)).toBe(2);
    expect(await versionOf('agt_tally2')).toBe(10);
  });
});
