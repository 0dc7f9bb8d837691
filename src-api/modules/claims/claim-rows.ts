import { and, count, eq, inArray } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { ConflictError, NotFoundError, StaleVersionError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import type { AgentsService } from '../agents/agents.service';
import { toNewClaim } from './claim-views';
import type { AdminClaim } from './claims.schemas';
import { claims, type ClaimRow } from './claims.table';

export interface ModeratorOptions {
  /** The claim version the moderator last saw; a different current version is a 409 stale_version. */
  expectedVersion?: number;
}

export interface ClaimRowsDeps {
  db: Db;
  clock: Clock;
  agents: AgentsService;
}

/**
 * The claims table as the claims service's jobs share it: reading a row, the checks before a
 * decision, the one write of a claim (version and updated_at bumped), and the moderators' view.
 */
export function createClaimRows({ db, clock, agents }: ClaimRowsDeps) {
  const findRow = (id: string): ClaimRow | undefined => db.select().from(claims).where(eq(claims.id, id)).get();

  const requireRow = (id: string): ClaimRow => {
    const row = findRow(id);
    if (!row) throw new NotFoundError('Claim', id);
    return row;
  };

  const requirePending = (row: ClaimRow, options: ModeratorOptions = {}): void => {
    if (options.expectedVersion !== undefined && options.expectedVersion !== row.version) throw new StaleVersionError('Claim', row.id);
    if (row.status !== 'pending')
      throw new ConflictError(`Claim "${row.id}" is already ${row.status}; only a pending claim can be verified or rejected`);
  };

  /** Writes `changes`, bumping version and updated_at. Call inside a transaction. */
  const writeChanges = (current: ClaimRow, changes: Partial<ClaimRow>): ClaimRow => {
    const next: ClaimRow = { ...current, ...changes, version: current.version + 1, updatedAt: isoNow(clock) };
    db.update(claims).set(next).where(eq(claims.id, current.id)).run();
    return next;
  };

  /** Pending claims per agent, for the agents of `rows`. */
  const pendingByAgent = (rows: readonly ClaimRow[]): Map<string, number> => {
    const agentIds = [...new Set(rows.map((row) => row.agentId))];
    if (agentIds.length === 0) return new Map();
    const counted = db
      .select({ agentId: claims.agentId, n: count() })
      .from(claims)
      .where(and(eq(claims.status, 'pending'), inArray(claims.agentId, agentIds)))
      .groupBy(claims.agentId)
      .all();
    return new Map(counted.map((entry) => [entry.agentId, entry.n]));
  };

  /** The console's view: everything, with the agent's name and how many other claims on it wait. */
  const toAdminClaims = (rows: readonly ClaimRow[]): AdminClaim[] => {
    const pending = pendingByAgent(rows);
    return rows.map((row) => {
      const { instructions: _instructions, ...verification } = toNewClaim(row).verification;
      const competing = (pending.get(row.agentId) ?? 0) - (row.status === 'pending' ? 1 : 0);
      const agentName = agents.findRow(row.agentId)?.name ?? null;
      return { ...toNewClaim(row), agent_name: agentName, competing_claims: competing, verification, version: row.version };
    });
  };
  const toAdminClaim = (row: ClaimRow): AdminClaim => toAdminClaims([row])[0]!;

  return { findRow, requireRow, requirePending, writeChanges, toAdminClaims, toAdminClaim };
}

export type ClaimRows = ReturnType<typeof createClaimRows>;
