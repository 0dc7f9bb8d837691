/**
 * A deterministic synthetic directory for benchmarks: the same N agents on
 * every machine, with 200–400 character descriptions, shared authors,
 * categories and capabilities, and a distinctive word in every name so that
 * quality can be measured (each query has one right answer).
 */
import fs from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { AGENT_TYPES } from '../../src-api/modules/agents/agents.schemas';
import { SearchIndex } from '../../src-api/modules/search/search-index';
import { seededRandom } from '../../src-api/lib/seeded-random';

export interface BenchAgent {
  id: string;
  name: string;
  tagline: string;
  description: string;
  author: string;
  capabilities: string[];
  categories: string[];
  type: (typeof AGENT_TYPES)[number];
  source_url: string;
}

/** The generator of the benchmark directory and its queries: the same data on every machine. */
export const createRandom = seededRandom;

const SYLLABLES = [
  'ka',
  'zu',
  'mor',
  'vel',
  'tri',
  'quo',
  'lin',
  'dax',
  'pho',
  'ren',
  'sil',
  'gor',
  'nex',
  'bri',
  'tal',
  'vox',
  'mir',
  'zen',
  'cal',
  'dro',
  'fen',
  'hul',
  'jas',
  'kir',
];
const ROLES = ['Assistant', 'Agent', 'Copilot', 'Bot', 'Helper', 'Pilot', 'Scout', 'Analyst', 'Builder', 'Guard', 'Writer', 'Planner'];
const DOMAINS = [
  'Code',
  'Data',
  'Research',
  'Support',
  'Security',
  'Cloud',
  'Sales',
  'Docs',
  'Design',
  'Finance',
  'Legal',
  'Health',
  'Ops',
  'Test',
  'Search',
];
const VERBS = [
  'reviews',
  'summarises',
  'monitors',
  'generates',
  'triages',
  'translates',
  'audits',
  'schedules',
  'classifies',
  'extracts',
  'answers',
  'refactors',
  'deploys',
  'tests',
  'drafts',
];
const OBJECTS = [
  'pull requests',
  'support tickets',
  'log files',
  'research papers',
  'invoices',
  'contracts',
  'dashboards',
  'API schemas',
  'meeting notes',
  'sales leads',
  'incident reports',
  'test suites',
  'cloud costs',
  'design mockups',
  'datasets',
];
const FILLER = [
  'It runs on your own infrastructure and keeps data private.',
  'Teams use it to cut repetitive work and keep quality high.',
  'It integrates with the tools you already use through plain HTTP.',
  'Every decision it makes is logged so humans can review it later.',
  'It learns the conventions of your project from existing examples.',
  'Results arrive as structured JSON that other agents can consume.',
  'A small configuration file controls which actions it may take.',
  'It works in batch mode overnight or interactively during the day.',
  'Latency stays low because it caches what it has already seen.',
  'Supports English, German, French and Spanish out of the box.',
];
/** Words each in about a third of all descriptions, as "agent", "data" or "AI" are in real listings: the hard case for search. */
export const COMMON_WORDS = ['agent', 'data', 'workflow', 'model', 'platform', 'secure'];

export const CATEGORIES = Array.from(
  { length: 60 },
  (_, i) => `${DOMAINS[i % DOMAINS.length]!.toLowerCase()}-${['tools', 'automation', 'insights', 'ops'][Math.floor(i / DOMAINS.length)]}`,
);
export const CAPABILITIES = [
  ...VERBS.flatMap((verb) => OBJECTS.slice(0, 8).map((object) => `${verb}-${object.split(' ')[0]}`)),
  'python',
  'typescript',
  'rust',
  'sql',
  'kubernetes',
  'terraform',
  'slack',
  'github',
  'jira',
  'ocr',
  'speech',
  'vision',
];

/** A pronounceable, distinctive word: the name's unique part, e.g. "Kazumor". */
function distinctiveWord(index: number): string {
  let n = index;
  let word = '';
  do {
    word += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  } while (n > 0);
  // At least three syllables, so every word is long enough to be typo-tested.
  while (word.length < 7) word += SYLLABLES[(index * 7 + word.length) % SYLLABLES.length];
  return word[0]!.toUpperCase() + word.slice(1);
}

