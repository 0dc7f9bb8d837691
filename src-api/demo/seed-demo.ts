import { eq } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Store } from '../db/store';
import { createIdGenerator, randomToken, seededRandomBytes, slugify, type IdGenerator } from '../lib/ids';
import { sourceUrlKey } from '../lib/urls';
import { AGENT_TYPES, type AgentType } from '../modules/agents/agents.schemas';
import type { AgentRow } from '../modules/agents/agents.table';
import { CLAIM_TOKEN_PREFIX } from '../modules/claims/claims.service';
import { proofMethodsFor } from '../modules/claims/proof-methods';
import type { ClaimRow } from '../modules/claims/claims.table';
import type { EventType } from '../modules/events/events.table';
import { generateMarketingContent, type GeneratedContent, type PostReview } from '../modules/marketing/marketing.generator';
import { emailKeyOf } from '../modules/newsletter/newsletter.service';
import type { NewsletterSubscriberRow } from '../modules/newsletter/newsletter.table';
import type { ReviewRow } from '../modules/reviews/reviews.table';
import type { SubmissionRow } from '../modules/submissions/submissions.table';
import type { Services } from '../services';
import { createDemoRandom, type DemoRandom } from './demo-random';
import {
  AUTHORS,
  CLAIM_CHECK_FAILURES,
  DEPLOY_MODES,
  DESCRIPTION_AUDIENCES,
  DESCRIPTION_EXTRAS,
  DESCRIPTION_MIDDLES,
  EMAIL_DOMAINS,
  FIRST_NAMES,
  GENERAL_CAPABILITIES,
  GENERAL_CATEGORIES,
  INTEGRATIONS,
  LAST_NAMES,
  LICENSES,
  REJECTION_REASONS,
  REVIEW_COMMENTS,
  REVIEWER_HANDLES,
  TYPE_PROFILES,
} from './demo-words';

/**
 * The demo directory: a realistic, deterministic data set that `serve` seeds
 * into an empty database. Every value comes from a fixed seed and a fixed
 * base date, so every machine gets the same rows (trust scores are computed
 * at the base date; the server refreshes them to "now" right after seeding).
 * Everything is written in one transaction; agents through their write path
 * (agent-writes.ts), without events: demo seeding sends no webhooks. Marketing posts still come from the same
 * generator as live events, fed with synthetic events.
 */

export const DEMO_SEED = 20_261_101;
/** "Now" for the demo: created_at values spread over the 18 months before it. */
export const DEMO_BASE_DATE = '2026-11-01T12:00:00.000Z';

export const DEMO_SIZES = {
  agents: 400,
  unlistedAgents: 6,
  reviews: 1500,
  pendingSubmissions: 25,
  approvedSubmissions: 18,
  rejectedSubmissions: 12,
  pendingClaims: 10,
  rejectedClaims: 4,
  subscribers: 200,
  /** Months of history behind the base date. */
  historyDays: 548,
  /** Registrations and verifications this recent get marketing posts. */
  marketingDays: 60,
  /** Share of recent 4- and 5-star reviews that get posts. */
  promotedReviewShare: 0.2,
} as const;

export interface DemoSummary {
  agents: number;
  reviews: number;
  submissions: number;
  claims: number;
  subscribers: number;
  posts: number;
  abTests: number;
}

