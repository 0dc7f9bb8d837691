import { eq, inArray, sql } from 'drizzle-orm';
import { inTextList } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import { settleBulkWrite } from '../../db/bulk-write';
import type { Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import type { AuditService } from '../audit/audit.service';
import type { AgentWrite, AgentWrites } from './agent-writes';
import type { AgentInput } from './agents.schemas';
import type { AgentRow } from './agents.table';
import {
  checkShapes,
  ImportRejectedError,
  PROGRESS_EVERY,
  sortIssues,
  where,
  type CheckedRecord,
  type ImportIssue,
  type ImportRecord,
} from './import-records';

/** What an import works with; every row is written through the agents' one write path. */
export interface ImportDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  audit: AuditService;
  agentWrites: AgentWrites;
}

/**
 * Bulk import of agents (`cli import`), all or nothing.
 *
 * A record holds the fields of `agentInputSchema` plus, optionally:
 * - `id`: an existing agent is updated; an unknown id is created with that id
 *   (it must be a valid id); no id means a new agent with a generated id.
 * - the read-only fields of an exported profile, so that an export imports back:
 *   `trust_score` and `rating` are computed from other data and `owner` comes from claims: all ignored;
 *   `verified` is applied (both ways) when given; `created_at`/`updated_at` are
 *   kept for new agents (a restore) and ignored on updates (an update happens now);
 *   `listed` (written by `export --include-unlisted`), `status` and `status_message` are applied when given.
 *
 * A new agent needs `name`, `tagline` and `source_url` (the rest defaults as in the
 * API). An update changes only the fields the record has; a record that changes
 * nothing is counted as unchanged and not written.
 *
 * Every record is checked before anything is written: its shape, duplicate ids,
 * and source URLs that would be shared by two listed agents (within the file, or
 * with an agent already in the directory). The checks read without any lock; the
 * writes then happen in one store transaction, which first locks the rows it updates
 * (PostgreSQL), then takes the agents' change cursor (agent-writes.latestChangeSeqForWrite) and plans again if agents changed
 * in the meantime (max(change_seq) moved), and again in a new transaction if that plan updates a row it has not locked. No webhook events
 * unless `emitEvents` (then `agent.registered`, `agent.updated` and `agent.verified`,
 * as the single-agent writes record them, through the events service and its listeners).
 *
 * The rows are built and written by the agents' write path (agent-writes.ts), as
 * the service's single writes are: derived columns and trust score, version + 1,
 * updated_at, a fresh change_seq per row, the events. `write` is called with a
 * thousand rows at a time inside the import's one transaction (on SQLite each call
 * is one synchronous step of prepared statements; the service's per-call savepoint
 * and permission checks would cost 10 s per 100,000 creates).
 */

export interface ImportProgress {
  phase: 'validating' | 'writing';
  done: number;
  total: number;
}

export interface ImportOptions {
  /** Record webhook events for the changes (default false: imports are silent). */
  emitEvents?: boolean;
  /** Who imported, for the audit log (one entry per import). */
  actor?: string;
  /** What was imported (a file name), for the audit log. */
  source?: string;
  onProgress?: (progress: ImportProgress) => void;
  /**
   * Awaited once the plan is made, before the write transaction (no lock held): test/cli/import-concurrency
   * writes there from another connection, as a server process on the same data dir could.
   */
  afterPlan?: () => Promise<void>;
}

export interface ImportSummary {
  total: number;
  created: number;
  updated: number;
  unchanged: number;
}

const REQUIRED_FOR_CREATE = ['name', 'tagline', 'source_url'] as const;

/** Profile fields an update may change, record name → row key. */
const UPDATABLE = [
  ['name', 'name'],
  ['tagline', 'tagline'],
  ['description', 'description'],
  ['author', 'author'],
  ['capabilities', 'capabilities'],
  ['categories', 'categories'],
  ['type', 'type'],
  ['source_url', 'sourceUrl'],
] as const satisfies readonly (readonly [keyof AgentInput, keyof AgentRow])[];

type Operation = AgentWrite | { kind: 'unchanged' };

