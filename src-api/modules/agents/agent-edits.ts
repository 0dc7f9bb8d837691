import { eq } from 'drizzle-orm';
import { requireTransaction, type Store } from '../../db/store';
import { isoNow, systemClock, type Clock } from '../../lib/clock';
import { createIdGenerator, type IdGenerator } from '../../lib/ids';
import { NotFoundError, StaleVersionError } from '../../errors';
import type { AuditEntry, AuditService } from '../audit/audit.service';
import { toAdminAgent } from './agent-profile';
import { gatedRead } from './agent-rows';
import type { AgentChange, AgentWrite, AgentWrites } from './agent-writes';
import type { AgentInput, AgentPatch } from './agents.schemas';
import type { AgentCardFields } from './agents.service';
import type { AgentRow, AgentStatus } from './agents.table';

/**
 * The agent writes other modules call: the moderators' edits (profile fields,
 * verified, status, listed) as plans (what an edit changes, which events it
 * records and what it audits, decided once from the current row) and the owner
 * hooks' writes. `createAgentEdits` carries them out on either store, in the
 * caller's store transaction when there is one (a savepoint) or in one of its
 * own: `services.agents.edits.*`.
 */

export interface EditOptions {
  /** Who did it, for the audit log; omitted for public and system writes. */
  actor?: string;
  /** Record the contract's webhook event (false for demo seeding and plain imports). */
  emitEvents?: boolean;
  /** The version the caller last saw; a different current version is a conflict. */
  expectedVersion?: number;
  /** How an agent became verified, for `agent.verified`. */
  via?: string;
}

/** What an edit does to `current`: a change to write (none: nothing changed) and an audit entry (with an actor). */
export interface EditPlan {
  changes?: Partial<AgentRow>;
  changedFields: readonly string[];
  audit?: (next: AgentRow) => AuditEntry;
}

export type Edit = (current: AgentRow) => EditPlan;

const PROFILE_FIELD_NAMES: Record<string, string> = {
  name: 'name',
  tagline: 'tagline',
  description: 'description',
  author: 'author',
  capabilities: 'capabilities',
  categories: 'categories',
  type: 'type',
  sourceUrl: 'source_url',
};

/** The row columns an edit of profile fields sets. */
export function profileChanges(patch: AgentPatch): Partial<AgentRow> {
  const changes: Partial<AgentRow> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.tagline !== undefined) changes.tagline = patch.tagline;
  if (patch.description !== undefined) changes.description = patch.description;
  if (patch.author !== undefined) changes.author = patch.author;
  if (patch.capabilities !== undefined) changes.capabilities = patch.capabilities;
  if (patch.categories !== undefined) changes.categories = patch.categories;
  if (patch.type !== undefined) changes.type = patch.type;
  if (patch.source_url !== undefined) changes.sourceUrl = patch.source_url;
  return changes;
}

export function changedProfileFields(current: AgentRow, changes: Partial<AgentRow>): string[] {
  return Object.entries(changes)
    .filter(([key, value]) => key in PROFILE_FIELD_NAMES && JSON.stringify(current[key as keyof AgentRow]) !== JSON.stringify(value))
    .map(([key]) => PROFILE_FIELD_NAMES[key]!);
}

const audited = (actor: string | undefined, entry: (next: AgentRow) => Omit<AuditEntry, 'actor'>) =>
  actor ? (next: AgentRow) => ({ actor, ...entry(next) }) : undefined;

/** Profile fields; `agent.updated` with the names of the changed fields. Unchanged without an expected version: nothing. */
export const updateEdit =
  (patch: AgentPatch, options: EditOptions): Edit =>
  (current) => {
    const changes = profileChanges(patch);
    const changedFields = changedProfileFields(current, changes);
    if (changedFields.length === 0 && options.expectedVersion === undefined) return { changedFields };
    return {
      changes,
      changedFields,
      audit: audited(options.actor, (next) => ({
        action: 'agent.update',
        entityType: 'agent',
        entityId: current.id,
        before: toAdminAgent(current),
        after: toAdminAgent(next),
      })),
    };
  };

