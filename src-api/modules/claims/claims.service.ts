import { and, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import { byteOrder } from '../../db/dialect-sql';
import type { Store } from '../../db/store';
import { AppError, ConflictError, QuotaExceededError } from '../../errors';
import { isoNow, type Clock } from '../../lib/clock';
import { randomToken, type IdGenerator } from '../../lib/ids';
import type { DnsResolver } from '../../lib/dns-resolver';
import type { SafeFetch } from '../../lib/safe-fetch';
import type { Page } from '../../lib/schemas';
import type { AgentsService } from '../agents/agents.service';
import type { AuditService } from '../audit/audit.service';
import type { EventsService } from '../events/events.service';
import { createClaimDecisions } from './claim-decisions';
import { createClaimRows, type ModeratorOptions } from './claim-rows';
import { toNewClaim, toPublicClaim } from './claim-views';
import { type AdminClaim, type CreateClaimInput, type ListClaimsQuery, type NewClaim, type PublicClaim } from './claims.schemas';
import type { ClaimRow, ClaimStatus, ProofMethod } from './claims.table';
import { createOwnershipRecheck } from './ownership-recheck';
import { proofMethodsFor } from './proof-methods';
import type { QueueMailInput } from '../mail/mail.service';

export type { ModeratorOptions } from './claim-rows';
export { SYSTEM_ACTOR } from './claim-decisions';

/*
 * The claims service, by job: this file makes and lists claims (quotas, tokens, the console's
 * list and counts) and wires the rest; claim-decisions.ts checks proofs and decides (verified,
 * superseded, rejected); claim-rows.ts is the table's one write and the moderators' view;
 * ownership-recheck.ts re-checks verified ownership.
 */

export interface ClaimsServiceDeps {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  agents: AgentsService;
  audit: AuditService;
  /** Records `claim.approved` in the approving transaction. */
  events: EventsService;
  /** Fetches proof files (services.safeFetch: private addresses per `--allow-private-urls`, capped in flight). */
  fetch: SafeFetch;
  /** Deadline of one fetch of a proof file (`config.claimCheckTimeoutMs`). */
  verifyTimeoutMs: number;
  /** Largest proof file read; a larger one is refused as too large. Default 64 KiB. */
  verifyMaxBytes?: number;
  /** Answers the dns-txt proofs (`AGENTDIR_DNS_SERVERS`). */
  resolver: DnsResolver;
  /** Raw-file origins of the forges by host (`AGENTDIR_FORGE_RAW_BASES`); empty: the real ones. */
  forgeRawBases: Record<string, string>;
  /** When a verified claim's proof is first re-checked after verification (`config.ownershipRecheckIntervalMs`). */
  recheckIntervalMs: number;
  /** Enforce the quotas of contract section 3 (off with the rate limits). */
  quotas: boolean;
  /** The account a verified claim makes owner, as profiles and mails name it (undefined once the account is gone). */
  accountOf: (accountId: string) => Promise<{ name: string; email: string } | undefined>;
  /** Failed re-checks in a row that take the agent's verified mark away (`config.ownershipRecheckStrikes`). */
  recheckStrikes: number;
  /** Queues a mail in the caller's store transaction (MailService.queueInTransaction). */
  queueMail: (mail: QueueMailInput) => Promise<unknown>;
}

/** Who is asking, for quotas and ownership. */
export interface ClaimantContext {
  /** The client IP key. */
  clientKey?: string;
  /** The signed-in account, when there is one. */
  accountId?: string;
}

/** Pending claims one client may have at once (contract section 3). */
export const MAX_PENDING_CLAIMS_PER_CLIENT = 5;

/** A claim whose agent's source admits no proof (a forge URL naming no repository). */
export class UnprovableSourceError extends AppError {
  constructor(sourceUrl: string) {
    super(
      422,
      'unprovable_source',
      'No proof fits this source',
      `The agent's source ${sourceUrl} names no repository, so ownership cannot be proven automatically; ask a moderator to fix the source URL.`,
    );
  }
}

export const DEFAULT_VERIFY_MAX_BYTES = 64 * 1024;
export const CLAIM_TOKEN_PREFIX = 'adclaim-';

export function createClaimsService({
  store,
  clock,
  ids,
  agents,
  audit,
  events,
  fetch,
  verifyTimeoutMs,
  verifyMaxBytes = DEFAULT_VERIFY_MAX_BYTES,
  resolver,
  forgeRawBases,
  recheckIntervalMs,
  quotas,
  accountOf,
  recheckStrikes,
  queueMail,
}: ClaimsServiceDeps) {
  const methodsOf = (sourceUrl: string, token: string): ProofMethod[] => proofMethodsFor(sourceUrl, token, forgeRawBases);
  const { claims } = store.t;
  const rows = createClaimRows({ store, clock, agents });
  const { requireRow, writeChanges, toAdminClaim, toAdminClaims } = rows;
  const decisions = createClaimDecisions({
    store,
    clock,
    agents,
    audit,
    events,
    rows,
    methodsOf,
    fetch,
    resolver,
    verifyTimeoutMs,
    verifyMaxBytes,
    recheckIntervalMs,
    accountOf,
  });
  const { checkAll, runCheck } = decisions;

  /** Contract section 3: at most 5 pending claims per client; one pending claim per account and agent. */
  const enforceQuotas = async (agentId: string, who: ClaimantContext): Promise<void> => {
    if (who.accountId) {
      const mine = await store.first(
        store.db
          .select({ id: claims.id })
          .from(claims)
          .where(and(eq(claims.agentId, agentId), eq(claims.accountId, who.accountId), eq(claims.status, 'pending')))
          .limit(1),
      );
      if (mine) throw new ConflictError(`You already have a pending claim on agent "${agentId}" (${mine.id}); verify or wait for it`);
    }
    if (who.clientKey) {
      const pending = (
        await store.first(
          store.db
            .select({ n: count() })
            .from(claims)
            .where(and(eq(claims.clientKey, who.clientKey), eq(claims.status, 'pending'))),
        )
      )?.n;
      if ((pending ?? 0) >= MAX_PENDING_CLAIMS_PER_CLIENT) {
        throw new QuotaExceededError(
          `At most ${MAX_PENDING_CLAIMS_PER_CLIENT} pending claims per client; verify or withdraw one before claiming another agent`,
        );
      }
    }
  };

  const rechecks = createOwnershipRecheck({
    store,
    clock,
    agents,
    audit,
    methodsOf,
    checkAll,
    writeChanges,
    queueMail,
    accountOf,
    intervalMs: recheckIntervalMs,
    strikes: recheckStrikes,
  });

  return {
    toPublicClaim,

    /** The weekly re-check of verified ownership (ownership-recheck.ts); run hourly by the server. */
    recheckDue: rechecks.recheckDue,

    /** A new pending claim on a listed, not yet verified agent, with its token and every proof that fits. */
    create(input: CreateClaimInput, who: ClaimantContext = {}): Promise<NewClaim> {
      return store.transaction(async () => {
        // The agent's row is locked (PostgreSQL) as a decision on its claims locks it: a claim made while
        // another is being verified waits, and then finds the agent verified. Listed agents only.
        const agent = await agents.edits.lockRow(input.agent_id);
        if (agent.verified) throw new ConflictError(`Agent "${agent.id}" is already verified; it cannot be claimed again`);
        if (quotas) await enforceQuotas(agent.id, who);
        const token = `${CLAIM_TOKEN_PREFIX}${randomToken(32)}`;
        const methods = methodsOf(agent.sourceUrl, token);
        if (methods.length === 0) throw new UnprovableSourceError(agent.sourceUrl);
        const now = isoNow(clock);
        const row: ClaimRow = {
          id: ids.next('clm'),
          agentId: agent.id,
          claimantName: input.claimant_name,
          claimantEmail: input.claimant_email,
          status: 'pending',
          token,
          verificationUrl: methods[0]!.url ?? '',
          methods,
          verifiedMethod: null,
          accountId: who.accountId ?? null,
          clientKey: who.clientKey ?? null,
          nextRecheckAt: null,
          recheckFailures: 0,
          lastCheck: null,
          verifiedBy: null,
          reason: null,
          version: 1,
          createdAt: now,
          updatedAt: now,
          decidedAt: null,
        };
        await store.run(store.db.insert(claims).values(row));
        return toNewClaim(row);
      });
    },

    /** The public view of a claim (for claimants polling). */
    async getPublic(id: string): Promise<PublicClaim> {
      return toPublicClaim(await requireRow(id));
    },

    /**
     * `POST /claims/{id}/verify`: fetch the well-known file; verified when it holds the token,
     * else VerificationFailedError (422) with what was found, the claim staying pending.
     */
    async verify(id: string): Promise<PublicClaim> {
      return toPublicClaim(await runCheck(id, {}));
    },

    // ── Console (moderators) ────────────────────────────────────────────────

    /** Claims, newest first (or grouped by agent), optionally of one status or agent. */
    async list(query: ListClaimsQuery): Promise<Page<AdminClaim>> {
      const filters: SQL[] = [];
      if (query.status) filters.push(eq(claims.status, query.status));
      if (query.agent_id) filters.push(eq(claims.agentId, query.agent_id));
      const where = filters.length ? and(...filters) : undefined;
      // An agent's place is that of its newest claim (of the same status), so its claims stay together across pages.
      const groupOrder = query.group_by_agent
        ? [
            sql`(select max(other.created_at) from ${claims} as other where other.agent_id = ${claims.agentId}${
              query.status ? sql` and other.status = ${claims.status}` : sql``
            }) desc`,
            byteOrder(store, claims.agentId),
          ]
        : [];
      const found = await store.rows(
        store.db
          .select()
          .from(claims)
          .where(where)
          .orderBy(...groupOrder, desc(claims.createdAt), desc(byteOrder(store, claims.id)))
          .limit(query.limit)
          .offset((query.page - 1) * query.limit),
      );
      const total = (await store.first(store.db.select({ n: count() }).from(claims).where(where)))?.n ?? 0;
      return { items: await toAdminClaims(found), page: query.page, limit: query.limit, total };
    },

    /** Everything about a claim, token and e-mail address included. */
    async get(id: string): Promise<AdminClaim> {
      return toAdminClaim(await requireRow(id));
    },

    /** Runs the automatic check now, on a moderator's behalf (audited); throws VerificationFailedError like verify. */
    async verifyNow(id: string, actor: string, options: ModeratorOptions = {}): Promise<AdminClaim> {
      return toAdminClaim(await runCheck(id, { ...options, actor }));
    },

    /** A moderator vouches for the claim without a proof (verified_by "manual"). */
    async verifyManually(id: string, actor: string, note?: string, options: ModeratorOptions = {}): Promise<AdminClaim> {
      return toAdminClaim(await decisions.verifyManually(id, actor, note, options));
    },

    /** A moderator turns the claim down; the reason is shown to the claimant. */
    async reject(id: string, reason: string, actor: string, options: ModeratorOptions = {}): Promise<AdminClaim> {
      return toAdminClaim(await decisions.reject(id, reason, actor, options));
    },

    /** How many claims are in each status (the console's tab counts). */
    async countByStatus(): Promise<Record<ClaimStatus, number>> {
      const counts: Record<ClaimStatus, number> = { pending: 0, verified: 0, rejected: 0 };
      const rows = await store.rows(store.db.select({ status: claims.status, n: count() }).from(claims).groupBy(claims.status));
      for (const row of rows) counts[row.status] = row.n;
      return counts;
    },

    async countPending(): Promise<number> {
      return (await store.first(store.db.select({ n: count() }).from(claims).where(eq(claims.status, 'pending'))))?.n ?? 0;
    },
  };
}

export type ClaimsService = ReturnType<typeof createClaimsService>;
