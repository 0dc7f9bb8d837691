import type { IdGenerator } from '../../lib/ids';
import type { AgentRow } from '../agents/agents.table';
import type { EventType } from '../events/events.table';
import type { AbTestRow, AbTestVariantRow, MarketingPostRow } from './marketing.table';
import { ABOUT_INTROS, CLOSERS, PLANS, TEMPLATES, TYPE_LABELS } from './marketing.templates';

/**
 * Turns a directory event into marketing drafts: several tones, several
 * channels, filled from the agent's own data. Pure (no database, no clock):
 * the live listener and the demo seeder both call it, and the same event
 * always yields the same text. Template variants are picked by a hash of the
 * event id, so consecutive events read differently.
 */

export const TONES = ['professional', 'playful', 'technical', 'enthusiastic'] as const;
export type Tone = (typeof TONES)[number];

export const CHANNELS = ['twitter', 'linkedin', 'blog', 'newsletter'] as const;
export type Channel = (typeof CHANNELS)[number];

/** Events that produce posts. `claim.approved` is left out: it always comes with `agent.verified`, which covers it. */
export const MARKETING_EVENT_TYPES = ['agent.registered', 'agent.verified', 'review.created'] as const;
export type MarketingEventType = (typeof MARKETING_EVENT_TYPES)[number];

/** Reviews below this rating make no posts. */
export const MIN_PROMOTED_RATING = 4;

/** Twitter's limit; posts for it are cut to fit. */
export const TWITTER_MAX_CHARS = 280;

export interface SourceEvent {
  /** The outbox id; the variant choice hashes it. */
  id: string;
  type: EventType;
  createdAt: string;
}

/** What a post can mention about an agent: a subset of its row. */
export type PostAgent = Pick<
  AgentRow,
  'id' | 'name' | 'tagline' | 'description' | 'author' | 'capabilities' | 'categories' | 'type' | 'sourceUrl' | 'ratingCount' | 'ratingSum'
>;

export interface PostReview {
  rating: number;
  comment: string | null;
  reviewerName: string | null;
}

export interface GenerationContext {
  agent: PostAgent;
  /** For review.created. */
  review?: PostReview;
}

export interface GenerateOptions {
  /**
   * Store the event id on the posts (live events). Demo seeding passes false:
   * its synthetic events are never written to the outbox.
   */
  linkSourceEvent?: boolean;
}

export interface GeneratedContent {
  posts: MarketingPostRow[];
  abTest: { test: AbTestRow; variants: AbTestVariantRow[] } | null;
}

interface DraftPost {
  tone: Tone;
  channel: Channel;
  title: string;
  body: string;
}

/** Tone pairs an A/B test can compare. */
const AB_PAIRS: ReadonlyArray<readonly [Tone, Tone]> = TONES.flatMap((a, i) => TONES.slice(i + 1).map((b) => [a, b] as const));
const AB_CHANNEL: Channel = 'twitter';

export function isMarketingEventType(type: string): type is MarketingEventType {
  return (MARKETING_EVENT_TYPES as readonly string[]).includes(type);
}

/** FNV-1a, 32 bits: a cheap, stable hash for picking template variants. */
export function stableHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function pick<T>(items: readonly T[], seed: string): T {
  return items[stableHash(seed) % items.length]!;
}

function humanize(tag: string): string {
  return tag.replace(/[-_]+/g, ' ').trim();
}

function listPhrase(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function hashtag(tag: string): string {
  const words = tag.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words.length ? `#${words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}` : '';
}

function stripFinalPunctuation(text: string): string {
  return text.trim().replace(/[.!?…]+$/, '');
}

function excerpt(text: string, max: number): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  if (clean.length <= max) return clean;
  const cut = clean.slice(0, max - 1);
  const lastSpace = cut.lastIndexOf(' ');
  return `${(lastSpace > max / 2 ? cut.slice(0, lastSpace) : cut).replace(/[\s,;:.]+$/, '')}…`;
}

function fill(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (match, key: string) => vars[key] ?? match);
}

function templateVars(context: GenerationContext): Record<string, string> {
  const { agent, review } = context;
  const capabilities = agent.capabilities.map(humanize);
  const average = agent.ratingCount > 0 ? (agent.ratingSum / agent.ratingCount).toFixed(1) : '–';
  const rating = review?.rating ?? 0;
  return {
    name: agent.name,
    tagline: stripFinalPunctuation(agent.tagline),
    author: agent.author.trim() || 'an independent developer',
    kind: TYPE_LABELS[agent.type] ?? 'agent',
    caps: capabilities.length ? listPhrase(capabilities.slice(0, 3)) : 'everyday tasks',
    capList: capabilities.length ? listPhrase(capabilities) : 'general tasks',
    category: agent.categories.length ? humanize(agent.categories[0]!) : 'general',
    description: agent.description.trim() || `${stripFinalPunctuation(agent.tagline)}.`,
    url: agent.sourceUrl,
    rating: String(rating),
    stars: '★'.repeat(Math.max(0, Math.min(5, rating))),
    average,
    count: String(agent.ratingCount),
    quote: review?.comment ? excerpt(review.comment, 140) : '',
    reviewer: review?.reviewerName?.trim() || 'a reviewer',
  };
}

function hashtags(agent: PostAgent, max: number): string {
  const tags = [...agent.categories.slice(0, 1), ...agent.capabilities.slice(0, 1)].map(hashtag).filter(Boolean);
  return [...new Set([...tags.slice(0, max - 1), '#AIAgents'])].join(' ');
}