/** Verified (`agent.verified`) or not (`agent.updated`), with the owner whose claim proved it. */
export const verifiedEdit =
  (verified: boolean, options: EditOptions & { owner?: { accountId: string; name: string } }): Edit =>
  (current) => {
    const owner = options.owner;
    const ownerChanges =
      owner && (owner.accountId !== current.ownerAccountId || owner.name !== current.ownerName)
        ? { ownerAccountId: owner.accountId, ownerName: owner.name }
        : {};
    if (current.verified === verified && Object.keys(ownerChanges).length === 0) return { changedFields: [] };
    return {
      changes: { verified, ...ownerChanges },
      changedFields: ['verified'],
      audit: audited(options.actor, () => ({
        action: verified ? 'agent.verify' : 'agent.unverify',
        entityType: 'agent',
        entityId: current.id,
        before: { verified: current.verified, ...(owner && { owner_account_id: current.ownerAccountId }) },
        after: { verified, ...(owner && { owner_account_id: owner.accountId }) },
      })),
    };
  };

/** Deprecated with a message, or active again; `agent.updated`. */
export const statusEdit =
  (status: AgentStatus, message: string | null, options: EditOptions): Edit =>
  (current) => {
    const statusMessage = status === 'active' ? null : message?.trim() || null;
    if (current.status === status && current.statusMessage === statusMessage) return { changedFields: [] };
    return {
      changes: { status, statusMessage },
      changedFields: ['status', 'status_message'],
      audit: audited(options.actor, () => ({
        action: status === 'deprecated' ? 'agent.deprecate' : 'agent.activate',
        entityType: 'agent',
        entityId: current.id,
        before: { status: current.status, status_message: current.statusMessage },
        after: { status, status_message: statusMessage },
      })),
    };
  };

/** Hidden from the public API, or listed again. */
export const listedEdit =
  (listed: boolean, options: EditOptions): Edit =>
  (current) => {
    if (current.listed === listed) return { changedFields: [] };
    return {
      changes: { listed },
      changedFields: ['listed'],
      audit: audited(options.actor, () => ({
        action: listed ? 'agent.list' : 'agent.unlist',
        entityType: 'agent',
        entityId: current.id,
        before: { listed: current.listed },
        after: { listed },
      })),
    };
  };

/**
 * The owner hooks' writes (no webhook event: the listing itself did not change), decided once from the
 * owner's agents: its new name on each profile that shows another one (accounts.rename), or no owner
 * at all (accounts.close); `createAgentEdits` writes these.
 */
export const ownerRenamed = (name: string) => (current: AgentRow): Partial<AgentRow> | undefined =>
  current.ownerName !== name ? { ownerName: name } : undefined;
export const ownerDetached = (): Partial<AgentRow> => ({ ownerAccountId: null, ownerName: null });

export function ownerWrites(
  writes: AgentWrites,
  owned: readonly AgentRow[],
  changesOf: (current: AgentRow) => Partial<AgentRow> | undefined,
): AgentWrite[] {
  return owned.flatMap((current) => {
    const changes = changesOf(current);
    return changes ? [{ kind: 'update' as const, current, next: writes.changedRow(current, changes), changedFields: [] }] : [];
  });
}

/** A review folded into the rating aggregate (and so the trust score), or taken out of it: no webhook event. */
export function ratingChange(writes: AgentWrites, current: AgentRow, deltaCount: number, deltaSum: number): AgentChange {
  const changes = { ratingCount: current.ratingCount + deltaCount, ratingSum: current.ratingSum + deltaSum };
  return { current, next: writes.changedRow(current, changes), changedFields: [] };
}

export interface CreateOptions extends EditOptions {
  /** The new agent's id (default: one made from its name). */
  id?: string;
  createdAt?: string;
  /** Submitted by Agent Card: its URL, skills and ETag (fetched now). */
  card?: AgentCardFields;
}

/** A new agent's complete row (not yet written), from the submitted fields. */
export function newAgentRow(writes: AgentWrites, ids: IdGenerator, clock: Clock, input: AgentInput, options: CreateOptions): AgentRow {
  return writes.newRow({
    id: options.id ?? ids.agent(input.name),
    name: input.name,
    tagline: input.tagline,
    description: input.description,
    author: input.author,
    capabilities: input.capabilities,
    categories: input.categories,
    type: input.type,
    sourceUrl: input.source_url,
    agentCardUrl: options.card?.url ?? null,
    skills: options.card?.skills ?? null,
    agentCardEtag: options.card?.etag ?? null,
    agentCardFetchedAt: options.card ? isoNow(clock) : null,
    ...(options.createdAt && { createdAt: options.createdAt }),
  });
}

