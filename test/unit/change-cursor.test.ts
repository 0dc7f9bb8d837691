import { describe, expect, it } from 'vitest';
import type { ListenHandlers, Store } from '../../src-api/db/store';
import { AGENTS_CHANGED_CHANNEL, pgChangeCursor } from '../../src-api/modules/agents/agent-changes';

/**
 * PostgreSQL's change cursor (agent-changes.ts) against a stand-in store: when it reads
 * max(change_seq) and when it keeps the value. test/postgres/change-cursor.test.ts runs it on a
 * real server, across two pools.
 */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

function setUp() {
  let seq = 5;
  let reads = 0;
  const subscribers: Array<{ channel: string; handlers: ListenHandlers }> = [];
  const store = { listen: (channel: string, handlers: ListenHandlers) => subscribers.push({ channel, handlers }) } as unknown as Store;
  const cursor = pgChangeCursor(store, {
    latestChangeSeq: async () => {
      reads++;
      return seq;
    },
  });
  return {
    cursor,
    subscribers,
    get reads() {
      return reads;
    },
    write: () => ++seq,
    listener: () => subscribers[0]!.handlers,
  };
}

describe('the PostgreSQL change cursor', () => {
  it('reads once per event-loop turn until the listener is up, then only after a notification', async () => {
    const t = setUp();
    expect(await Promise.all([t.cursor.latest(), t.cursor.latest()])).toEqual([5, 5]);
    expect(t.reads).toBe(1);
    expect(t.subscribers.map((s) => s.channel)).toEqual([AGENTS_CHANGED_CHANNEL]);
    await nextTurn();
    expect(await t.cursor.latest()).toBe(5);
    expect(t.reads).toBe(2); // no listener yet: read again in the next turn

    t.listener().listening(true);
    expect(await t.cursor.latest()).toBe(5); // read afresh once listening: whatever was written before LISTEN
    expect(t.reads).toBe(3);
    for (let turn = 0; turn < 3; turn++) {
      await nextTurn();
      expect(await t.cursor.latest()).toBe(5);
    }
    expect(t.reads).toBe(3); // nothing changed, nothing read

    t.write();
    expect(await t.cursor.latest()).toBe(5); // another process's commit, not yet announced
    t.listener().notified('');
    expect(await t.cursor.latest()).toBe(6);
    await nextTurn();
    expect(await t.cursor.latest()).toBe(6);
    expect(t.reads).toBe(4);

    t.write();
    t.cursor.moved(); // this process's own write: seen at once, without waiting for its notification
    expect(await t.cursor.latest()).toBe(7);
    expect(t.reads).toBe(5);
  });

  it('falls back to reading every turn while the listener is down, and reads afresh when it is back', async () => {
    const t = setUp();
    await t.cursor.latest();
    t.listener().listening(true);
    expect(await t.cursor.latest()).toBe(5);
    const before = t.reads;

    t.listener().listening(false);
    t.write(); // missed: no notification while the connection is down
    expect(await t.cursor.latest()).toBe(6);
    await nextTurn();
    t.write();
    expect(await t.cursor.latest()).toBe(7);
    expect(t.reads).toBe(before + 2);

    t.write(); // written between the drop and the LISTEN that follows the reconnect
    t.listener().listening(true);
    expect(await t.cursor.latest()).toBe(8);
    await nextTurn();
    expect(await t.cursor.latest()).toBe(8);
    expect(t.reads).toBe(before + 3);
  });

  it('keeps no value read before a notification that arrived while the read was under way', async () => {
    const t = setUp();
    await t.cursor.latest();
    t.listener().listening(true);
    const stale = t.cursor.latest(); // under way
    t.write();
    t.listener().notified('');
    expect(await stale).toBe(5);
    expect(await t.cursor.latest()).toBe(6);
  });
});
