import { TextArena } from '../../lib/text-arena';
import type { AgentChangeCursor, AsyncChangeCursor } from './agent-changes';
import type { AgentRowReads, AgentRowStatements } from './agent-rows';
import { agentProfileSchema, type AgentProfile } from './agents.schemas';
import type { AgentRow } from './agents.table';
import { toAgentProfile } from './agent-profile';

/**
 * A listed agent's public profile as JSON, UTF-8 bytes exactly as the `Agent`
 * schema's serializer writes it (a view into the cache: read, never write).
 */
export type ProfileJson = Buffer & { readonly __profileJson: unique symbol };

/** The cache's reads, synchronous: SQLite's prepared statements, for one-step gated reads (see createProfileCache). */
export interface ProfileCache {
  /** The profile of a listed agent, or undefined when there is none (unknown or unlisted). */
  get(id: string): ProfileJson | undefined;
  /** Profiles of the listed agents among `ids` (one query for all misses). */
  getMany(ids: readonly string[]): Map<string, ProfileJson>;
  /**
   * The same profiles, in the order of `ids`, each handed to `visit` as a byte range of a buffer (no view, no Map:
   * for answers that copy the bytes at once). `index` is the id's place in `ids`; ids without a profile are skipped.
   * `handles`, when given, pairs each id with a small integer (search: the agent's slot in the index), which under
   * `handles.tag` stands for that id alone (search: the index's slot numbering, which a compaction renews), so
   * that the next visit finds the profile without a lookup by id, or reading the id (TextArena.visitBytesAt).
   */
  visitMany(
    ids: readonly string[],
    visit: (index: number, bytes: Buffer, start: number, end: number) => void,
    handles?: { readonly slots: readonly number[]; readonly tag: number },
  ): void;
  /**
   * Fills the cache with the next slice of the directory (by id); true once
   * the whole directory was seen or the cache is full. For a warm-up in slices.
   */
  fillStep(): boolean;
}

/** The same reads, asynchronous, on either store. */
export interface AsyncProfileCache {
  get(id: string): Promise<ProfileJson | undefined>;
  /** `cacheMisses: false`: read the misses without keeping them (a read in a transaction's snapshot, which may be older than the cache). */
  getMany(ids: readonly string[], options?: { cacheMisses?: boolean }): Promise<Map<string, ProfileJson>>;
  fillStep(): Promise<boolean>;
}

/** The profile as an object again (the console's tRPC procedures and in-process callers). */
export const parseProfile = (profile: ProfileJson): AgentProfile => JSON.parse(profile.toString('utf8')) as AgentProfile;

/** The schema's own serializer: parsed by it (key order, no stray fields), then stringified. */
export const serializeProfile = (row: AgentRow): string => JSON.stringify(agentProfileSchema.parse(toAgentProfile(row)));

/** Changed ids read per sync; beyond that (a big import) the whole cache is dropped instead. */
const MAX_TARGETED_INVALIDATIONS = 5_000;
/** Rows serialized per warm-up slice: about 10 ms of work. */
const FILL_SLICE = 2_000;

/**
 * Public profiles of listed agents, kept serialized so reads by id, bulk,
 * search hits and connections need neither a database row nor a serializer
 * (profiles are about 0.8 KB; 100,000 of them about 85 MB, hence the cap).
 *
 * Entries are made on first read (or by a warm-up at start-up) and dropped
 * one by one when their agent changes: when the change cursor moves, the ids
 * changed since are read (a range of the change_seq index) and forgotten.
 * Writes by any process count. Past `maxEntries` the oldest entry goes: a
 * directory larger than the cache still works, with more database reads.
 *
 * One cache, two ways to read it: `sync` (SQLite's statements, for reads made
 * in one synchronous step through the store's gate: search's hits, the public
 * reads' hot paths, the SQLite change feed's read transaction) and `async` (either store). Both share the entries and the
 * catch-up rules below; only how they read differs.
 */
