import { eq, getTableColumns, sql } from 'drizzle-orm';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/client';
import { requireTransaction, type Store } from '../../db/store';
import type { Clock } from '../../lib/clock';
import { sourceUrlKey } from '../../lib/urls';
import type { EventsService } from '../events/events.service';
import type { EventType } from '../events/events.table';
import { agentInputSchema } from './agents.schemas';
import { agents, type AgentRow } from './agents.table';
import { computeTrustScore } from './trust-score';

/**
 * The one write path of the agents table. The agents service (single writes),
 * `cli import` (bulk) and the demo seeder all write agents through it, so the
 * rules live here once:
 * - a row's derived columns: `source_url_key` from `source_url`, no status
 *   message on an active agent, the trust score recomputed, `version` + 1 and
 *   `updated_at` on a change;
 * - the change cursor: every written row gets a fresh `change_seq` (SQLite:
 *   max + 1, read once per call and counted up under the write lock;
 *   PostgreSQL: the agents_change_seq sequence, drawn as the transaction commits,
 *   see commitSeqsPg). That is also how
 *   search indexes, profile caches and stats of every process learn of the
 *   write (they read rows with a higher `change_seq` than they saw);
 * - the webhook events of a write (`agent.registered`, `agent.updated`,
 *   `agent.verified`), when the caller asks for them.
 * Rows are written with plain prepared statements (values mapped by the drizzle
 * columns, so they read back exactly as drizzle would return them): 100,000
 * imported agents take about a second.
 */

/** What a new agent is given; every other column has its default or is derived. */
export type NewAgentFields = Pick<AgentRow, 'id' | 'name' | 'tagline' | 'sourceUrl'> &
  Partial<Omit<AgentRow, 'id' | 'name' | 'tagline' | 'sourceUrl' | 'sourceUrlKey' | 'trustScore' | 'version' | 'changeSeq'>>;

/** A change of a row: what it was, what it becomes (from `changedRow`), and the public names of the fields that changed. */
export interface AgentChange {
  current: AgentRow;
  next: AgentRow;
  /** Profile field names for `agent.updated` (`verified` becoming true is an `agent.verified` instead). */
  changedFields: readonly string[];
}

export type AgentWrite = { kind: 'create'; row: AgentRow } | ({ kind: 'update' } & AgentChange);

export interface AgentWriteOptions {
  /** Record the webhook events of these writes (default false: demo seeding and plain imports are silent). */
  emitEvents?: boolean;
  /** How an agent became verified, for `agent.verified` (default "moderator"). */
  via?: string;
}

export interface AgentWritesDeps {
  /** SQLite's connection, for its prepared statements (undefined on PostgreSQL). */
  db?: Db;
  /** Every write runs through the store, in the caller's store transaction or one of its own. */
  store: Store;
  clock: Clock;
  events: EventsService;
  /** Called once a write by this process has committed (the readers' change cursor: agent-reads.changed). */
  onCommitted?: () => void;
}

/**
 * pg_advisory_xact_lock key of the agents' change cursor (any fixed 64-bit number, unique among this
 * app's advisory locks): taken before a writer draws sequence values and held to its commit.
 */
const CHANGE_SEQ_LOCK = 0x61676e7473; // the bytes of 'agnts'

/**
 * PostgreSQL: the change cursor in one transaction (store.beforeCommit's state, shared by every
 * AgentWrites on the store): the rows written so far that still need their change_seq, and
 * whether the transaction holds the cursor's lock already (then it draws at once).
 */
interface PgCursor {
  held: boolean;
  pending: Array<{ id: string; row?: AgentRow }>;
}
const PG_CURSOR = Symbol('agents change cursor');

/** The defaults of agentInputSchema's optional fields, taken from the schema itself. */
const INPUT_DEFAULTS = agentInputSchema.parse({ name: 'x', tagline: 'x', source_url: 'https://example.com/' });

const columns = getTableColumns(agents);
type Key = keyof AgentRow;
const ALL_KEYS = Object.keys(columns) as Key[];
const UPDATE_KEYS = ALL_KEYS.filter((key) => key !== 'id');

function driverValue(row: AgentRow, key: Key): unknown {
  const value = row[key];
  return value === null || value === undefined ? null : columns[key].mapToDriverValue(value);
}

