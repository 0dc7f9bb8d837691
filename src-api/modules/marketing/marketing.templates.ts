import type { Channel, MarketingEventType, Tone } from './marketing.generator';

/**
 * The words of the generated posts (marketing.generator.ts fills them in): per event type and
 * tone, titles and leads; per tone, closers and the longer formats' second-paragraph openers;
 * per event, which tone writes for which channel; and the agent types' names.
 */
export interface ToneTemplates {
  titles: readonly string[];
  leads: readonly string[];
}

export type EventTemplates = Record<Tone, ToneTemplates>;

export const TEMPLATES: Record<MarketingEventType, EventTemplates> = {
  'agent.registered': {
    professional: {
      titles: ['Introducing {name}: {tagline}', 'New in the directory: {name}', '{name} joins the Agent Directory'],
      leads: [
        'We are pleased to welcome {name} by {author} to the directory. {tagline}.',
        '{name}, a new {kind} from {author}, is now listed in the Agent Directory.',
        'Now listed: {name} from {author}, covering {caps}.',
      ],
    },
    playful: {
      titles: ['Say hi to {name} 👋', 'Fresh off the press: {name}', 'A wild {name} appears'],
      leads: [
        'Knock knock. Who is there? {name}, the newest {kind} in town. {tagline}.',
        'Plot twist: your to-do list just got shorter. Meet {name} by {author}.',
        'New agent unlocked: {name}. It handles {caps} so you do not have to.',
      ],
    },
    technical: {
      titles: ['{name}: {caps} for {category}', 'Under the hood of {name}', '{name}: capabilities and source'],
      leads: [
        '{name} ({kind}) is now indexed. Capabilities: {caps}.',
        'New listing: {name}. Built by {author}; covers {caps}.',
        '{name} adds {caps} to the {category} toolbox, with public source.',
      ],
    },
    enthusiastic: {
      titles: ['{name} is here! 🚀', 'You need to see {name}', 'Big welcome to {name}!'],
      leads: [
        '🚀 {name} just landed in the directory and we love it! {tagline}!',
        'This is a great one: {name} by {author} brings {caps} to your workflow!',
        'Huge welcome to {name}! {tagline}, and it is ready to try today.',
      ],
    },
  },
  'agent.verified': {
    professional: {
      titles: ['Verified: {name}', '{name} is now a verified listing', 'Ownership confirmed for {name}'],
      leads: [
        '{author} has confirmed ownership of {name}, which now carries the verified mark.',
        'The listing for {name} is now verified: its owner proved control of the source.',
        'Verified listings give teams more confidence. {name} by {author} is the latest to earn the mark.',
      ],
    },
    playful: {
      titles: ['Blue check energy: {name}', '{name} got its badge ✅', 'Officially official: {name}'],
      leads: [
        '{name} just got its verified badge. Yes, it is really them. ✅',
        'Trust level up! {author} proved they own {name}, and the listing is verified.',
        'No impostors here: {name} is now verified.',
      ],
    },
    technical: {
      titles: ['{name}: ownership verified', 'Verification complete for {name}', '{name} passed source verification'],
      leads: [
        'Ownership of {name} was verified against its source repository; the listing is now flagged verified.',
        '{name} ({kind}) completed the well-known file check; its trust score now includes verification.',
        'Verified: the owner of the {name} source confirmed the listing. Capabilities on record: {caps}.',
      ],
    },
    enthusiastic: {
      titles: ['{name} is verified! 🎉', 'Congrats to {author}!', 'Another verified agent: {name}!'],
      leads: [
        '🎉 Congratulations to {author}: {name} is now verified!',
        'We love seeing this: {name} earned its verified badge!',
        'Verified and ready: {name} is now one of the trusted agents in the directory!',
      ],
    },
  },
  'review.created': {
    professional: {
      titles: ['What users say about {name}', '{rating}-star review for {name}', 'Customer feedback: {name}'],
      leads: [
        '{name} received a {rating}-star review: “{quote}”',
        'A new review rates {name} {rating} out of 5. “{quote}” ({reviewer})',
        '{name} by {author} earned another {rating}-star rating from {reviewer}.',
      ],
    },
    playful: {
      titles: ['{stars} for {name}', 'Someone is a fan of {name}', 'The reviews are in: {name}'],
      leads: [
        '{stars} Someone really likes {name}: “{quote}”',
        '{reviewer} gave {name} {rating} stars. We are blushing on its behalf.',
        'Review of the day: “{quote}” ({rating}/5 for {name})',
      ],
    },
    technical: {
      titles: ['{name}: new {rating}/5 rating', 'Rating update for {name}', '{name} review: {rating}/5'],
      leads: [
        'New rating for {name}: {rating}/5, now {average} on average across {count} reviews.',
        '{name} review logged: {rating}/5. Comment: “{quote}”',
        '{name} now averages {average}/5 over {count} reviews; the latest is {rating}/5.',
      ],
    },
    enthusiastic: {
      titles: ['People love {name}!', '{rating} stars for {name}! ⭐', 'Another happy user of {name}!'],
      leads: [
        '⭐ Another {rating}-star review for {name}! “{quote}”',
        'We love this review of {name}: “{quote}”',
        '{reviewer} loves {name}: {rating} stars!',
      ],
    },
  },
};

