import { and, count, eq, inArray } from 'drizzle-orm';
import type { Store } from '../../db/store';
import { ConflictError, NotFoundError, StaleVersionError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { AgentsService } from '../agents/agents.service';
import { toNewClaim } from './claim-views';
import type { AdminClaim } from './claims.schemas';
import type { ClaimRow } from './claims.table';

export interface ModeratorOptions {
  /** The claim version the moderator last saw; a different current version is a 409 stale_version. */
  expectedVersion?: number;
}

export interface ClaimRowsDeps {
  store: Store;
  clock: Clock;
  agents: AgentsService;
}

/**
 * The claims table as the claims service's jobs share it: reading a row (locked, for a
 * decision), the checks before a decision, the one write of a claim (version and
 * updated_at bumped), and the moderators' view. Async, through the Store.
 */
export function createClaimRows({ store, clock, agents }: ClaimRowsDeps) {
  const byId = (id: string) => store.db.select().from(store.t.claims).where(eq(store.t.claims.id, id)).limit(1);

  const findRow = (id: string): Promise<ClaimRow | undefined> => store.first(byId(id));

  const requireRow = async (id: string): Promise<ClaimRow> => {
    const row = await findRow(id);
    if (!row) throw new NotFoundError('Claim', id);
    return row;
  };

  /**
   * The row read for a decision, inside the deciding transaction: locked on PostgreSQL (FOR
   * UPDATE), so two decisions on one claim queue and the second sees the first's outcome.
   */
  const lockRow = async (id: string): Promise<ClaimRow> => {
    const row = await store.first(store.forUpdate(byId(id)));
    if (!row) throw new NotFoundError('Claim', id);
    return row;
  };

  const requirePending = (row: ClaimRow, options: ModeratorOptions = {}): void => {
    if (options.expectedVersion !== undefined && options.expectedVersion !== row.version) throw new StaleVersionError('Claim', row.id);
    if (row.status !== 'pending')
      throw new ConflictError(`Claim "${row.id}" is already ${row.status}; only a pending claim can be verified or rejected`);
  };

  /** Writes `changes`, bumping version and updated_at. Call inside a store transaction, on a locked row. */
  const writeChanges = async (current: ClaimRow, changes: Partial<ClaimRow>): Promise<ClaimRow> => {
    const next: ClaimRow = { ...current, ...changes, version: current.version + 1, updatedAt: isoNow(clock) };
    await store.run(store.db.update(store.t.claims).set(next).where(eq(store.t.claims.id, current.id)));
    return next;
  };

  /** Pending claims per agent, for the agents of `rows`. */
  const pendingByAgent = async (rows: readonly ClaimRow[]): Promise<Map<string, number>> => {
    const agentIds = [...new Set(rows.map((row) => row.agentId))];
    if (agentIds.length === 0) return new Map();
    const { claims } = store.t;
    const counted = await store.rows(
      store.db
        .select({ agentId: claims.agentId, n: count() })
        .from(claims)
        .where(and(eq(claims.status, 'pending'), inArray(claims.agentId, agentIds)))
        .groupBy(claims.agentId),
    );
    return new Map(counted.map((entry) => [entry.agentId, entry.n]));
  };

  /** The console's view: everything, with the agent's name and how many other claims on it wait. */
  const toAdminClaims = async (rows: readonly ClaimRow[]): Promise<AdminClaim[]> => {
    const pending = await pendingByAgent(rows);
    const names = new Map<string, string | null>();
    for (const agentId of new Set(rows.map((row) => row.agentId))) names.set(agentId, (await agents.findRowAsync(agentId))?.name ?? null);
    return rows.map((row) => {
      const { instructions: _instructions, ...verification } = toNewClaim(row).verification;
      const competing = (pending.get(row.agentId) ?? 0) - (row.status === 'pending' ? 1 : 0);
      return {
        ...toNewClaim(row),
        agent_name: names.get(row.agentId) ?? null,
        competing_claims: competing,
        verification,
        version: row.version,
      };
    });
  };
  const toAdminClaim = async (row: ClaimRow): Promise<AdminClaim> => (await toAdminClaims([row]))[0]!;

  return { findRow, requireRow, lockRow, requirePending, writeChanges, toAdminClaims, toAdminClaim };
}

export type ClaimRows = ReturnType<typeof createClaimRows>;