export function generateAgents(count: number, seed = 42): BenchAgent[] {
  const random = createRandom(seed);
  const authors = Array.from({ length: Math.max(10, Math.floor(count / 8)) }, (_, i) => `${distinctiveWord(i + 7919)} Labs`);
  const agents: BenchAgent[] = [];
  for (let i = 0; i < count; i++) {
    const word = distinctiveWord(i);
    const domain = random.pick(DOMAINS);
    const name = `${word} ${domain} ${random.pick(ROLES)}`;
    const verb = random.pick(VERBS);
    const object = random.pick(OBJECTS);
    let description = `${name} ${verb} ${object} for ${domain.toLowerCase()} teams.`;
    const common = COMMON_WORDS.filter(() => random.int(3) === 0);
    if (common.length > 0) description += ` Built around ${common.join(', ')}.`;
    while (description.length < 200 + random.int(200)) description += ` ${random.pick(FILLER)}`;
    const author = authors[random.int(authors.length)]!;
    agents.push({
      id: `bench-${i.toString(36)}`,
      name,
      tagline: `${verb[0]!.toUpperCase()}${verb.slice(1)} ${object} automatically`,
      description: description.slice(0, 400),
      author,
      capabilities: random.sample(CAPABILITIES, 2 + random.int(4)),
      categories: random.sample(CATEGORIES, 1 + random.int(3)),
      type: AGENT_TYPES[i % AGENT_TYPES.length]!,
      source_url: `https://github.com/${author.toLowerCase().replace(/\s+/g, '-')}/${word.toLowerCase()}-${i.toString(36)}`,
    });
  }
  return agents;
}

/**
 * Writes the agents as JSONL, a slice at a time: at 1,000,000 agents the whole
 * file (about 670 MB) is longer than V8's longest string, so it is never built as one.
 */
export async function writeAgentsJsonl(file: string, agents: readonly BenchAgent[]): Promise<void> {
  const out = fs.createWriteStream(file);
  for (let i = 0; i < agents.length; i += 10_000) {
    const chunk = agents
      .slice(i, i + 10_000)
      .map((agent) => JSON.stringify(agent))
      .join('\n');
    if (!out.write(`${chunk}\n`)) await once(out, 'drain');
  }
  out.end();
  await finished(out);
}

/** One or two edits (substitution, deletion, insertion, transposition) inside a word. */
export function typo(word: string, edits: 1 | 2, random: ReturnType<typeof createRandom>): string {
  let result = word.toLowerCase();
  for (let e = 0; e < edits; e++) {
    // Keep the first letter: people rarely mistype it, and it keeps the query recognisable.
    const at = 1 + random.int(result.length - 2);
    const letter = 'abcdefghijklmnopqrstuvwxyz'[random.int(26)]!;
    switch (random.int(4)) {
      case 0:
        result = result.slice(0, at) + (letter === result[at] ? 'x' : letter) + result.slice(at + 1);
        break;
      case 1:
        result = result.slice(0, at) + result.slice(at + 1);
        break;
      case 2:
        result = result.slice(0, at) + letter + result.slice(at);
        break;
      default:
        result = result.slice(0, at) + result[at + 1] + result[at] + result.slice(at + 2);
    }
  }
  return result;
}

export interface QualityQuery {
  query: string;
  targetId: string;
  kind: 'exact' | 'typo';
}

/** Queries with one right answer: the target's distinctive name word, exact or with typos. */
export function qualityQueries(agents: BenchAgent[], count: number, seed = 7): QualityQuery[] {
  const random = createRandom(seed);
  const queries: QualityQuery[] = [];
  for (let i = 0; i < count; i++) {
    const agent = agents[random.int(agents.length)]!;
    const word = agent.name.split(' ')[0]!;
    if (i % 2 === 0) queries.push({ query: word.toLowerCase(), targetId: agent.id, kind: 'exact' });
    else queries.push({ query: typo(word, i % 4 === 1 ? 1 : 2, random), targetId: agent.id, kind: 'typo' });
  }
  return queries;
}