interface Plan {
  /** max(change_seq) when the plan was made: if it moved, the directory changed since. */
  seenChangeSeq: number;
  operations: Operation[];
  issues: ImportIssue[];
}

const LOOKUP_CHUNK = 500;
/**
 * Ids looked up per statement in loadRows: 100,000 new agents' ids took 200 statements of 500 placeholders
 * each (~300 ms of CPU, built, bound and compiled each time), 10 of one parameter take ~80 ms.
 */
const ROWS_CHUNK = 10_000;

export async function importAgents(
  deps: ImportDeps,
  records: readonly ImportRecord[],
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const { onProgress } = options;
  const total = records.length;

  // 1. The shape of every record: no database needed.
  const { checked, issues: shapeIssues } = checkShapes(records, (done) => onProgress?.({ phase: 'validating', done, total }));

  // 2. Against the directory, holding no lock while planning. A write committed meanwhile
  // moves max(change_seq) past what the plan saw first, so step 3 notices it.
  const plan = () => planImport(deps, checked, shapeIssues);
  let planned = await plan();
  onProgress?.({ phase: 'validating', done: total, total });
  if (planned.issues.length > 0) throw new ImportRejectedError(sortIssues(planned.issues), total);
  await options.afterPlan?.();

  // 3. All writes in one transaction, with the change cursor held (no other agent write
  // until it commits). If agents changed since the plan was made, plan again first. On
  // PostgreSQL a plan made again may update a row the transaction has not locked (an agent
  // created meanwhile with an id in the file): the transaction then ends without writing and
  // the import goes round again, locking that row before the cursor (see lockUpdatedRows).
  for (let round = 1; ; round++) {
    const outcome = await deps.store.transaction(async () => {
      const locked = await lockUpdatedRows(deps.store, planned);
      if ((await deps.agentWrites.latestChangeSeqForWrite()) !== planned.seenChangeSeq) {
        planned = await plan();
        if (planned.issues.length > 0) throw new ImportRejectedError(sortIssues(planned.issues), total);
        if (round < MAX_LOCK_ROUNDS && updatedIds(planned).some((id) => !locked.has(id))) return LOCK_AGAIN;
      }
      return writeImport(deps, planned, options, total);
    });
    if (outcome !== LOCK_AGAIN) {
      await settleBulkWrite(deps.store, deps.store.t.agents, outcome.created + outcome.updated);
      return outcome;
    }
  }
}

/**
 * A round of step 3 that found rows to lock first. A directory that keeps gaining the file's
 * ids faster than the import can lock them is written on the last round as it stands (an
 * edit of an unlocked row at that moment fails one of the two, as PostgreSQL breaks deadlocks).
 */
const LOCK_AGAIN = Symbol('lock the plan made again');
const MAX_LOCK_ROUNDS = 5;

const updatedIds = (plan: Plan): string[] =>
  plan.operations.flatMap((operation) => (operation.kind === 'update' ? [operation.current.id] : []));