export function createAgentWrites({ db, store, clock, events, onCommitted }: AgentWritesDeps) {
  const sqlite = db ? prepareSqlite(db) : undefined;
  /** The prepared statements: SQLite only (a SQLite store needs the same connection as `db`). */
  const statements = () => {
    if (!sqlite) throw new Error('agent-writes: a SQLite store needs its Db for the prepared statements');
    return sqlite;
  };

  /**
   * The derived columns of a row, in place: source key (unless `keyOf` already has it for this
   * source URL), status message rule, trust score at `at`.
   */
  const normalize = (row: AgentRow, at: Date, keyOf?: AgentRow): AgentRow => {
    row.sourceUrlKey = keyOf && keyOf.sourceUrl === row.sourceUrl ? keyOf.sourceUrlKey : sourceUrlKey(row.sourceUrl);
    if (row.status === 'active') row.statusMessage = null;
    else if (row.statusMessage !== null) row.statusMessage = row.statusMessage.trim() || null;
    row.trustScore = computeTrustScore(row, at);
    return row;
  };

  const writes = {
    /**
     * A complete new row (not yet written): a field that is undefined gets its default, the derived columns are
     * computed, the trust score as of `at` (default now). Field by field, no spreading: an import builds 100,000.
     */
    newRow(fields: NewAgentFields, at: Date = clock.now()): AgentRow {
      const createdAt = fields.createdAt ?? at.toISOString();
      const row: AgentRow = {
        id: fields.id,
        name: fields.name,
        tagline: fields.tagline,
        description: fields.description ?? INPUT_DEFAULTS.description,
        author: fields.author ?? INPUT_DEFAULTS.author,
        capabilities: fields.capabilities ?? [...INPUT_DEFAULTS.capabilities],
        categories: fields.categories ?? [...INPUT_DEFAULTS.categories],
        type: fields.type ?? INPUT_DEFAULTS.type,
        sourceUrl: fields.sourceUrl,
        sourceUrlKey: '',
        verified: fields.verified ?? false,
        listed: fields.listed ?? true,
        status: fields.status ?? 'active',
        statusMessage: fields.statusMessage ?? null,
        ownerAccountId: fields.ownerAccountId ?? null,
        ownerName: fields.ownerName ?? null,
        agentCardUrl: fields.agentCardUrl ?? null,
        skills: fields.skills ?? null,
        agentCardEtag: fields.agentCardEtag ?? null,
        agentCardFetchedAt: fields.agentCardFetchedAt ?? null,
        trustScore: 0,
        ratingCount: fields.ratingCount ?? 0,
        ratingSum: fields.ratingSum ?? 0,
        version: 1,
        changeSeq: 0, // assigned when written
        createdAt,
        updatedAt: fields.updatedAt ?? createdAt,
      };
      return normalize(row, at);
    },

    /** `current` with `changes` applied, as a change: version + 1, updated_at now, derived columns again (not yet written). */
    changedRow(current: AgentRow, changes: Partial<AgentRow>, at: Date = clock.now()): AgentRow {
      // A URL is parsed only when the source changed: 100,000 updates of a tagline parse none.
      return normalize({ ...current, ...changes, updatedAt: at.toISOString(), version: current.version + 1, changeSeq: 0 }, at, current);
    },

    /**
     * Writes creates and updates, in order, each with the next change_seq (set on
     * the given rows, which `newRow`/`changedRow` made), and records their events
     * when asked; returns the rows as written. In the caller's store transaction,
     * or in one of its own. The change_seqs are drawn and the rows written in one
     * step on SQLite (prepared statements under the write lock). On PostgreSQL the
     * rows are written with change_seq 0 and get theirs from the sequence as the
     * transaction commits (commitSeqsPg: only then, in the caller's transaction too,
     * are the returned rows' changeSeq set); a row written twice in one transaction
     * gets one. Events go through events.recordInTransaction, in the same transaction
     * (they carry no change_seq).
     */
    async write(list: readonly AgentWrite[], { emitEvents = false, via = 'moderator' }: AgentWriteOptions = {}): Promise<AgentRow[]> {
      if (list.length === 0) return [];
      const work = async () => {
        if (store.dialect === 'sqlite') {
          // One synchronous step: max + 1 and the rows, nothing between them.
          await store.run({
            run: () => {
              let seq = (statements().latest.get() as number) + 1;
              for (const write of list) writeSqlite(statements(), write, seq++);
              return { changes: list.length };
            },
          });
        } else {
          const cursor = pgCursor();
          if (cursor.held) {
            const seqs = await nextSeqsPg(list.length);
            list.forEach((write, i) => (rowOf(write).changeSeq = seqs[i]!));
          } else for (const write of list) cursor.pending.push({ id: rowOf(write).id, row: rowOf(write) });
          const { agents } = store.t;
          const created = list.flatMap((write) => (write.kind === 'create' ? [write.row] : []));
          if (created.length > 0) await store.run(store.db.insert(agents).values(created));
          for (const write of list) if (write.kind === 'update') await store.run(updateOf(write.next));
        }
        if (emitEvents)
          for (const write of list) for (const [type, data] of eventsOf(write, via)) await events.recordInTransaction(type, data);
        if (onCommitted) store.afterCommit(onCommitted);
        return list.map(rowOf);
      };
      return store.inTransaction ? work() : store.transaction(work);
    },

    /** max(change_seq) as the database has it now, 0 for none (not cached: see agent-changes for readers). */
    async latestChangeSeq(): Promise<number> {
      if (store.dialect === 'sqlite') return (await store.first({ get: () => ({ seq: statements().latest.get() as number }) }))!.seq;
      const [row] = await store.all<{ seq: string | number | null }>(sql`SELECT max(change_seq) AS seq FROM agents`);
      return Number(row?.seq ?? 0);
    },

    /**
     * max(change_seq) in the caller's store transaction, with the change cursor held until it
     * ends: no other agent write commits in between (SQLite: the transaction holds the write
     * lock; PostgreSQL: the advisory lock writers take to commit, see commitSeqsPg; the
     * transaction's own writes then draw their change_seqs at once). A bulk write that
     * planned from an earlier max checks it here. On PostgreSQL other writers wait for the
     * lock holding their rows: lock the rows you will update before (forUpdate), or a writer
     * of one of them and this transaction wait for each other (a deadlock, one fails).
     */
    async latestChangeSeqForWrite(): Promise<number> {
      await writes.holdCursor();
      return writes.latestChangeSeq();
    },

    /**
     * Holds the change cursor until the caller's store transaction ends: every agent write
     * another transaction committed is visible to what it reads next, and none commits until
     * this one has (SQLite: the transaction's write lock does that already). For a check that a
     * concurrent write could make wrong, made after this transaction's own writes
     * (submissions.approve: one listing per source). Once held, holding it again costs nothing.
     * PostgreSQL: lock the rows you will write later before (see latestChangeSeqForWrite).
     */
    async holdCursor(): Promise<void> {
      requireTransaction(store, 'agentWrites.holdCursor');
      if (store.dialect === 'postgres') await holdCursorPg(pgCursor());
    },

    /**
     * Bookkeeping columns that are no change of the agent (when its Agent Card was last fetched, its
     * ETag): no version, no change_seq. Only those columns are set, so no index is rewritten.
     */
    async touch(id: string, bookkeeping: Partial<Pick<AgentRow, 'agentCardEtag' | 'agentCardFetchedAt'>>): Promise<void> {
      const { agents } = store.t;
      await store.run(store.db.update(agents).set(bookkeeping).where(eq(agents.id, id)));
    },

    /** New trust scores (the age part moves daily), in one transaction: each a change like any other (change_seq), nothing else touched. */
    async setTrustScores(scores: readonly { id: string; score: number }[]): Promise<void> {
      if (scores.length === 0) return;
      await store.transaction(async () => {
        if (store.dialect === 'sqlite') {
          await store.run({
            run: () => {
              let seq = (statements().latest.get() as number) + 1;
              for (const { id, score } of scores) statements().updateTrust.run(score, seq++, id);
              return { changes: scores.length };
            },
          });
        } else {
          const cursor = pgCursor();
          const seqs = cursor.held ? await nextSeqsPg(scores.length) : undefined;
          const { agents } = store.t;
          for (const [i, { id, score }] of scores.entries()) {
            await store.run(store.db.update(agents).set({ trustScore: score, ...(seqs && { changeSeq: seqs[i]! }) }).where(eq(agents.id, id)));
            if (!seqs) cursor.pending.push({ id });
          }
        }
        if (onCommitted) store.afterCommit(onCommitted);
      });
    },
  };

  const updateOf = (row: AgentRow) => {
    const { agents } = store.t;
    const { id, ...values } = row;
    return store.db.update(agents).set(values).where(eq(agents.id, id));
  };

  /*
   * PostgreSQL's change cursor. A transaction draws its change_seqs from the sequence under a
   * transaction-scoped advisory lock held to its commit, so writers draw and commit one after
   * another: a reader that saw change_seq n never later finds a smaller one committed (with a
   * plain nextval a transaction that drew 10 can commit after one that drew 11, and a reader at
   * 11 would skip 10 for good). It draws them as it commits (commitSeqsPg, store.beforeCommit):
   * the lock covers the last two statements and the COMMIT, not the rows, events, deliveries and
   * audit entries written before, so writers run side by side until then. A transaction holding
   * the lock while it waits for a row would deadlock with a writer holding that row while it
   * waits for the lock; the lock is only taken once a write's rows are written, or
   * (latestChangeSeqForWrite) by a bulk write that locked its rows before.
   */
  /** This transaction's cursor state; registers commitSeqsPg to run before its COMMIT. */
  const pgCursor = (): PgCursor => store.beforeCommit<PgCursor>(PG_CURSOR, () => ({ held: false, pending: [] }), commitSeqsPg);

  /**
   * The cursor's lock, to the end of the transaction. (Rows written without the sequence, as
   * `cli copy-data` copies them, are counted past by copy-data, which moves the sequence.)
   */
  const holdCursorPg = async (cursor: PgCursor): Promise<void> => {
    if (cursor.held) return;
    await store.all(sql`SELECT pg_advisory_xact_lock(${CHANGE_SEQ_LOCK})`);
    cursor.held = true;
  };

  /** `count` change_seqs from the sequence, ascending; the transaction holds the cursor (holdCursorPg). */
  const nextSeqsPg = async (count: number): Promise<number[]> => {
    const rows = await store.all<{ seq: string | number }>(
      sql`SELECT nextval('agents_change_seq') AS seq FROM generate_series(1, ${count})`,
    );
    return rows.map((row) => Number(row.seq));
  };

  /**
   * Before COMMIT: the cursor's lock, then the pending rows' change_seqs, drawn in the order they
   * were written (one per row, the same for a row written twice) and set, in one statement; then
   * on the row objects `write` returned. One statement: from the moment the lock is granted, the
   * server runs to the end of it without waiting for this process, which then sends COMMIT. The
   * CTEs are MATERIALIZED (each runs once, whatever the plan) and `drawn` reads `locked`, so the
   * lock is held before anything is drawn.
   * A row a rolled-back savepoint took away is not there to update: its change_seq is skipped,
   * which no reader minds.
   */
  const commitSeqsPg = async (cursor: PgCursor): Promise<void> => {
    if (cursor.pending.length === 0) return;
    const ids = [...new Set(cursor.pending.map((pending) => pending.id))];
    const drawn = await store.all<{ id: string; seq: string | number }>(sql`
      WITH locked AS MATERIALIZED (SELECT pg_advisory_xact_lock(${CHANGE_SEQ_LOCK}) AS held),
      drawn AS MATERIALIZED (
        SELECT u.id, nextval('agents_change_seq') AS seq
          FROM locked, unnest(${sql.param(ids)}::text[]) WITH ORDINALITY AS u(id, n)
         ORDER BY u.n
      )
      UPDATE agents SET change_seq = drawn.seq FROM drawn WHERE agents.id = drawn.id RETURNING drawn.id, drawn.seq`);
    cursor.held = true;
    const seqOf = new Map(drawn.map((row) => [row.id, Number(row.seq)]));
    for (const { id, row } of cursor.pending.splice(0)) if (row) row.changeSeq = seqOf.get(id) ?? 0;
  };

  return writes;
}