/** A mixed load: words, phrases, prefixes and typos, some with filters. */
export function mixedSearches(
  agents: BenchAgent[],
  count: number,
  seed = 11,
): { q: string; type?: string; min_trust?: number; capabilities?: string[] }[] {
  const random = createRandom(seed);
  const searches: { q: string; type?: string; min_trust?: number; capabilities?: string[] }[] = [];
  for (let i = 0; i < count; i++) {
    const agent = agents[random.int(agents.length)]!;
    const word = agent.name.split(' ')[0]!.toLowerCase();
    switch (i % 6) {
      case 0:
        searches.push({ q: word });
        break;
      case 1:
        searches.push({ q: `${random.pick(VERBS)} ${random.pick(OBJECTS)}` });
        break;
      case 2:
        searches.push({ q: word.slice(0, 4) });
        break;
      case 3:
        searches.push({ q: typo(word, 1, random) });
        break;
      case 4:
        searches.push({ q: random.pick(DOMAINS).toLowerCase(), type: agent.type, min_trust: 5 });
        break;
      default:
        searches.push({
          q: `${random.pick(DOMAINS).toLowerCase()} ${random.pick(ROLES).toLowerCase()}`,
          capabilities: agent.capabilities.slice(0, 1),
        });
    }
  }
  return searches;
}

/** The filters of a search, as a POST body carries them. */
export function filtersOf(search: { type?: string; min_trust?: number; capabilities?: string[] }) {
  return {
    ...(search.type && { type: search.type }),
    ...(search.min_trust !== undefined && { min_trust: search.min_trust }),
    ...(search.capabilities && { capabilities: search.capabilities }),
  };
}

/** A list page as the benches read them: one of 750 (3 sorts × 50 pages × all agents or one of 4 types). */
export function listPagePath(random: ReturnType<typeof createRandom>): string {
  // Drawn in this order (page, sort, type or not, type): the benches' figures were taken on this sequence.
  const page = 1 + random.int(50);
  const sort = random.pick(['trust_score', 'name', 'created_at']);
  const type = random.int(2) ? `&type=${random.pick(['coding', 'research', 'data', 'security'])}` : '';
  return `/api/v1/agents?page=${page}&limit=20&sort=${sort}${type}`;
}

export const SEARCH_CLASSES = [
  'one common word',
  'two common words',
  'three common words',
  'typo',
  'prefix',
  'exact distinctive word',
  'filtered POST',
] as const;
export type SearchClass = (typeof SEARCH_CLASSES)[number];

/** Queries of one class, for measuring each kind of search on its own. */
export function classSearches(
  agents: BenchAgent[],
  kind: SearchClass,
  count: number,
  seed = 13,
): { q: string; type?: string; min_trust?: number; capabilities?: string[] }[] {
  const random = createRandom(seed);
  const out: { q: string; type?: string; min_trust?: number; capabilities?: string[] }[] = [];
  for (let i = 0; i < count; i++) {
    const agent = agents[random.int(agents.length)]!;
    const word = agent.name.split(' ')[0]!.toLowerCase();
    if (kind === 'one common word') out.push({ q: random.pick(COMMON_WORDS) });
    else if (kind === 'two common words') out.push({ q: random.sample(COMMON_WORDS, 2).join(' ') });
    else if (kind === 'three common words') out.push({ q: random.sample(COMMON_WORDS, 3).join(' ') });
    else if (kind === 'typo') out.push({ q: typo(word, 1, random) });
    else if (kind === 'prefix') out.push({ q: word.slice(0, 4) });
    else if (kind === 'exact distinctive word') out.push({ q: word });
    else out.push({ q: random.pick(COMMON_WORDS), type: agent.type, min_trust: 5, capabilities: agent.capabilities.slice(0, 1) });
  }
  return out;
}

/**
 * An in-memory search index of `agents` as a fresh import gives it to the server: fed in id
 * order, with the trust scores a new agent gets (17 for type "other", else 20), compacted.
 */
export function indexAsImported(agents: readonly BenchAgent[]): SearchIndex {
  const index = new SearchIndex();
  const order = agents.map((agent, i) => ({ id: agent.id, i })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const { i } of order) {
    const a = agents[i]!;
    index.apply({ ...a, trustScore: a.type === 'other' ? 17 : 20, listed: true, status: 'active' });
    if (i % 50_000 === 0) index.maybeCompact(true);
  }
  index.compact();
  return index;
}