export const CLOSERS: Record<Tone, readonly string[]> = {
  professional: ['Learn more: {url}', 'Details and source: {url}', 'See the source and documentation at {url}'],
  playful: ['Go poke it: {url}', 'Take it for a spin: {url}', 'Curious? {url}'],
  technical: ['Repo: {url}', 'Source: {url}', 'Read the code: {url}'],
  enthusiastic: ['Check it out now: {url}', 'Try it today: {url}', 'Go give it a star: {url}'],
};

/** Opening of the longer formats' second paragraph, per tone. */
export const ABOUT_INTROS: Record<Tone, readonly string[]> = {
  professional: ['About {name}:', 'In brief:', 'What it offers:'],
  playful: ['The short version:', 'What does it actually do?', 'The gist:'],
  technical: ['What it does:', 'Scope:', 'Summary:'],
  enthusiastic: ['Why we love it:', 'Here is the magic:', 'What makes it great:'],
};

/** Which tone writes for which channel, per event. Registrations get every tone on Twitter (two of them become an A/B test). */
export const PLANS: Record<MarketingEventType, ReadonlyArray<{ tone: Tone; channel: Channel }>> = {
  'agent.registered': [
    { tone: 'professional', channel: 'twitter' },
    { tone: 'playful', channel: 'twitter' },
    { tone: 'technical', channel: 'twitter' },
    { tone: 'enthusiastic', channel: 'twitter' },
    { tone: 'professional', channel: 'linkedin' },
    { tone: 'technical', channel: 'blog' },
    { tone: 'enthusiastic', channel: 'newsletter' },
  ],
  'agent.verified': [
    { tone: 'professional', channel: 'linkedin' },
    { tone: 'playful', channel: 'twitter' },
    { tone: 'technical', channel: 'twitter' },
    { tone: 'enthusiastic', channel: 'newsletter' },
  ],
  'review.created': [
    { tone: 'professional', channel: 'linkedin' },
    { tone: 'playful', channel: 'twitter' },
    { tone: 'technical', channel: 'twitter' },
    { tone: 'enthusiastic', channel: 'twitter' },
  ],
};

export const TYPE_LABELS: Record<string, string> = {
  assistant: 'personal assistant',
  coding: 'coding agent',
  research: 'research agent',
  data: 'data agent',
  devops: 'DevOps agent',
  security: 'security agent',
  'customer-support': 'customer support agent',
  'sales-marketing': 'sales and marketing agent',
  writing: 'writing agent',
  design: 'design agent',
  workflow: 'workflow automation agent',
  education: 'learning companion',
  other: 'agent',
};
