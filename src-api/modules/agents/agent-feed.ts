import type { Store } from '../../db/store';
import { InvalidCursorError } from '../../errors';
import { JsonBytes } from '../../lib/json-bytes';
import { gatedRead, type AgentRowReads, type AgentRowStatements, type FeedRow } from './agent-rows';
import type { AsyncProfileCache, ProfileCache, ProfileJson } from './profile-cache';

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
  pageJson(since: string | undefined, limit: number): Promise<Buffer>;
}

interface FeedPage {
  changed: FeedRow[];
  found: Map<string, ProfileJson>;
}

/**
 * The feed on either store. Its page's rows and their profiles are read in one
 * snapshot, so an agent another process unlists in between cannot be
 * `updated` without a profile: on SQLite a read transaction over the prepared
 * statements (synchronous, through the store's gate), on PostgreSQL a
 * REPEATABLE READ transaction.
 */
export function createChangeFeed(
  options:
    | { store: Store; dialect: 'sqlite'; rows: Pick<AgentRowStatements, 'feedSince' | 'latestChangeSeq'>; profiles: ProfileCache }
    | { store: Store; dialect: 'postgres'; rows: Pick<AgentRowReads, 'feedSince' | 'latestChangeSeq'>; profiles: AsyncProfileCache },
): ChangeFeed {
  const { store } = options;
  let readPage: (afterSeq: number, limit: number) => Promise<FeedPage>;
  if (options.dialect === 'sqlite') {
    const { rows, profiles } = options;
    const read = store.db.$client.transaction((afterSeq: number, limit: number): FeedPage => {
      checkCursor(afterSeq, rows.latestChangeSeq());
      const changed = rows.feedSince(afterSeq, limit);
      return { changed, found: profiles.getMany(listedIds(changed)) };
    });
    readPage = (afterSeq, limit) => gatedRead(store, () => read.deferred(afterSeq, limit));
  } else {
    const { rows, profiles } = options;
    readPage = (afterSeq, limit) =>
      store.transaction(
        async () => {
          checkCursor(afterSeq, await rows.latestChangeSeq());
          const changed = await rows.feedSince(afterSeq, limit);
          // Profiles read in this snapshot may be older than the cache: not kept.
          return { changed, found: await profiles.getMany(listedIds(changed), { cacheMisses: false }) };
        },
        { isolation: 'repeatable read' },
      );
  }

  return {
    async pageJson(since, limit) {
      const afterSeq = decodeCursor(since);
      return pageJson(await readPage(afterSeq, limit), since, afterSeq);
    },
  };
}

/**
 * A cursor past every change was not given out by this directory (or the database was replaced
 * by an older copy): the caller must start over rather than wait for changes it already "has".
 */
function checkCursor(afterSeq: number, latest: number): void {
  if (afterSeq > latest && afterSeq > START_SEQ) throw new InvalidCursorError();
}

const listedIds = (changed: readonly FeedRow[]) => changed.filter((row) => row.listed).map((row) => row.id);

function pageJson({ changed, found }: FeedPage, since: string | undefined, afterSeq: number): Buffer {
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
}