/** What each record will do, and every problem found. Reads only. */
async function planImport(
  { store, clock, ids, agentWrites }: ImportDeps,
  checked: readonly CheckedRecord[],
  shapeIssues: readonly ImportIssue[],
): Promise<Plan> {
  const seenChangeSeq = await agentWrites.latestChangeSeq();
  const issues = [...shapeIssues];
  const issue = (record: ImportRecord, pointer: string, detail: string) =>
    issues.push({ line: record.line, index: record.index, pointer, detail });
  const now = clock.now();

  // Duplicate ids within the file.
  const firstById = new Map<string, ImportRecord>();
  for (const { record, data } of checked) {
    if (data.id === undefined) continue;
    const first = firstById.get(data.id);
    if (first) issue(record, '/id', `"${data.id}" appears more than once (first at ${where(first)})`);
    else firstById.set(data.id, record);
  }
  const existing = await loadRows(store, [...firstById.keys()]);

  // Ids for new agents: generated, then checked against the file and the directory in one pass.
  const taken = new Set(firstById.keys());
  const uniqueId = async (name: string, inDirectory: (id: string) => Promise<boolean>): Promise<string> => {
    let id = ids.agent(name);
    while (taken.has(id) || (await inDirectory(id))) id = ids.agent(name);
    taken.add(id);
    return id;
  };
  const generatedIds = new Map<CheckedRecord, string>();
  for (const item of checked) {
    if (item.data.id === undefined && item.data.name !== undefined)
      generatedIds.set(item, await uniqueId(item.data.name, async () => false));
  }
  const clashes = await loadRows(store, [...generatedIds.values()]);
  for (const [item, id] of generatedIds) {
    if (clashes.has(id))
      generatedIds.set(item, await uniqueId(item.data.name!, async (candidate) => (await loadRows(store, [candidate])).size > 0));
  }

  // Each record: a create (which needs the required fields), an update, or nothing to do.
  const operations: Operation[] = [];
  const finalSources: { record: ImportRecord; id: string; url: string; key: string; listed: boolean }[] = [];
  for (const item of checked) {
    const { record, data } = item;
    if (data.id !== undefined && firstById.get(data.id) !== record) continue; // a duplicate, reported
    const current = data.id === undefined ? undefined : existing.get(data.id);
    if (!current) {
      const missing = REQUIRED_FOR_CREATE.filter((field) => data[field] === undefined);
      if (missing.length > 0) {
        const why = data.id === undefined ? '' : ` (no agent has the id "${data.id}")`;
        for (const field of missing) issue(record, `/${field}`, `is required for a new agent${why}`);
        continue;
      }
      const row = agentWrites.newRow(
        {
          id: data.id ?? generatedIds.get(item)!,
          name: data.name!,
          tagline: data.tagline!,
          sourceUrl: data.source_url!,
          description: data.description,
          author: data.author,
          capabilities: data.capabilities,
          categories: data.categories,
          type: data.type,
          verified: data.verified,
          listed: data.listed,
          status: data.status,
          statusMessage: data.status_message,
          createdAt: data.created_at,
          updatedAt: data.updated_at,
        },
        now,
      );
      operations.push({ kind: 'create', row });
      finalSources.push({ record, id: row.id, url: row.sourceUrl, key: row.sourceUrlKey, listed: row.listed });
      continue;
    }

    const changes: Partial<AgentRow> = {};
    const changedFields: string[] = [];
    for (const [field, key] of UPDATABLE) {
      const value = data[field];
      if (value === undefined || sameValue(value, current[key])) continue;
      Object.assign(changes, { [key]: value });
      changedFields.push(field);
    }
    for (const flag of ['verified', 'listed'] as const) {
      if (data[flag] === undefined || data[flag] === current[flag]) continue;
      changes[flag] = data[flag];
      changedFields.push(flag);
    }
    // Lifecycle: an active agent carries no status message.
    const status = data.status ?? current.status;
    const statusMessage =
      status === 'active' ? null : data.status_message === undefined ? current.statusMessage : data.status_message || null;
    if (status !== current.status) {
      changes.status = status;
      changedFields.push('status');
    }
    if (statusMessage !== (current.statusMessage ?? null)) {
      changes.statusMessage = statusMessage;
      changedFields.push('status_message');
    }
    if (changedFields.length === 0) {
      operations.push({ kind: 'unchanged' });
      finalSources.push({ record, id: current.id, url: current.sourceUrl, key: current.sourceUrlKey, listed: current.listed });
      continue;
    }
    const next = agentWrites.changedRow(current, changes, now);
    finalSources.push({ record, id: next.id, url: next.sourceUrl, key: next.sourceUrlKey, listed: next.listed });
    operations.push({ kind: 'update', current, next, changedFields });
  }

  // Source URLs: no two listed agents may share one once the import is done
  // (agents in the file are judged by their new source_url, the others by their current one).
  const idsInFile = new Set(finalSources.map((source) => source.id));
  const listedByKey = await loadListedSourceKeys(store);
  const firstByKey = new Map<string, ImportRecord>();
  for (const { record, url, key, listed } of finalSources) {
    if (!listed) continue;
    const first = firstByKey.get(key);
    if (first) {
      issue(record, '/source_url', `"${url}" is the same source as the record at ${where(first)}`);
      continue;
    }
    firstByKey.set(key, record);
    const holder = listedByKey.get(key)?.find((id) => !idsInFile.has(id));
    if (holder !== undefined) issue(record, '/source_url', `"${url}" is already the source of agent "${holder}"`);
  }

  return { seenChangeSeq, operations, issues };
}