/** The agents table's prepared statements (SQLite): 100,000 imported rows take about a second. */
function prepareSqlite(db: Db) {
  const latest = db.$client.prepare(`SELECT coalesce(max("${columns.changeSeq.name}"), 0) FROM "agents"`).pluck();
  const insertRow = db.$client.prepare(
    `INSERT INTO "agents" (${ALL_KEYS.map((key) => `"${columns[key].name}"`).join(', ')}) VALUES (${ALL_KEYS.map(() => '?').join(', ')})`,
  );
  const updateRow = db.$client.prepare(
    `UPDATE "agents" SET ${UPDATE_KEYS.map((key) => `"${columns[key].name}" = ?`).join(', ')} WHERE "${columns.id.name}" = ?`,
  );
  const updateTrust = db.$client.prepare(
    `UPDATE "agents" SET "${columns.trustScore.name}" = ?, "${columns.changeSeq.name}" = ? WHERE "${columns.id.name}" = ?`,
  );
  // The UPDATE of a change, by the columns it sets (a tagline edit, a review's rating, an owner's name: a few shapes).
  const updatesByColumns = new Map<string, Statement>();
  const updateColumns = (keys: readonly Key[]): Statement => {
    const shape = keys.join();
    let statement = updatesByColumns.get(shape);
    if (!statement) {
      if (updatesByColumns.size >= MAX_UPDATE_SHAPES) return updateRow;
      statement = db.$client.prepare(
        `UPDATE "agents" SET ${keys.map((key) => `"${columns[key].name}" = ?`).join(', ')} WHERE "${columns.id.name}" = ?`,
      );
      updatesByColumns.set(shape, statement);
    }
    return statement;
  };

  return { latest, insertRow, updateRow, updateTrust, updateColumns };
}

