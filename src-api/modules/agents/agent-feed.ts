import type { Db } from '../../db/client';
import { InvalidCursorError } from '../../errors';
import { JsonBytes } from '../../lib/json-bytes';
import type { AgentRowStatements } from './agent-rows';
import type { ProfileCache } from './profile-cache';

/**
 * The public change feed (`GET /agents/changes`), read off the agents'
 * change_seq: every write to an agent, by any process, gives it the next
 * value, so "rows with change_seq > cursor, oldest first" is every agent that
 * changed since, once each, in its latest state. A listed agent is
 * `created` (unchanged since it was listed: version 1) or `updated`, with its
 * public profile; an unlisted one is `removed`. A mirror that applies the
 * pages in order and keeps the last cursor holds exactly the listed agents.
 */

/** Where a feed starts: before every change (seqs start at 1; rows from before change_seq existed have 0). */
const START_SEQ = -1;
const CURSOR_PREFIX = 'v1.';

export const encodeCursor = (seq: number): string => Buffer.from(`${CURSOR_PREFIX}${seq}`, 'utf8').toString('base64url');

/** The change_seq a cursor stands for; anything this server could not have given out is an InvalidCursorError. */
export function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return START_SEQ;
  const text = /^[A-Za-z0-9_-]{1,40}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const match = /^v1\.(-1|0|[1-9]\d{0,14})$/.exec(text);
  if (!match || encodeCursor(Number(match[1])) !== cursor) throw new InvalidCursorError();
  return Number(match[1]);
}

export interface ChangeFeed {
  /** One page of the feed after the cursor `since`, as the JSON of the `AgentChanges` schema. */
  pageJson(since: string | undefined, limit: number): Buffer;
}

export function createChangeFeed({
  db,
  rows,
  profiles,
}: {
  db: Db;
  rows: Pick<AgentRowStatements, 'feedSince' | 'latestChangeSeq'>;
  profiles: ProfileCache;
}): ChangeFeed {
  // One read transaction: the page's rows and their profiles come from the same snapshot,
  // so an agent another process unlists in between cannot be `updated` without a profile.
  const readPage = db.$client.transaction((afterSeq: number, limit: number) => {
    // A cursor past every change was not given out by this directory (or the database was replaced
    // by an older copy): the caller must start over rather than wait for changes it already "has".
    if (afterSeq > rows.latestChangeSeq() && afterSeq > START_SEQ) throw new InvalidCursorError();
    const changed = rows.feedSince(afterSeq, limit);
    const found = profiles.getMany(changed.filter((row) => row.listed).map((row) => row.id));
    return { changed, found };
  });

  return {
    pageJson(since, limit) {
      const afterSeq = decodeCursor(since);
      const { changed, found } = readPage.deferred(afterSeq, limit);
      const last = changed.at(-1);
      return new JsonBytes()
        .raw('{"changes":[')
        .list(changed, (row, out) => {
          const profile = row.listed ? found.get(row.id) : undefined;
          const change = profile === undefined ? 'removed' : row.version === 1 ? 'created' : 'updated';
          out.raw(`{"agent_id":${JSON.stringify(row.id)},"change":"${change}",`);
          if (profile !== undefined) out.raw('"agent":').bytes(profile).raw(',');
          out.raw(`"cursor":"${encodeCursor(row.changeSeq)}"}`);
        })
        .raw(`],"next_cursor":"${last ? encodeCursor(last.changeSeq) : (since ?? encodeCursor(afterSeq))}"}`)
        .toBuffer();
    },
  };
}