/** In the import's store transaction. */
async function writeImport({ agentWrites, audit }: ImportDeps, plan: Plan, options: ImportOptions, total: number): Promise<ImportSummary> {
  const { emitEvents = false, onProgress } = options;
  const summary: ImportSummary = { total, created: 0, updated: 0, unchanged: 0 };
  for (let n = 0; n < plan.operations.length; n += PROGRESS_EVERY) {
    onProgress?.({ phase: 'writing', done: n, total });
    const writes: AgentWrite[] = [];
    for (const operation of plan.operations.slice(n, n + PROGRESS_EVERY)) {
      if (operation.kind === 'unchanged') summary.unchanged++;
      else {
        if (operation.kind === 'create') summary.created++;
        else summary.updated++;
        writes.push(operation);
      }
    }
    await agentWrites.write(writes, { emitEvents, via: 'import' });
  }
  onProgress?.({ phase: 'writing', done: total, total });

  if (options.actor && summary.created + summary.updated > 0) {
    await audit.recordInTransaction({
      actor: options.actor,
      action: 'agent.import',
      entityType: 'import',
      entityId: options.source ?? 'import',
      after: { ...summary, emit_events: emitEvents },
    });
  }
  return summary;
}

/**
 * PostgreSQL: the rows the plan updates, locked (in id order) before the import takes the change
 * cursor; returns their ids. Another writer of one of them commits first, or waits for the import:
 * a writer takes the cursor only with its rows written, so one the import waited for while holding
 * the cursor would wait for it in turn (a deadlock). SQLite: nothing to lock (the transaction holds
 * the write lock), so every id counts as locked.
 */
async function lockUpdatedRows(store: Store, plan: Plan): Promise<{ has(id: string): boolean }> {
  if (store.dialect !== 'postgres') return { has: () => true };
  const { agents } = store.t;
  const ids = updatedIds(plan).sort();
  for (let i = 0; i < ids.length; i += LOOKUP_CHUNK) {
    const chunk = ids.slice(i, i + LOOKUP_CHUNK);
    await store.rows(store.forUpdate(store.db.select({ id: agents.id }).from(agents).where(inArray(agents.id, chunk)).orderBy(agents.id)));
  }
  return new Set(ids);
}

/** The rows of these ids that exist, by id: a statement per ROWS_CHUNK ids, all bound as one parameter (inTextList). */
async function loadRows(store: Store, idList: readonly string[]): Promise<Map<string, AgentRow>> {
  const { agents } = store.t;
  const rows = new Map<string, AgentRow>();
  for (let i = 0; i < idList.length; i += ROWS_CHUNK) {
    const chunk = idList.slice(i, i + ROWS_CHUNK);
    for (const row of await store.rows(store.db.select().from(agents).where(inTextList(store, agents.id, chunk)))) rows.set(row.id, row);
  }
  return rows;
}

/** source_url_key → ids of the listed agents with it (normally one). Raw rows: a million of them at most, two strings each. */
async function loadListedSourceKeys(store: Store): Promise<Map<string, string[]>> {
  const { agents } = store.t;
  const byKey = new Map<string, string[]>();
  const rows = await store.all<{ id: string; key: string }>(
    sql`SELECT ${agents.id} AS id, ${agents.sourceUrlKey} AS key FROM ${agents} WHERE ${eq(agents.listed, true)}`,
  );
  for (const { id, key } of rows) {
    const list = byKey.get(key);
    if (list) list.push(id);
    else byKey.set(key, [id]);
  }
  return byKey;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => item === b[i]);
  return a === b;
}