export const createdAudit = (actor: string, row: AgentRow): AuditEntry => ({
  actor,
  action: 'agent.create',
  entityType: 'agent',
  entityId: row.id,
  after: toAdminAgent(row),
});

/** The change a plan writes (version checked first), or undefined when it changes nothing. */
export function changeOf(writes: AgentWrites, current: AgentRow, plan: EditPlan, options: EditOptions): AgentChange | undefined {
  if (!plan.changes) return undefined;
  if (options.expectedVersion !== undefined && options.expectedVersion !== current.version) {
    throw new StaleVersionError('Agent', current.id);
  }
  return { current, next: writes.changedRow(current, plan.changes), changedFields: plan.changedFields };
}

/**
 * The edits, async on either store: the row is read locked (FOR UPDATE on PostgreSQL, so two
 * moderators' edits queue rather than one losing the other's), the change written by
 * writes.write with its events, the audit entry by audit.recordInTransaction, all in one
 * store transaction.
 */
export interface AgentEditsDeps {
  store: Store;
  writes: AgentWrites;
  audit: AuditService;
  /** Defaults (the system clock, random ids) for suites that build the edits alone. */
  clock?: Clock;
  ids?: IdGenerator;
  /** SQLite: the row by id through a prepared statement (agent-rows), cheaper than building the select per call. */
  rowByIdSync?: (id: string) => AgentRow | undefined;
}