/** Cuts the lead so that the whole tweet fits; the link and closer always survive. */
function fitTweet(lead: string, rest: string): string {
  const room = TWITTER_MAX_CHARS - rest.length - 2;
  return `${lead.length > room ? excerpt(lead, Math.max(20, room)) : lead}\n\n${rest}`.slice(0, TWITTER_MAX_CHARS);
}

function formatBody(
  channel: Channel,
  tone: Tone,
  parts: { lead: string; closer: string; about: string },
  context: GenerationContext,
): string {
  const vars = templateVars(context);
  const { agent, review } = context;
  switch (channel) {
    case 'twitter':
      return fitTweet(parts.lead, `${parts.closer} ${hashtags(agent, 3)}`);
    case 'linkedin':
      return [
        parts.lead,
        `${parts.about} ${vars.description}`,
        agent.capabilities.length ? `Capabilities: ${vars.capList}.` : '',
        review?.comment ? `“${excerpt(review.comment, 400)}” (${vars.reviewer}, ${review.rating}/5)` : '',
        parts.closer,
        hashtags(agent, 4),
      ]
        .filter(Boolean)
        .join('\n\n');
    case 'blog':
      return [
        parts.lead,
        `## ${fill(tone === 'technical' ? 'How {name} works' : 'About {name}', vars)}`,
        vars.description,
        ...(agent.capabilities.length ? ['## Capabilities', agent.capabilities.map((c) => `- ${humanize(c)}`).join('\n')] : []),
        ...(review?.comment ? ['## The review', `> ${review.comment.trim()}\n\n${vars.reviewer}, ${review.rating}/5`] : []),
        '## Get started',
        parts.closer,
        `Built by ${vars.author}.`,
      ].join('\n\n');
    case 'newsletter':
      return [parts.lead, `${parts.about} ${vars.tagline}.`, `→ ${parts.closer}`].join('\n\n');
  }
}

function draftPost(eventType: MarketingEventType, eventId: string, tone: Tone, channel: Channel, context: GenerationContext): DraftPost {
  const vars = templateVars(context);
  const templates = TEMPLATES[eventType][tone];
  const seed = `${eventId}:${tone}:${channel}`;
  // A review without a comment cannot be quoted: only leads without {quote} are candidates then.
  const leads = vars.quote ? templates.leads : templates.leads.filter((lead) => !lead.includes('{quote}'));
  const lead = fill(pick(leads.length ? leads : templates.leads, `${seed}:lead`), vars);
  const closer = fill(pick(CLOSERS[tone], `${seed}:closer`), vars);
  const about = fill(pick(ABOUT_INTROS[tone], `${seed}:about`), vars);
  const title = excerpt(fill(pick(templates.titles, `${seed}:title`), vars), 200);
  return { tone, channel, title, body: formatBody(channel, tone, { lead, closer, about }, context) };
}

/** The drafts an event yields, without ids or times: useful on its own for previews and tests. */
export function composePosts(event: Pick<SourceEvent, 'id' | 'type'>, context: GenerationContext): DraftPost[] {
  if (!isMarketingEventType(event.type)) return [];
  if (event.type === 'review.created' && (context.review?.rating ?? 0) < MIN_PROMOTED_RATING) return [];
  return PLANS[event.type].map(({ tone, channel }) => draftPost(event.type as MarketingEventType, event.id, tone, channel, context));
}

/**
 * Posts (status draft) and, for a registration, an A/B test between two
 * tones' Twitter posts. Rows are ready to insert; ids come from `ids`.
 */
export function generateMarketingContent(
  event: SourceEvent,
  context: GenerationContext,
  ids: IdGenerator,
  options: GenerateOptions = {},
): GeneratedContent {
  const drafts = composePosts(event, context);
  const posts: MarketingPostRow[] = drafts.map((draft) => ({
    id: ids.next('post'),
    title: draft.title,
    body: draft.body,
    tone: draft.tone,
    status: 'draft',
    channel: draft.channel,
    agentId: context.agent.id,
    sourceEventId: options.linkSourceEvent === false ? null : event.id,
    sourceEventType: event.type,
    version: 1,
    createdAt: event.createdAt,
    publishedAt: null,
  }));

  let abTest: GeneratedContent['abTest'] = null;
  if (event.type === 'agent.registered') {
    const [toneA, toneB] = pick(AB_PAIRS, `${event.id}:ab`);
    const postA = posts.find((post) => post.tone === toneA && post.channel === AB_CHANNEL);
    const postB = posts.find((post) => post.tone === toneB && post.channel === AB_CHANNEL);
    if (postA && postB) {
      const test: AbTestRow = {
        id: ids.next('abt'),
        name: `${context.agent.name} launch on ${AB_CHANNEL}: ${toneA} vs ${toneB}`,
        status: 'running',
        createdAt: event.createdAt,
        completedAt: null,
      };
      const variants: AbTestVariantRow[] = [
        { id: ids.next('var'), abTestId: test.id, label: 'A', postId: postA.id, impressions: 0, conversions: 0 },
        { id: ids.next('var'), abTestId: test.id, label: 'B', postId: postB.id, impressions: 0, conversions: 0 },
      ];
      abTest = { test, variants };
    }
  }
  return { posts, abTest };
}
