import { eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Store } from '../../db/store';
import { ValidationError } from '../../errors';
import type { Clock } from '../../lib/clock';
import type { IdGenerator } from '../../lib/ids';
import { idParamSchema } from '../../lib/schemas';
import type { AuditService } from '../audit/audit.service';
import type { AgentWrite, AgentWrites } from './agent-writes';
import { agentPatchSchema, agentStatusSchema, ratingSummarySchema, statusMessageSchema, type AgentInput } from './agents.schemas';
import type { AgentRow } from './agents.table';

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
 * in the meantime (max(change_seq) moved). No webhook events
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

/** One record of an import file, with where it came from for error messages. */
export interface ImportRecord {
  value: unknown;
  /** 1-based line where the record starts. */
  line: number;
  /** 0-based position in a JSON array (absent in JSONL). */
  index?: number;
}

/** Something wrong with one record. `pointer` is a JSON pointer into the record ("" for the whole record). */
export interface ImportIssue {
  line: number;
  index?: number;
  pointer: string;
  detail: string;
}

export class ImportRejectedError extends ValidationError {
  constructor(
    readonly issues: ImportIssue[],
    readonly total: number,
  ) {
    const records = new Set(issues.map((issue) => `${issue.line}:${issue.index ?? ''}`)).size;
    super(
      `${records} of ${total} record${total === 1 ? '' : 's'} ${records === 1 ? 'is' : 'are'} invalid; nothing was imported`,
      issues.map((issue) => ({ pointer: `/${issue.index ?? issue.line}${issue.pointer}`, detail: issue.detail })),
    );
  }
}

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

const isoUtcSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/, 'must be an ISO 8601 UTC date-time ending in Z')
  .refine((value) => !Number.isNaN(Date.parse(value)), 'must be a valid date-time')
  .transform((value) => new Date(value).toISOString());

/** Every field optional and without defaults: which fields a record has matters for updates. */
const importRecordSchema = agentPatchSchema.extend({
  id: idParamSchema.optional(),
  verified: z.boolean().optional(),
  listed: z.boolean().optional(),
  status: agentStatusSchema.optional(),
  status_message: statusMessageSchema.nullable().optional(),
  created_at: isoUtcSchema.optional(),
  updated_at: isoUtcSchema.optional(),
  /** Computed: accepted so that exports import back, then ignored. */
  trust_score: z.number().optional(),
  /** Computed from reviews: accepted so that exports import back, then ignored. */
  rating: ratingSummarySchema.optional(),
  /** Set only by a verified claim made with an account: accepted so that exports import back, then ignored. */
  owner: z.object({ name: z.string() }).nullable().optional(),
});
type ImportRecordData = z.infer<typeof importRecordSchema>;

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

interface Checked {
  record: ImportRecord;
  data: ImportRecordData;
}

type Operation = AgentWrite | { kind: 'unchanged' };

interface Plan {
  /** max(change_seq) when the plan was made: if it moved, the directory changed since. */
  seenChangeSeq: number;
  operations: Operation[];
  issues: ImportIssue[];
}

const LOOKUP_CHUNK = 500;
const PROGRESS_EVERY = 1000;

export async function importAgents(
  deps: ImportDeps,
  records: readonly ImportRecord[],
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const { onProgress } = options;
  const total = records.length;

  // 1. The shape of every record: no database needed.
  const { checked, issues: shapeIssues } = checkShapes(records, onProgress);

  // 2. Against the directory, holding no lock while planning. A write committed meanwhile
  // moves max(change_seq) past what the plan saw first, so step 3 notices it.
  const plan = () => planImport(deps, checked, shapeIssues);
  let planned = await plan();
  onProgress?.({ phase: 'validating', done: total, total });
  if (planned.issues.length > 0) throw new ImportRejectedError(sortIssues(planned.issues), total);
  await options.afterPlan?.();

  // 3. All writes in one transaction, with the change cursor held (no other agent write
  // until it commits). If agents changed since the plan was made, plan again first.
  return deps.store.transaction(async () => {
    await lockUpdatedRows(deps.store, planned);
    if ((await deps.agentWrites.latestChangeSeqForWrite()) !== planned.seenChangeSeq) {
      planned = await plan();
      if (planned.issues.length > 0) throw new ImportRejectedError(sortIssues(planned.issues), total);
    }
    return writeImport(deps, planned, options, total);
  });
}