export function createAgentEdits({ store, writes, audit, clock = systemClock, ids = createIdGenerator(), rowByIdSync }: AgentEditsDeps) {
  /** The row, locked until the caller's transaction ends (PostgreSQL: FOR UPDATE; SQLite: its transaction holds the only write lock). */
  const lockedRow = (id: string): Promise<AgentRow | undefined> => {
    if (store.dialect === 'sqlite' && rowByIdSync) return gatedRead(store, () => rowByIdSync(id));
    const { agents } = store.t;
    return store.first(store.forUpdate(store.db.select().from(agents).where(eq(agents.id, id)).limit(1)));
  };
  const requireLocked = async (id: string, includeUnlisted: boolean): Promise<AgentRow> => {
    const current = await lockedRow(id);
    if (!current || (!current.listed && !includeUnlisted)) throw new NotFoundError('Agent', id);
    return current;
  };

  const apply = (id: string, edit: Edit, options: EditOptions): Promise<AgentRow> =>
    store.transaction(async () => {
      const current = await requireLocked(id, true);
      const plan = edit(current);
      const change = changeOf(writes, current, plan, options);
      if (!change) return current;
      const [next] = await writes.write([{ kind: 'update', ...change }], {
        emitEvents: options.emitEvents !== false,
        via: options.via,
      });
      if (plan.audit) await audit.recordInTransaction(plan.audit(next!));
      return next!;
    });

  /** The owner's agents, locked (PostgreSQL) until the caller's transaction ends, then the hook's writes. */
  const rewriteOwned = (accountId: string, changesOf: (current: AgentRow) => Partial<AgentRow> | undefined): Promise<void> =>
    store.transaction(async () => {
      const { agents } = store.t;
      const owned = await store.rows(store.forUpdate(store.db.select().from(agents).where(eq(agents.ownerAccountId, accountId))));
      await writes.write(ownerWrites(writes, owned, changesOf));
    });

  return {
    /**
     * Lists a new agent (`agent.registered` unless `emitEvents` is false; audited with an actor), in
     * the caller's store transaction (approving a submission) or in one of its own.
     */
    create: (input: AgentInput, options: CreateOptions = {}): Promise<AgentRow> =>
      store.transaction(async () => {
        const [row] = await writes.write([{ kind: 'create', row: newAgentRow(writes, ids, clock, input, options) }], {
          emitEvents: options.emitEvents !== false,
        });
        if (options.actor) await audit.recordInTransaction(createdAudit(options.actor, row!));
        return row!;
      }),

    update: (id: string, patch: AgentPatch, options: EditOptions = {}) => apply(id, updateEdit(patch, options), options),
    setVerified: (id: string, verified: boolean, options: EditOptions & { owner?: { accountId: string; name: string } } = {}) =>
      apply(id, verifiedEdit(verified, options), options),
    setStatus: (id: string, status: AgentStatus, message: string | null, options: EditOptions = {}) =>
      apply(id, statusEdit(status, message, options), options),
    setListed: (id: string, listed: boolean, options: EditOptions = {}) => apply(id, listedEdit(listed, options), options),
    /** An owner account's new name on each of its agents' profiles (no webhook); in the caller's transaction (accounts.rename). */
    renameOwner: (accountId: string, name: string): Promise<void> => rewriteOwned(accountId, ownerRenamed(name)),
    /** A closed owner account: its agents stay, without an owner (no webhook); in the closing transaction (accounts.close). */
    detachOwner: (accountId: string): Promise<void> => rewriteOwned(accountId, ownerDetached),

    /**
     * The agent's row, locked until the caller's store transaction ends (call inside one): a listed
     * agent, or any with `includeUnlisted`, else a NotFoundError. Writers that read the row before
     * changing it (reviews: the rating) take it here first, so concurrent ones queue on PostgreSQL.
     */
    lockRow(id: string, { includeUnlisted = false }: { includeUnlisted?: boolean } = {}): Promise<AgentRow> {
      requireTransaction(store, 'agents.edits.lockRow');
      return requireLocked(id, includeUnlisted);
    },

    /** The agents' change cursor held to the end of the caller's transaction (agent-writes.holdCursor). */
    holdChangeCursor: (): Promise<void> => writes.holdCursor(),

    /**
     * Folds a review into the rating aggregate and trust score (a change: version, change_seq; no
     * event), or takes a hidden one out. `current`: the row as lockRow read it in this transaction.
     */
    async applyRating(current: AgentRow, deltaCount: number, deltaSum: number): Promise<AgentRow> {
      requireTransaction(store, 'agents.edits.applyRating');
      const [next] = await writes.write([{ kind: 'update', ...ratingChange(writes, current, deltaCount, deltaSum) }]);
      return next!;
    },

    /**
     * A re-fetched Agent Card (fetched before, never inside the transaction): its profile fields and
     * skills; a change is an `agent.updated` (with the changed fields, `skills` among them). The fetch
     * time and ETag are kept either way. `actor`: the moderator who asked for the fetch (audited);
     * none for the weekly re-fetch.
     */
    applyAgentCard(id: string, patch: AgentPatch, card: AgentCardFields, { actor }: { actor?: string } = {}): Promise<AgentRow> {
      return store.transaction(async () => {
        const current = await requireLocked(id, true);
        const changes = profileChanges(patch);
        const fields = changedProfileFields(current, changes);
        const skillsChanged = JSON.stringify(current.skills ?? []) !== JSON.stringify(card.skills);
        const bookkeeping = { agentCardEtag: card.etag, agentCardFetchedAt: isoNow(clock) };
        const changedFields = [...fields, ...(skillsChanged ? ['skills'] : [])];
        if (changedFields.length === 0) {
          await writes.touch(id, bookkeeping);
          return { ...current, ...bookkeeping };
        }
        const next = writes.changedRow(current, { ...changes, ...(skillsChanged && { skills: card.skills }), ...bookkeeping });
        const [written] = await writes.write([{ kind: 'update', current, next, changedFields }], { emitEvents: true });
        if (actor && fields.length > 0) {
          await audit.recordInTransaction({
            actor,
            action: 'agent.update',
            entityType: 'agent',
            entityId: id,
            before: toAdminAgent(current),
            after: toAdminAgent(written!),
          });
        }
        return written!;
      });
    },

    /** An Agent Card that answered 304 (or failed): only when it was last looked at changes (no version, no change_seq), not the profile. */
    touchAgentCard(id: string): Promise<void> {
      return store.transaction(async () => {
        const current = await lockedRow(id);
        if (current) await writes.touch(id, { agentCardFetchedAt: isoNow(clock) });
      });
    },
  };
}

export type AgentEdits = ReturnType<typeof createAgentEdits>;
