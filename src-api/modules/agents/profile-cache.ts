import { TextArena } from '../../lib/text-arena';
import type { AgentChangeCursor } from './agent-changes';
import type { AgentRowStatements } from './agent-rows';
import { agentProfileSchema, type AgentProfile } from './agents.schemas';
import type { AgentRow } from './agents.table';
import { toAgentProfile } from './agent-profile';

/**
 * A listed agent's public profile as JSON, UTF-8 bytes exactly as the `Agent`
 * schema's serializer writes it (a view into the cache: read, never write).
 */
export type ProfileJson = Buffer & { readonly __profileJson: unique symbol };

export interface ProfileCache {
  /** The profile of a listed agent, or undefined when there is none (unknown or unlisted). */
  get(id: string): ProfileJson | undefined;
  /** Profiles of the listed agents among `ids` (one query for all misses). */
  getMany(ids: readonly string[]): Map<string, ProfileJson>;
  /**
   * The same profiles, in the order of `ids`, each handed to `visit` as a byte range of a buffer (no view, no Map:
   * for answers that copy the bytes at once). `index` is the id's place in `ids`; ids without a profile are skipped.
   */
  visitMany(ids: readonly string[], visit: (index: number, bytes: Buffer, start: number, end: number) => void): void;
  /**
   * Fills the cache with the next slice of the directory (by id); true once
   * the whole directory was seen or the cache is full. For a warm-up in slices.
   */
  fillStep(): boolean;
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
 * search hits and connections need neither a SQLite row nor a serializer
 * (profiles are about 0.8 KB; 100,000 of them about 85 MB, hence the cap).
 *
 * Entries are made on first read (or by a warm-up at start-up) and dropped
 * one by one when their agent changes: when the change cursor moves, the ids
 * changed since are read (a range of the change_seq index) and forgotten.
 * Writes by any process count. Past `maxEntries` the oldest entry goes: a
 * directory larger than the cache still works, with more SQLite reads.
 */
export function createProfileCache({
  rows,
  changes,
  maxEntries,
}: {
  rows: AgentRowStatements;
  changes: AgentChangeCursor;
  maxEntries: number;
}): ProfileCache {
  // Off the JavaScript heap: see TextArena for why.
  const profiles = new TextArena();
  let syncedSeq = Number.NaN;
  let fillAfterId = '';

  const sync = (): void => {
    const seq = changes.latest();
    if (seq === syncedSeq) return;
    const changed = seq > syncedSeq ? rows.idsChangedSince(syncedSeq, MAX_TARGETED_INVALIDATIONS + 1) : undefined;
    // First use (NaN), too many changes, or the cursor went back (the database was replaced): start afresh.
    if (!changed || changed.length > MAX_TARGETED_INVALIDATIONS) profiles.clear();
    else for (const id of changed) profiles.delete(id);
    syncedSeq = seq;
  };

  const remember = (row: AgentRow): ProfileJson => {
    const json = serializeProfile(row);
    // Oldest first out: Map keeps insertion order.
    if (profiles.size >= maxEntries) profiles.delete(profiles.oldestKey()!);
    profiles.set(row.id, json);
    return profiles.getBytes(row.id) as ProfileJson;
  };

  function getMany(ids: readonly string[]): Map<string, ProfileJson> {
    sync();
    const found = new Map<string, ProfileJson>();
    const misses: string[] = [];
    for (const id of ids) {
      const cached = profiles.getBytes(id) as ProfileJson | undefined;
      if (cached !== undefined) found.set(id, cached);
      else misses.push(id);
    }
    if (misses.length > 0) for (const row of rows.byIds(misses)) if (row.listed) found.set(row.id, remember(row));
    return found;
  }

  return {
    get(id) {
      sync();
      const cached = profiles.getBytes(id) as ProfileJson | undefined;
      if (cached !== undefined) return cached;
      const row = rows.byId(id);
      return row?.listed ? remember(row) : undefined;
    },

    getMany,

    visitMany(ids, visit) {
      sync();
      let at = 0;
      const forward = (bytes: Buffer, start: number, end: number): void => visit(at, bytes, start, end);
      for (; at < ids.length; at++) if (!profiles.visitBytes(ids[at]!, forward)) break;
      if (at === ids.length) return;
      // A miss (not cached yet, or no profile): the rest as getMany reads them (views taken before any eviction).
      const rest = getMany(ids.slice(at));
      for (; at < ids.length; at++) {
        const bytes = rest.get(ids[at]!);
        if (bytes !== undefined) visit(at, bytes, 0, bytes.length);
      }
    },

    fillStep() {
      sync();
      const slice = rows.listedAfter(fillAfterId, FILL_SLICE);
      for (const row of slice) {
        if (profiles.size >= maxEntries) return true;
        if (!profiles.has(row.id)) remember(row);
      }
      fillAfterId = slice.at(-1)?.id ?? fillAfterId;
      return slice.length < FILL_SLICE;
    },
  };
}