export interface SeedDemoOptions {
  seed?: number;
  /** ISO date-time the demo treats as "now". */
  baseDate?: string;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MODERATOR = 'moderator';

interface DemoAuthor {
  name: string;
  slug: string;
  isPerson: boolean;
  specialties: AgentType[];
  weight: number;
}

interface DemoAgent {
  row: AgentRow;
  author: DemoAuthor;
  quality: number;
  popularity: number;
  /** When the claim that verified it was approved. */
  verifiedAt?: number;
}

interface SyntheticEvent {
  type: EventType;
  at: number;
  agent: DemoAgent;
  review?: PostReview;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function fill(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (match, key: string) => vars[key] ?? match);
}

function humanize(tag: string): string {
  return tag.replace(/-/g, ' ');
}

function listPhrase(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function fourthPower(x: number): number {
  const square = x * x;
  return square * square;
}

async function insertAll(store: Store, table: SQLiteTable, rows: readonly object[], chunk = 250): Promise<void> {
  for (let i = 0; i < rows.length; i += chunk) await store.run(store.db.insert(table).values(rows.slice(i, i + chunk)));
}

/** A time between `from` and `to` (ms), uniformly. */
function between(random: DemoRandom, from: number, to: number): number {
  return Math.floor(from + random.float() * Math.max(0, to - from));
}

function buildAuthors(random: DemoRandom): DemoAuthor[] {
  const ranked = random.shuffle(AUTHORS);
  return ranked.map((name, rank) => {
    // Every type gets at least one specialist; the rest pick by the types' shares.
    const first = rank < AGENT_TYPES.length ? AGENT_TYPES[rank]! : weightedType(random);
    const specialties = new Set<AgentType>([first]);
    if (random.chance(0.55)) specialties.add(weightedType(random));
    if (random.chance(0.2)) specialties.add(weightedType(random));
    return {
      name,
      slug: slugify(name),
      isPerson:
        !/(Labs|Works|Software|Analytics|Ops|Research|Security|Support|Data|Studio|Systems|Forge|Learning|Digital|Automation|Dev|Collective|AI|Cloud|Agents|Lane|& Co|Quillstone|Bitbarn|Copperleaf|Stonebridge)\b/.test(
          name,
        ),
      specialties: [...specialties],
      // Zipf-like (rational, so no floating-point library differences): a few prolific authors, a long tail.
      weight: 1 / (rank + 6),
    };
  });
}

function weightedType(random: DemoRandom): AgentType {
  return random.weighted(
    AGENT_TYPES,
    AGENT_TYPES.map((type) => TYPE_PROFILES[type].weight),
  );
}

/** How many agents of each type: proportional to the types' weights, at least 5 each, summing to `total`. */
function typeCounts(total: number): Map<AgentType, number> {
  const weightSum = AGENT_TYPES.reduce((sum, type) => sum + TYPE_PROFILES[type].weight, 0);
  const counts = new Map<AgentType, number>(
    AGENT_TYPES.map((type) => [type, Math.max(5, Math.round((TYPE_PROFILES[type].weight / weightSum) * total))]),
  );
  const assigned = [...counts.values()].reduce((sum, n) => sum + n, 0);
  counts.set('coding', counts.get('coding')! + (total - assigned));
  return counts;
}

/** "Loop Works", "LoopWorks" and "loopworks" are the same name to a reader. */
function nameKey(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

function makeName(random: DemoRandom, type: AgentType, taken: Set<string>): string {
  const profile = TYPE_PROFILES[type];
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = random.pick(profile.nameFirst);
    const second = random.pick(profile.nameSecond);
    let name = random.chance(0.6) ? `${first}${second}` : `${first} ${second}`;
    if (attempt > 10) name = `${name} ${random.pick(['Pro', 'Lite', 'Plus', 'Mini', 'X', 'Cloud', 'Local', 'Studio'])}`;
    if (!taken.has(nameKey(name))) {
      taken.add(nameKey(name));
      return name;
    }
  }
  let n = 2;
  const base = `${random.pick(profile.nameFirst)}${random.pick(profile.nameSecond)}`;
  while (taken.has(nameKey(`${base} ${n}`))) n++;
  taken.add(nameKey(`${base} ${n}`));
  return `${base} ${n}`;
}

function makeDescription(random: DemoRandom, type: AgentType, name: string, author: string, capabilities: string[]): string {
  const profile = TYPE_PROFILES[type];
  const vars = {
    name,
    author,
    caps: listPhrase(capabilities.slice(0, 3).map(humanize)),
    audience: random.pick(profile.audiences),
    deploy: random.pick(DEPLOY_MODES),
    integration: random.pick(INTEGRATIONS),
    license: random.pick(LICENSES),
  };
  const sentences = [
    fill(random.pick(profile.openings), vars),
    fill(random.pick(DESCRIPTION_MIDDLES), vars),
    fill(random.pick(DESCRIPTION_AUDIENCES), vars),
  ];
  let text = sentences.join(' ');
  const target = random.int(230, 480);
  for (const extra of random.shuffle(DESCRIPTION_EXTRAS)) {
    if (text.length >= target) break;
    const next = `${text} ${fill(extra, vars)}`;
    if (next.length <= 500) text = next;
  }
  return text;
}

function buildAgents(random: DemoRandom, ids: IdGenerator, authors: DemoAuthor[], base: number): DemoAgent[] {
  const takenNames = new Set<string>();
  const takenUrls = new Set<string>();
  const slots: AgentType[] = random.shuffle(
    [...typeCounts(DEMO_SIZES.agents + DEMO_SIZES.unlistedAgents)].flatMap(([type, n]) => Array<AgentType>(n).fill(type)),
  );
  const allWeights = authors.map((author) => author.weight);

  const built = slots.map((type, index) => {
    const profile = TYPE_PROFILES[type];
    const specialists = authors.filter((author) => author.specialties.includes(type));
    const author = random.chance(0.8)
      ? random.weighted(
          specialists,
          specialists.map((a) => a.weight),
        )
      : random.weighted(authors, allWeights);

    const name = makeName(random, type, takenNames);
    const host = random.chance(0.9) ? 'github.com' : 'gitlab.com';
    let sourceUrl = `https://${host}/${author.slug}/${slugify(name)}`;
    while (takenUrls.has(sourceUrlKey(sourceUrl))) sourceUrl = `${sourceUrl}-${random.int(2, 9)}`;
    takenUrls.add(sourceUrlKey(sourceUrl));

    const capabilities = random.sample(profile.capabilities, random.int(3, 5));
    const extraCapabilities = random.chance(0.5) ? random.sample(GENERAL_CAPABILITIES, random.chance(0.4) ? 2 : 1) : [];
    for (const capability of extraCapabilities) if (!capabilities.includes(capability)) capabilities.push(capability);
    const categories = random.sample(profile.categories, random.chance(0.45) ? 2 : 1);
    if (random.chance(0.12)) categories.push(random.pick(GENERAL_CATEGORIES));

    // The max of two uniforms leans towards 1: more agents were listed recently, as a growing directory would have.
    const recency = Math.max(random.float(), random.float());
    const createdAt = base - Math.floor((1 - recency) * DEMO_SIZES.historyDays * DAY) - random.int(2 * HOUR, 20 * HOUR);
    const ageShare = (base - createdAt) / (DEMO_SIZES.historyDays * DAY);

    const row: AgentRow = {
      id: ids.agent(name),
      name,
      tagline: fill(random.pick(profile.taglines), { audience: random.pick(profile.audiences) }),
      description: makeDescription(random, type, name, author.name, capabilities),
      author: author.name,
      capabilities,
      categories,
      type,
      sourceUrl,
      sourceUrlKey: sourceUrlKey(sourceUrl),
      verified: random.chance(0.1 + 0.3 * ageShare),
      listed: index >= DEMO_SIZES.unlistedAgents,
      status: 'active',
      statusMessage: null,
      ownerAccountId: null,
      ownerName: null,
      agentCardUrl: null,
      skills: null,
      agentCardEtag: null,
      agentCardFetchedAt: null,
      trustScore: 0,
      ratingCount: 0,
      ratingSum: 0,
      version: 1,
      changeSeq: 0,
      createdAt: iso(createdAt),
      updatedAt: iso(createdAt),
    };
    return {
      row,
      author,
      quality: random.gaussian() * 0.45,
      // Heavy-tailed: most agents get a handful of reviews, a few get dozens.
      popularity: (0.15 + fourthPower(random.float()) * 6) * (0.3 + ageShare),
    };
  });
  return built.sort((a, b) => (a.row.createdAt < b.row.createdAt ? -1 : a.row.createdAt > b.row.createdAt ? 1 : 0));
}

function reviewerName(random: DemoRandom): string | null {
  const roll = random.float();
  if (roll < 0.6) return `${random.pick(FIRST_NAMES)} ${random.pick(LAST_NAMES)[0]}.`;
  if (roll < 0.85) return random.pick(REVIEWER_HANDLES);
  return null;
}

function buildReviews(random: DemoRandom, ids: IdGenerator, demoAgents: DemoAgent[], base: number): ReviewRow[] {
  const listed = demoAgents.filter((agent) => agent.row.listed);
  const weights = listed.map((agent) => agent.popularity);
  const rows: ReviewRow[] = [];
  for (let i = 0; i < DEMO_SIZES.reviews; i++) {
    const agent = random.weighted(listed, weights);
    // Mostly happy users, and the occasional furious one.
    const rating = random.chance(0.03) ? 1 : Math.min(5, Math.max(1, Math.round(4.15 + agent.quality + random.gaussian() * 0.85)));
    const capability = humanize(random.pick(agent.row.capabilities));
    const pool = rating >= 4 ? REVIEW_COMMENTS.positive : rating === 3 ? REVIEW_COMMENTS.neutral : REVIEW_COMMENTS.negative;
    const createdFrom = Date.parse(agent.row.createdAt) + HOUR;
    rows.push({
      id: ids.next('rev'),
      agentId: agent.row.id,
      rating,
      comment: random.chance(0.82) ? fill(random.pick(pool), { name: agent.row.name, cap: capability }) : null,
      reviewerName: reviewerName(random),
      // A few spam reviews that a moderator hid: kept, but neither listed nor counted.
      hidden: random.chance(0.015),
      accountId: null,
      clientKey: null,
      createdAt: iso(between(random, createdFrom, base - 10 * 60_000)),
    });
  }
  return rows.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
}

function claimantOf(random: DemoRandom, author: DemoAuthor): { name: string; email: string } {
  const name = author.isPerson ? author.name : `${random.pick(FIRST_NAMES)} ${random.pick(LAST_NAMES)}`;
  const local = slugify(name.split(' ')[0]!, 20);
  return { name, email: `${local}@${author.slug}.example` };
}

function buildClaims(
  random: DemoRandom,
  ids: IdGenerator,
  tokenBytes: (n: number) => Buffer,
  demoAgents: DemoAgent[],
  base: number,
): ClaimRow[] {
  const rows: ClaimRow[] = [];
  const claim = (agent: DemoAgent, createdAt: number): ClaimRow => {
    const claimant = claimantOf(random, agent.author);
    const token = `${CLAIM_TOKEN_PREFIX}${randomToken(32, tokenBytes)}`;
    const methods = proofMethodsFor(agent.row.sourceUrl, token);
    return {
      id: ids.next('clm'),
      agentId: agent.row.id,
      claimantName: claimant.name,
      claimantEmail: claimant.email,
      status: 'pending',
      token,
      verificationUrl: methods[0]?.url ?? '',
      methods,
      verifiedMethod: null,
      accountId: null,
      clientKey: null,
      // Demo sources are made up: their proofs are never re-checked.
      nextRecheckAt: null,
      recheckFailures: 0,
      lastCheck: null,
      verifiedBy: null,
      reason: null,
      version: 1,
      createdAt: iso(createdAt),
      updatedAt: iso(createdAt),
      decidedAt: null,
    };
  };

  // Every verified agent was verified through a claim.
  for (const agent of demoAgents.filter((a) => a.row.verified)) {
    const created = Date.parse(agent.row.createdAt);
    const requestedAt = between(random, created + HOUR, Math.min(base - 2 * HOUR, created + 120 * DAY));
    const decidedAt = Math.min(base - HOUR, requestedAt + random.int(10 * 60_000, 72 * HOUR));
    const automatic = random.chance(0.85);
    const row = claim(agent, requestedAt);
    rows.push({
      ...row,
      status: 'verified',
      verifiedBy: automatic ? 'automatic' : 'manual',
      verifiedMethod: automatic ? (row.methods[0]?.method ?? null) : null,
      lastCheck: automatic
        ? {
            checkedAt: iso(decidedAt),
            ok: true,
            status: 200,
            method: row.methods[0]!.method,
            detail: `The token was found at ${row.verificationUrl} (HTTP 200).`,
            results: [
              {
                method: row.methods[0]!.method,
                ok: true,
                status: 200,
                detail: `The token was found at ${row.verificationUrl} (HTTP 200).`,
              },
            ],
          }
        : null,
      version: 2,
      updatedAt: iso(decidedAt),
      decidedAt: iso(decidedAt),
    });
    agent.verifiedAt = decidedAt;
  }

  const unverified = random.shuffle(demoAgents.filter((a) => a.row.listed && !a.row.verified));
  for (const agent of unverified.slice(0, DEMO_SIZES.pendingClaims)) {
    const createdAt = between(random, Math.max(Date.parse(agent.row.createdAt), base - 14 * DAY), base - HOUR);
    const row = claim(agent, createdAt);
    if (random.chance(0.5)) {
      const failure = random.pick(CLAIM_CHECK_FAILURES);
      const checkedAt = Math.min(base - 10 * 60_000, createdAt + random.int(5 * 60_000, 24 * HOUR));
      const result = { method: row.methods[0]!.method, ok: false, ...failure };
      rows.push({
        ...row,
        lastCheck: { checkedAt: iso(checkedAt), ok: false, status: failure.status, detail: failure.detail, results: [result] },
        version: 2,
        updatedAt: iso(checkedAt),
      });
    } else {
      rows.push(row);
    }
  }
  for (const agent of unverified.slice(DEMO_SIZES.pendingClaims, DEMO_SIZES.pendingClaims + DEMO_SIZES.rejectedClaims)) {
    const createdAt = between(random, Date.parse(agent.row.createdAt), base - 3 * DAY);
    const decidedAt = createdAt + random.int(HOUR, 48 * HOUR);
    rows.push({
      ...claim(agent, createdAt),
      status: 'rejected',
      reason: random.pick(['The claimant could not show control of the repository', 'The e-mail domain does not match the project']),
      verifiedBy: 'manual',
      version: 2,
      updatedAt: iso(decidedAt),
      decidedAt: iso(decidedAt),
    });
  }
  return rows;
}

function buildSubmissions(
  random: DemoRandom,
  ids: IdGenerator,
  demoAgents: DemoAgent[],
  authors: DemoAuthor[],
  base: number,
): SubmissionRow[] {
  const rows: SubmissionRow[] = [];
  const takenNames = new Set(demoAgents.map((agent) => nameKey(agent.row.name)));
  const takenUrls = new Set(demoAgents.map((agent) => agent.row.sourceUrlKey));

  const fresh = (createdAt: number): SubmissionRow => {
    const type = weightedType(random);
    const profile = TYPE_PROFILES[type];
    const author = random.pick(authors);
    const name = makeName(random, type, takenNames);
    let sourceUrl = `https://github.com/${author.slug}/${slugify(name)}`;
    while (takenUrls.has(sourceUrlKey(sourceUrl))) sourceUrl = `${sourceUrl}-${random.int(2, 9)}`;
    takenUrls.add(sourceUrlKey(sourceUrl));
    const capabilities = random.sample(profile.capabilities, random.int(2, 4));
    return {
      id: ids.next('sub'),
      status: 'pending',
      name,
      tagline: fill(random.pick(profile.taglines), { audience: random.pick(profile.audiences) }),
      sourceUrl,
      sourceUrlKey: sourceUrlKey(sourceUrl),
      description: random.chance(0.85) ? makeDescription(random, type, name, author.name, capabilities) : null,
      author: author.name,
      capabilities,
      categories: random.sample(profile.categories, 1),
      type,
      contactEmail: random.chance(0.8) ? claimantOf(random, author).email : null,
      agentCardUrl: null,
      skills: null,
      agentCardEtag: null,
      agentId: null,
      reason: null,
      decidedBy: null,
      decidedAt: null,
      version: 1,
      accountId: null,
      clientKey: null,
      createdAt: iso(createdAt),
      updatedAt: iso(createdAt),
    };
  };

  for (let i = 0; i < DEMO_SIZES.pendingSubmissions; i++) rows.push(fresh(between(random, base - 21 * DAY, base - 20 * 60_000)));

  for (let i = 0; i < DEMO_SIZES.rejectedSubmissions; i++) {
    const created = between(random, base - 200 * DAY, base - 2 * DAY);
    const decided = created + random.int(HOUR, 72 * HOUR);
    rows.push({
      ...fresh(created),
      status: 'rejected',
      reason: random.pick(REJECTION_REASONS),
      decidedBy: MODERATOR,
      decidedAt: iso(decided),
      updatedAt: iso(decided),
      version: 2,
    });
  }

  // Recently listed agents that came in through the submission queue.
  const recent = demoAgents.filter((agent) => agent.row.listed && Date.parse(agent.row.createdAt) > base - 150 * DAY);
  for (const agent of random.sample(recent, DEMO_SIZES.approvedSubmissions)) {
    const approvedAt = Date.parse(agent.row.createdAt);
    const created = approvedAt - random.int(2 * HOUR, 96 * HOUR);
    rows.push({
      id: ids.next('sub'),
      status: 'approved',
      name: agent.row.name,
      tagline: agent.row.tagline,
      sourceUrl: agent.row.sourceUrl,
      sourceUrlKey: agent.row.sourceUrlKey,
      description: agent.row.description,
      author: agent.row.author,
      capabilities: agent.row.capabilities,
      categories: agent.row.categories,
      type: agent.row.type,
      contactEmail: claimantOf(random, agent.author).email,
      agentCardUrl: null,
      skills: null,
      agentCardEtag: null,
      agentId: agent.row.id,
      reason: null,
      decidedBy: MODERATOR,
      decidedAt: iso(approvedAt),
      version: 2,
      accountId: null,
      clientKey: null,
      createdAt: iso(created),
      updatedAt: iso(approvedAt),
    });
  }
  return rows.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
}

function buildSubscribers(random: DemoRandom, ids: IdGenerator, base: number): NewsletterSubscriberRow[] {
  const rows: NewsletterSubscriberRow[] = [];
  const taken = new Set<string>();
  while (rows.length < DEMO_SIZES.subscribers) {
    const first = slugify(random.pick(FIRST_NAMES), 20);
    const last = slugify(random.pick(LAST_NAMES), 20);
    const style = random.int(0, 3);
    const local =
      style === 0
        ? `${first}.${last}`
        : style === 1
          ? `${first[0]}${last}`
          : style === 2
            ? `${first}${random.int(1, 99)}`
            : `${first}_${last}`;
    const email = `${random.chance(0.1) ? local[0]!.toUpperCase() + local.slice(1) : local}@${random.pick(EMAIL_DOMAINS)}`;
    const key = emailKeyOf(email);
    if (taken.has(key)) continue;
    taken.add(key);
    const recency = Math.max(random.float(), random.float());
    const unsubscribed = random.chance(0.05);
    const created = base - Math.floor((1 - recency) * DEMO_SIZES.historyDays * DAY) - random.int(0, 12 * HOUR);
    // Most follow the confirmation link within the hour; every 20th has not yet (no extra draws, so the rest of the demo stays the same).
    const pending = !unsubscribed && rows.length % 20 === 7;
    const confirmed = created + ((rows.length * 7) % 60) * 60_000 + 60_000;
    rows.push({
      id: ids.next('nls'),
      email,
      emailKey: key,
      status: unsubscribed ? 'unsubscribed' : pending ? 'pending' : 'subscribed',
      createdAt: iso(created),
      confirmedAt: pending ? null : iso(Math.min(confirmed, base)),
      unsubscribedAt: unsubscribed ? iso(Math.min(confirmed + Math.floor((base - confirmed) / 2), base)) : null,
    });
  }
  return rows;
}

/** The events a live directory would have recorded recently, rebuilt from the demo rows. */
function syntheticEvents(random: DemoRandom, demoAgents: DemoAgent[], reviewRows: ReviewRow[], base: number): SyntheticEvent[] {
  const since = base - DEMO_SIZES.marketingDays * DAY;
  const list: SyntheticEvent[] = [];
  const byId = new Map(demoAgents.map((agent) => [agent.row.id, agent]));
  for (const agent of demoAgents) {
    if (!agent.row.listed) continue;
    const created = Date.parse(agent.row.createdAt);
    if (created >= since) list.push({ type: 'agent.registered', at: created, agent });
    if (agent.verifiedAt !== undefined && agent.verifiedAt >= since) list.push({ type: 'agent.verified', at: agent.verifiedAt, agent });
  }
  for (const review of reviewRows) {
    const at = Date.parse(review.createdAt);
    if (review.hidden || review.rating < 4 || at < base - 30 * DAY || !random.chance(DEMO_SIZES.promotedReviewShare)) continue;
    const agent = byId.get(review.agentId)!;
    list.push({
      type: 'review.created',
      at,
      agent,
      review: { rating: review.rating, comment: review.comment, reviewerName: review.reviewerName },
    });
  }
  return list.sort((a, b) => a.at - b.at);
}

/** Realistic life after generation: some posts published (A/B variants always), some archived or scheduled, A/B counts. */
function playOutMarketing(random: DemoRandom, content: GeneratedContent, eventAt: number, base: number): void {
  const age = base - eventAt;
  const variantPostIds = new Set(content.abTest?.variants.map((variant) => variant.postId) ?? []);
  const latest = base - 5 * 60_000;
  for (const post of content.posts) {
    if (variantPostIds.has(post.id)) {
      post.status = 'published';
      post.publishedAt = iso(Math.min(latest, eventAt + random.int(20 * 60_000, 6 * HOUR)));
      post.version = 2;
      continue;
    }
    const roll = random.float();
    if (age <= 2 * DAY) {
      if (roll < 0.3) {
        post.status = 'scheduled';
        post.version = 2;
      }
    } else if (roll < 0.42) {
      post.status = 'published';
      post.publishedAt = iso(Math.min(latest, eventAt + random.int(HOUR, 48 * HOUR)));
      post.version = 2;
      if (age > 30 * DAY && random.chance(0.15)) {
        post.status = 'archived';
        post.version = 3;
      }
    } else if (roll < 0.52) {
      post.status = 'archived';
      post.version = 2;
    }
  }

  if (!content.abTest) return;
  const { test, variants } = content.abTest;
  const testDays = 14;
  const runningDays = Math.min(age / DAY, testDays);
  const dailyImpressions = random.int(25, 380);
  const baseRate = 0.01 + random.float() * 0.07;
  // Some tests compare tones that really do differ; the rest do not.
  const liftedLabel = random.chance(0.55) ? random.pick(['A', 'B']) : null;
  const lift = 1 + 0.2 + random.float() * 0.5;
  for (const variant of variants) {
    const impressions = Math.max(0, Math.round(runningDays * dailyImpressions * (0.9 + random.float() * 0.2)));
    const rate = Math.min(0.95, variant.label === liftedLabel ? baseRate * lift : baseRate);
    const expected = impressions * rate;
    const spread = Math.sqrt(impressions * rate * (1 - rate));
    variant.impressions = impressions;
    variant.conversions = Math.min(impressions, Math.max(0, Math.round(expected + spread * random.gaussian())));
  }
  if (age > testDays * DAY) {
    test.status = 'completed';
    test.completedAt = iso(eventAt + testDays * DAY);
  }
}

type SeedServices = Pick<Services, 'store' | 'agentWrites'>;

/**
 * Seeds the demo directory unless an agent is listed already, and says what it wrote (undefined:
 * nothing). Checked and seeded in one store transaction (SQLite: under its write lock) by one
 * process at a time (store.runExclusive: on PostgreSQL a process starting at the same moment skips
 * it, and one starting later finds the agents), so servers starting together seed an empty database once.
 */
export async function seedDemoDirectoryIfEmpty(services: SeedServices, options: SeedDemoOptions = {}): Promise<DemoSummary | undefined> {
  const { store } = services;
  const run = await store.runExclusive('demo-seed', () =>
    store.transaction(async () => {
      const { agents } = store.t;
      const listed = await store.first(store.db.select({ id: agents.id }).from(agents).where(eq(agents.listed, true)).limit(1));
      return listed ? undefined : seedDemoDirectory(services, options);
    }),
  );
  return run.ran ? run.value : undefined;
}

/**
 * Seeds the demo directory into the database behind `services` (meant for an
 * empty one), in one store transaction, and says how many rows of each kind it wrote.
 */
export async function seedDemoDirectory(services: SeedServices, options: SeedDemoOptions = {}): Promise<DemoSummary> {
  const { store, agentWrites } = services;
  const seed = options.seed ?? DEMO_SEED;
  const base = Date.parse(options.baseDate ?? DEMO_BASE_DATE);
  const random = createDemoRandom(seed);
  const ids = createIdGenerator(seededRandomBytes(seed ^ 0x5eed5eed));
  const tokenBytes = seededRandomBytes(seed ^ 0x70c3e5);

  const authors = buildAuthors(random);
  const demoAgents = buildAgents(random, ids, authors, base);
  const reviewRows = buildReviews(random, ids, demoAgents, base);

  const visibleById = new Map<string, { count: number; sum: number }>();
  for (const review of reviewRows) {
    if (review.hidden) continue;
    const aggregate = visibleById.get(review.agentId) ?? { count: 0, sum: 0 };
    aggregate.count++;
    aggregate.sum += review.rating;
    visibleById.set(review.agentId, aggregate);
  }

  const claimRows = buildClaims(random, ids, tokenBytes, demoAgents, base);
  const submissionRows = buildSubmissions(random, ids, demoAgents, authors, base);
  const subscriberRows = buildSubscribers(random, ids, base);

  // Aggregates and trust scores as of the base date.
  const now = new Date(base);
  for (const agent of demoAgents) {
    const aggregate = visibleById.get(agent.row.id);
    agent.row = agentWrites.newRow({ ...agent.row, ratingCount: aggregate?.count ?? 0, ratingSum: aggregate?.sum ?? 0 }, now);
  }

  const generated: GeneratedContent[] = [];
  for (const event of syntheticEvents(random, demoAgents, reviewRows, base)) {
    const content = generateMarketingContent(
      { id: ids.next('evt'), type: event.type, createdAt: iso(event.at) },
      { agent: event.agent.row, ...(event.review && { review: event.review }) },
      ids,
      { linkSourceEvent: false },
    );
    playOutMarketing(random, content, event.at, base);
    generated.push(content);
  }
  const postRows = generated.flatMap((content) => content.posts);
  const testRows = generated.flatMap((content) => (content.abTest ? [content.abTest.test] : []));
  const variantRows = generated.flatMap((content) => content.abTest?.variants ?? []);

  await store.transaction(async () => {
    const { reviews, claims, submissions, newsletterSubscribers, marketingPosts, abTests, abTestVariants } = store.t;
    await agentWrites.write(demoAgents.map((agent) => ({ kind: 'create', row: agent.row })));
    await insertAll(store, reviews, reviewRows);
    await insertAll(store, claims, claimRows);
    await insertAll(store, submissions, submissionRows);
    // A subscriber who signed up before the demo was seeded keeps their row.
    for (let i = 0; i < subscriberRows.length; i += 250) {
      await store.run(
        store.db
          .insert(newsletterSubscribers)
          .values(subscriberRows.slice(i, i + 250))
          .onConflictDoNothing(),
      );
    }
    await insertAll(store, marketingPosts, postRows);
    await insertAll(store, abTests, testRows);
    await insertAll(store, abTestVariants, variantRows);
  });

  return {
    agents: demoAgents.filter((agent) => agent.row.listed).length,
    reviews: reviewRows.length,
    submissions: submissionRows.length,
    claims: claimRows.length,
    subscribers: subscriberRows.length,
    posts: postRows.length,
    abTests: testRows.length,
  };
}