/** Prepared UPDATE shapes kept (a change of some other set of columns then sets every column). */
const MAX_UPDATE_SHAPES = 64;

type SqliteStatements = ReturnType<typeof prepareSqlite>;

const rowOf = (write: AgentWrite): AgentRow => (write.kind === 'create' ? write.row : write.next);

/** One create or update with its change_seq, by the prepared statements. */
function writeSqlite(statements: SqliteStatements, write: AgentWrite, seq: number): void {
  if (write.kind === 'create') {
    write.row.changeSeq = seq;
    statements.insertRow.run(...ALL_KEYS.map((key) => driverValue(write.row, key)));
  } else {
    const { current, next } = write;
    next.changeSeq = seq;
    // Only the columns that changed: SQLite rewrites the entry of every index on a column the SET
    // names, and the agents table has 13 (a review or a tagline edit touches 3-5 of them). Setting
    // the whole row took twice the time at 100,000 agents. `current` is the row as this
    // transaction read it (or, for an import, as it planned under the change cursor).
    const changed = UPDATE_KEYS.filter((key) => current[key] !== next[key] && driverValue(current, key) !== driverValue(next, key));
    const statement = statements.updateColumns(changed);
    if (statement === statements.updateRow) statement.run(...UPDATE_KEYS.map((key) => driverValue(next, key)), next.id);
    else statement.run(...changed.map((key) => driverValue(next, key)), next.id);
  }
}

type AgentEvent = [EventType, Record<string, unknown>];

/** The webhook events of a write, in order. */
function eventsOf(write: AgentWrite, via: string): AgentEvent[] {
  if (write.kind === 'create') {
    const { row } = write;
    if (!row.listed) return [];
    const created: AgentEvent[] = [['agent.registered', { agent_id: row.id, name: row.name, source_url: row.sourceUrl }]];
    if (row.verified) created.push(['agent.verified', { agent_id: row.id, name: row.name, via }]);
    return created;
  }
  const { next, changedFields } = write;
  // Becoming verified is its own event; the rest of the change is agent.updated.
  const becameVerified = next.verified && changedFields.includes('verified');
  const updated = becameVerified ? changedFields.filter((field) => field !== 'verified') : changedFields;
  const changed: AgentEvent[] = [];
  if (updated.length > 0) changed.push(['agent.updated', { agent_id: next.id, name: next.name, changed_fields: [...updated] }]);
  if (becameVerified) changed.push(['agent.verified', { agent_id: next.id, name: next.name, via }]);
  return changed;
}

export type AgentWrites = ReturnType<typeof createAgentWrites>;
