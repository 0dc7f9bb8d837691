/**
 * A local mirror of the directory, kept exact with `GET /agents/changes` (Node only: it writes a file).
 *
 *   const result = await syncMirror(client, 'agents-mirror.json');
 *   // { agents: 412, created: 3, updated: 1, removed: 1, pages: 1, cursor: '…', restarted: false }
 *
 * The file holds the listed agents by id and the feed cursor; each call reads it, applies every
 * change after its cursor, oldest first, and writes it back (to a temporary file renamed over it,
 * so a crash leaves the old mirror, which the next call brings up to date again).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { isAgentDirectoryError, type Agent, type AgentDirectoryClient } from './index.js';

export const MIRROR_FORMAT = 'agent-directory-mirror/1';

export interface MirrorFile {
  format: typeof MIRROR_FORMAT;
  /** Where to continue the feed: the last `next_cursor`. */
  cursor: string | null;
  /** When the last sync finished (ISO 8601). */
  synced_at: string | null;
  /** The listed agents, by id. */
  agents: Record<string, Agent>;
}

export interface SyncOptions {
  /** Changes per request (1–1000, default 1000). */
  limit?: number;
  /** Called after each page is applied (progress). */
  onPage?: (page: { changes: number; agents: number }) => void;
}

export interface SyncResult {
  /** Agents in the mirror after the sync. */
  agents: number;
  created: number;
  updated: number;
  removed: number;
  /** Feed pages read. */
  pages: number;
  cursor: string;
  /** True when the server refused the stored cursor (e.g. its database was restored) and the mirror was rebuilt from the start. */
  restarted: boolean;
}

/** The mirror in `file`, or an empty one when there is no such file yet. */
export async function readMirror(file: string): Promise<MirrorFile> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { format: MIRROR_FORMAT, cursor: null, synced_at: null, agents: {} };
    throw error;
  }
  const mirror = JSON.parse(text) as MirrorFile;
  if (mirror?.format !== MIRROR_FORMAT || typeof mirror.agents !== 'object' || mirror.agents === null) {
    throw new Error(`${file} is not an agent directory mirror (${MIRROR_FORMAT})`);
  }
  return mirror;
}

async function writeMirror(file: string, mirror: MirrorFile): Promise<void> {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  await fs.writeFile(temporary, JSON.stringify(mirror));
  await fs.rename(temporary, file);
}

/** Brings the mirror in `file` up to date with the directory (creating it on first use). */
export async function syncMirror(client: AgentDirectoryClient, file: string, options: SyncOptions = {}): Promise<SyncResult> {
  const limit = options.limit ?? 1000;
  const mirror = await readMirror(file);
  const agents = new Map(Object.entries(mirror.agents));
  const result: SyncResult = { agents: 0, created: 0, updated: 0, removed: 0, pages: 0, cursor: mirror.cursor ?? '', restarted: false };
  let cursor = mirror.cursor ?? undefined;
  for (;;) {
    let page;
    try {
      page = await client.changes({ ...(cursor !== undefined && { since: cursor }), limit });
    } catch (error) {
      // A cursor the server no longer knows: what the mirror holds can't be trusted, so rebuild it.
      if (isAgentDirectoryError(error) && error.code === 'invalid_cursor' && cursor !== undefined && !result.restarted) {
        agents.clear();
        cursor = undefined;
        result.restarted = true;
        continue;
      }
      throw error;
    }
    result.pages++;
    for (const change of page.changes) {
      if (change.change === 'removed' || !change.agent) agents.delete(change.agent_id);
      else agents.set(change.agent_id, change.agent);
      result[change.change]++;
    }
    cursor = page.next_cursor;
    options.onPage?.({ changes: page.changes.length, agents: agents.size });
    if (page.changes.length < limit) break;
  }
  await writeMirror(file, { format: MIRROR_FORMAT, cursor, synced_at: new Date().toISOString(), agents: Object.fromEntries(agents) });
  return { ...result, agents: agents.size, cursor };
}
