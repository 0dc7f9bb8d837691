import { describe, expect, it } from 'vitest';
import type { IndexRow } from '../../src-api/modules/agents/agent-rows';
import { createIndexFollower, type IndexFeed } from '../../src-api/modules/search/index-follower';
import { SearchIndex } from '../../src-api/modules/search/search-index';
import { indexableAgent } from '../helpers/indexable-agent';

/**
 * The search index's async catch-up (PostgreSQL's path): catch-ups asked for at once run one at a
 * time, each from where the last ended, so a slow read of old rows can never be applied after a
 * later read of newer ones (which would leave the index stale past its cursor for good).
 */
const row = (id: string, name: string, changeSeq: number): IndexRow => ({ ...indexableAgent(id, name), status: 'active', changeSeq });

/** A table of current rows (as the database has them) read with a delay per read: the first slow, the others at once. */
function slowFirstFeed() {
  const rows = new Map<string, IndexRow>();
  let seq = 0;
  let reads = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const feed: IndexFeed = {
    latest: async () => seq,
    async changedSince(afterSeq, limit) {
      // The rows as they are when the read is made; delivered later.
      const found = [...rows.values()].filter((each) => each.changeSeq > afterSeq).sort((a, b) => a.changeSeq - b.changeSeq);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, reads++ === 0 ? 30 : 0));
      inFlight--;
      return found.slice(0, limit);
    },
  };
  const write = (id: string, name: string) => rows.set(id, row(id, name, ++seq));
  return { feed, write, maxInFlight: () => maxInFlight };
}

describe('search index follower', () => {
  it('runs catch-ups asked for at once one after another, in change order', async () => {
    const { feed, write, maxInFlight } = slowFirstFeed();
    const index = new SearchIndex();
    const follower = createIndexFollower(index, feed);
    write('agt_a', 'Old Name');
    write('agt_b', 'Bystander');
    const first = follower.catchUp(); // reads agt_a as "Old Name", slowly
    await new Promise((resolve) => setImmediate(resolve));
    write('agt_a', 'New Name'); // a later change of the same row
    const second = follower.catchUp(); // would read it at once and apply it before the slow read
    await Promise.all([first, second]);

    expect(maxInFlight()).toBe(1);
    expect(follower.seq).toBe(3);
    expect(index.search('new', 10).hits.map((hit) => hit.id)).toEqual(['agt_a']);
    expect(index.search('old', 10).hits).toEqual([]);
    expect(index.size).toBe(2);
  });

  it('a catch-up that finds the index already past its cursor reads nothing', async () => {
    const { feed, write } = slowFirstFeed();
    const follower = createIndexFollower(new SearchIndex(), feed);
    write('agt_a', 'Alpha');
    await Promise.all([follower.catchUp(), follower.catchUp(), follower.catchUp()]);
    expect(follower.seq).toBe(1);
    let reads = 0;
    const counted: IndexFeed = { latest: feed.latest, changedSince: (after, limit) => (reads++, feed.changedSince(after, limit)) };
    const again = createIndexFollower(new SearchIndex(), counted);
    await Promise.all([again.catchUp(), again.catchUp(), again.catchUp()]);
    // One catch-up read (one batch, short: caught up); the two that waited found nothing left.
    expect(reads).toBe(1);
  });
});