export function createProfileCache({
  rows,
  changes,
  reads,
  asyncChanges,
  maxEntries,
}: {
  /** SQLite only: the synchronous statements and cursor (undefined on PostgreSQL: no `sync` reads there). */
  rows?: AgentRowStatements;
  changes?: AgentChangeCursor;
  reads: AgentRowReads;
  asyncChanges: AsyncChangeCursor;
  maxEntries: number;
}): { sync: ProfileCache | undefined; async: AsyncProfileCache } {
  // Off the JavaScript heap: see TextArena for why.
  const profiles = new TextArena();
  let syncedSeq = Number.NaN;
  /** Counts catch-ups: an async read that saw it move may have read a row a catch-up has since invalidated. */
  let generation = 0;
  let fillAfterId = '';

  /** The catch-up to `seq`, given the ids changed since the last one (undefined when not read). */
  const applyChanges = (seq: number, changed: string[] | undefined): void => {
    // First use (NaN), too many changes, or the cursor went back (the database was replaced): start afresh.
    if (!changed || changed.length > MAX_TARGETED_INVALIDATIONS) profiles.clear();
    else for (const id of changed) profiles.delete(id);
    syncedSeq = seq;
    generation++;
  };
  const cached = (id: string) => profiles.getBytes(id) as ProfileJson | undefined;

  const remember = (row: AgentRow): ProfileJson => {
    const json = serializeProfile(row);
    // Oldest first out: Map keeps insertion order.
    if (profiles.size >= maxEntries) profiles.delete(profiles.oldestKey()!);
    profiles.set(row.id, json);
    return profiles.getBytes(row.id) as ProfileJson;
  };
  /** A profile not kept: read while a catch-up ran, so possibly of a row it just invalidated. */
  const serializeOnly = (row: AgentRow): ProfileJson => Buffer.from(serializeProfile(row), 'utf8') as ProfileJson;

  /** Splits `ids` into cached profiles and misses. */
  const lookup = (ids: readonly string[]) => {
    const found = new Map<string, ProfileJson>();
    const misses: string[] = [];
    for (const id of ids) {
      const hit = cached(id);
      if (hit !== undefined) found.set(id, hit);
      else misses.push(id);
    }
    return { found, misses };
  };
  /** Remembers a fill slice's rows; true once the cache is full. */
  const fillFrom = (slice: readonly AgentRow[], keep: boolean): boolean => {
    for (const row of slice) {
      if (profiles.size >= maxEntries) return true;
      if (keep && !profiles.has(row.id)) remember(row);
    }
    fillAfterId = slice.at(-1)?.id ?? fillAfterId;
    return slice.length < FILL_SLICE;
  };

  const sync = rows && changes && syncReads(rows, changes);
  function syncReads(rows: AgentRowStatements, changes: AgentChangeCursor): ProfileCache {
    const catchUp = (): void => {
      const seq = changes.latest();
      if (seq === syncedSeq) return;
      applyChanges(seq, seq > syncedSeq ? rows.idsChangedSince(syncedSeq, MAX_TARGETED_INVALIDATIONS + 1) : undefined);
    };
    function getMany(ids: readonly string[]): Map<string, ProfileJson> {
      catchUp();
      const { found, misses } = lookup(ids);
      if (misses.length > 0) for (const row of rows.byIds(misses)) if (row.listed) found.set(row.id, remember(row));
      return found;
    }
    return {
      get(id) {
        catchUp();
        const hit = cached(id);
        if (hit !== undefined) return hit;
        const row = rows.byId(id);
        return row?.listed ? remember(row) : undefined;
      },
      getMany,
      visitMany(ids, visit, handles) {
        catchUp();
        let at = 0;
        const forward = (bytes: Buffer, start: number, end: number): void => visit(at, bytes, start, end);
        if (handles) {
          const { slots, tag } = handles;
          for (; at < ids.length; at++) if (!profiles.visitBytesAt(slots[at]!, tag, ids[at]!, forward)) break;
        } else {
          for (; at < ids.length; at++) if (!profiles.visitBytes(ids[at]!, forward)) break;
        }
        if (at === ids.length) return;
        // A miss (not cached yet, or no profile): the rest as getMany reads them (views taken before any eviction).
        const rest = getMany(ids.slice(at));
        for (; at < ids.length; at++) {
          const bytes = rest.get(ids[at]!);
          if (bytes !== undefined) visit(at, bytes, 0, bytes.length);
        }
      },
      fillStep() {
        catchUp();
        return fillFrom(rows.listedAfter(fillAfterId, FILL_SLICE), true);
      },
    };
  }

  // Async catch-ups run one after another, each after the ones asked for before it:
  // a caller that just wrote waits for a catch-up that reads the cursor after its write.
  let catchUps: Promise<void> = Promise.resolve();
  const catchUpStep = async (): Promise<void> => {
    const seq = await asyncChanges.latest();
    if (seq === syncedSeq) return;
    const from = syncedSeq;
    const changed = seq > from ? await reads.idsChangedSince(from, MAX_TARGETED_INVALIDATIONS + 1) : undefined;
    // A synchronous catch-up ran meanwhile (SQLite): it has already moved the cache on.
    if (Object.is(syncedSeq, from)) applyChanges(seq, changed); // (NaN before the first: Object.is, not ===)
  };
  const catchUp = (): Promise<void> => (catchUps = catchUps.then(catchUpStep, catchUpStep));

  const async: AsyncProfileCache = {
    async get(id) {
      await catchUp();
      const hit = cached(id);
      if (hit !== undefined) return hit;
      const before = generation;
      const row = await reads.byId(id);
      if (!row?.listed) return undefined;
      return generation === before ? remember(row) : serializeOnly(row);
    },
    async getMany(ids, { cacheMisses = true } = {}) {
      await catchUp();
      const { found, misses } = lookup(ids);
      if (misses.length === 0) return found;
      const before = generation;
      const missed = await reads.byIds(misses);
      const keep = cacheMisses && generation === before;
      for (const row of missed) if (row.listed) found.set(row.id, keep ? remember(row) : serializeOnly(row));
      return found;
    },
    async fillStep() {
      await catchUp();
      const before = generation;
      const slice = await reads.listedAfter(fillAfterId, FILL_SLICE);
      return fillFrom(slice, generation === before);
    },
  };
  return { sync, async };
}