function checkShapes(records: readonly ImportRecord[], onProgress: ImportOptions['onProgress']) {
  const total = records.length;
  const issues: ImportIssue[] = [];
  const checked: Checked[] = [];
  records.forEach((record, n) => {
    if (n % PROGRESS_EVERY === 0) onProgress?.({ phase: 'validating', done: n, total });
    const issue = (pointer: string, detail: string) => issues.push({ line: record.line, index: record.index, pointer, detail });
    const value = record.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      issue('', `a record must be a JSON object, got ${describeValue(value)}`);
      return;
    }
    const result = importRecordSchema.safeParse(value);
    if (!result.success) {
      for (const zodIssue of result.error.issues) for (const [pointer, detail] of describeIssue(zodIssue, value)) issue(pointer, detail);
      return;
    }
    const { created_at: createdAt, updated_at: updatedAt } = result.data;
    if (updatedAt !== undefined && createdAt === undefined) issue('/updated_at', 'can only be given together with /created_at');
    else if (updatedAt !== undefined && createdAt !== undefined && updatedAt < createdAt)
      issue('/updated_at', 'must not be before /created_at');
    else checked.push({ record, data: result.data });
  });
  return { checked, issues };
}

/** What each record will do, and every problem found. Reads only. */
async function planImport(
  { store, clock, ids, agentWrites }: ImportDeps,
  checked: readonly Checked[],
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
  const generatedIds = new Map<Checked, string>();
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
 * cursor. Another writer of one of them commits first, or waits for the import: a writer takes the
 * cursor only with its rows written, so one the import waited for while holding the cursor would
 * wait for it in turn (a deadlock). Rows a plan made again under the cursor adds are not locked
 * here (agents changed meanwhile and one of them was edited at that moment: PostgreSQL fails one).
 */
async function lockUpdatedRows(store: Store, plan: Plan): Promise<void> {
  if (store.dialect !== 'postgres') return;
  const { agents } = store.t;
  const ids = plan.operations.flatMap((operation) => (operation.kind === 'update' ? [operation.current.id] : [])).sort();
  for (let i = 0; i < ids.length; i += LOOKUP_CHUNK) {
    const chunk = ids.slice(i, i + LOOKUP_CHUNK);
    await store.rows(store.forUpdate(store.db.select({ id: agents.id }).from(agents).where(inArray(agents.id, chunk)).orderBy(agents.id)));
  }
}

async function loadRows(store: Store, idList: readonly string[]): Promise<Map<string, AgentRow>> {
  const { agents } = store.t;
  const rows = new Map<string, AgentRow>();
  for (let i = 0; i < idList.length; i += LOOKUP_CHUNK) {
    const chunk = idList.slice(i, i + LOOKUP_CHUNK);
    for (const row of await store.rows(store.db.select().from(agents).where(inArray(agents.id, chunk)))) rows.set(row.id, row);
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

function where(record: ImportRecord): string {
  return record.index === undefined ? `line ${record.line}` : `line ${record.line} (index ${record.index})`;
}

function sortIssues(issues: ImportIssue[]): ImportIssue[] {
  return issues
    .map((issue, order) => ({ issue, order }))
    .sort((a, b) => a.issue.line - b.issue.line || (a.issue.index ?? 0) - (b.issue.index ?? 0) || a.order - b.order)
    .map(({ issue }) => issue);
}

/** "/capabilities/0" for a zod path. */
function pointerOf(path: readonly PropertyKey[]): string {
  return path.map((part) => `/${String(part).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const part of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return value;
}

/** A zod issue as [pointer, plain-English reason] pairs (one per unknown key). */
function describeIssue(issue: z.core.$ZodIssue, root: unknown): [string, string][] {
  const pointer = pointerOf(issue.path);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => [`${pointer}/${key}`, 'is not a field of an agent']);
    case 'invalid_type': {
      const expected = issue.expected === 'array' || issue.expected === 'object' ? `an ${issue.expected}` : `a ${issue.expected}`;
      return [[pointer, `must be ${expected}, got ${describeValue(valueAt(root, issue.path))}`]];
    }
    case 'too_small':
      if (issue.origin === 'string')
        return [[pointer, Number(issue.minimum) === 1 ? 'must not be empty' : `must be at least ${issue.minimum} characters`]];
      if (issue.origin === 'array') return [[pointer, `must have at least ${issue.minimum} items`]];
      return [[pointer, `must be at least ${issue.minimum}`]];
    case 'too_big':
      if (issue.origin === 'string') return [[pointer, `must be at most ${issue.maximum} characters`]];
      if (issue.origin === 'array') return [[pointer, `must have at most ${issue.maximum} items`]];
      return [[pointer, `must be at most ${issue.maximum}`]];
    case 'invalid_value':
      return [[pointer, `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`]];
    default:
      return [[pointer, issue.message.charAt(0).toLowerCase() + issue.message.slice(1)]];
  }
}
