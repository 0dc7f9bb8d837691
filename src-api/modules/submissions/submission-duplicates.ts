import { eq, ne } from 'drizzle-orm';
import type { Store } from '../../db/store';
import type { SubmissionRow, SubmissionStatus } from './submissions.table';

/**
 * Possible duplicates of a submission, for the console: listed agents and other
 * submissions with a similar name or from the same source.
 */

/** Something the console shows beside a submission as a possible duplicate of it. */
export interface DuplicateHint {
  id: string;
  name: string;
  source_url: string;
  /** Only for submissions. */
  status?: SubmissionStatus;
  /** Why it is shown: a similar name, the same source host (or repository, on shared code hosts), or both. */
  matches: ('similar_name' | 'same_source')[];
}

export interface DuplicateHints {
  agents: DuplicateHint[];
  submissions: DuplicateHint[];
}

const MAX_DUPLICATE_HINTS = 5;

/**
 * Hosts where many unrelated projects live: the repository (owner and name) is the "same source"
 * key there. Two repositories of one owner are two projects, not a duplicate (a moderator was shown
 * every agent of a busy GitHub organisation as "from the same source"); strangers never match.
 */
const SHARED_HOSTS = new Set([
  'github.com',
  'gitlab.com',
  'bitbucket.org',
  'codeberg.org',
  'huggingface.co',
  'sourceforge.net',
  'npmjs.com',
  'pypi.org',
  'replit.com',
]);

/** "github.com/acme/tool" or "acme.dev": what two submissions from the same place share. */
export function sourceHostKey(urlKey: string): string {
  const [host = '', owner, repository] = urlKey.split('/');
  if (!SHARED_HOSTS.has(host) || !owner) return host;
  return repository ? `${host}/${owner.toLowerCase()}/${repository.toLowerCase().replace(/\.git$/, '')}` : `${host}/${owner.toLowerCase()}`;
}

const NAME_NOISE = new Set(['a', 'an', 'the', 'agent', 'agents', 'bot', 'ai', 'app']);

/** Keys of names seen lately: a duplicates check compares against every name, so each is normalised once. */
const nameKeyCache = new Map<string, string>();
const NAME_KEY_CACHE_SIZE = 50_000;

/** Lower case, accents and punctuation dropped, filler words ("agent", "bot", "ai") left out. */
export function nameKey(name: string): string {
  const cached = nameKeyCache.get(name);
  if (cached !== undefined) return cached;
  const key = computeNameKey(name);
  if (nameKeyCache.size >= NAME_KEY_CACHE_SIZE) nameKeyCache.clear();
  nameKeyCache.set(name, key);
  return key;
}

function computeNameKey(name: string): string {
  const words = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
  const meaningful = words.filter((word) => !NAME_NOISE.has(word));
  return (meaningful.length ? meaningful : words).join('');
}

/** Edit distance, giving up (returning max + 1) once it must exceed `max`. */
function boundedLevenshtein(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  // A shared prefix or suffix costs nothing: compare only the middles (names of one family share most of theirs).
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  a = a.slice(start, endA);
  b = b.slice(start, endB);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > max) return max + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/** Same key, one containing the other (both of some length), or a few typos apart. */
export function similarNames(a: string, b: string): boolean {
  if (!a || !b) return false;
  if (a === b) return true;
  const shorter = a.length <= b.length ? a : b;
  const longer = shorter === a ? b : a;
  if (shorter.length >= 4 && longer.includes(shorter)) return true;
  if (shorter.length < 5) return false;
  const allowed = Math.max(1, Math.floor(longer.length * 0.15));
  return boundedLevenshtein(a, b, allowed) <= allowed;
}

/**
 * Listed agents and other submissions that may be the same agent as `row`: a similar
 * name, or the same source host (the same owner on shared code hosts like GitHub).
 * At most five of each, name matches first.
 */
export async function findDuplicateHints(store: Store, row: SubmissionRow): Promise<DuplicateHints> {
  const { agents: agentsTable, submissions } = store.t;
  const id = row.id;
  const ownName = nameKey(row.name);
  const ownSource = sourceHostKey(row.sourceUrlKey);
  const hintFor = (candidate: { name: string; sourceUrlKey: string }): DuplicateHint['matches'] => {
    const matches: DuplicateHint['matches'] = [];
    if (similarNames(ownName, nameKey(candidate.name))) matches.push('similar_name');
    if (sourceHostKey(candidate.sourceUrlKey) === ownSource) matches.push('same_source');
    return matches;
  };
  const rank = (hint: DuplicateHint): number => (hint.matches.includes('similar_name') ? 0 : 1) - hint.matches.length / 10;
  const best = (hints: DuplicateHint[]): DuplicateHint[] => hints.sort((a, b) => rank(a) - rank(b)).slice(0, MAX_DUPLICATE_HINTS);

  const agentHints: DuplicateHint[] = [];
  const agentRows = await store.rows(
    store.db
      .select({ id: agentsTable.id, name: agentsTable.name, sourceUrl: agentsTable.sourceUrl, sourceUrlKey: agentsTable.sourceUrlKey })
      .from(agentsTable)
      .where(eq(agentsTable.listed, true)),
  );
  for (const candidate of agentRows) {
    // The agent this submission became is not a duplicate of it.
    if (candidate.id === row.agentId) continue;
    const matches = hintFor(candidate);
    if (matches.length) agentHints.push({ id: candidate.id, name: candidate.name, source_url: candidate.sourceUrl, matches });
  }

  // An approved submission is its listed agent: shown once, as the agent.
  const hintedAgents = new Set(agentHints.map((hint) => hint.id));
  const submissionHints: DuplicateHint[] = [];
  const submissionRows = await store.rows(
    store.db
      .select({
        id: submissions.id,
        agentId: submissions.agentId,
        name: submissions.name,
        status: submissions.status,
        sourceUrl: submissions.sourceUrl,
        sourceUrlKey: submissions.sourceUrlKey,
      })
      .from(submissions)
      .where(ne(submissions.id, id)),
  );
  for (const candidate of submissionRows) {
    if (candidate.agentId !== null && hintedAgents.has(candidate.agentId)) continue;
    const matches = hintFor(candidate);
    if (matches.length) {
      submissionHints.push({
        id: candidate.id,
        name: candidate.name,
        source_url: candidate.sourceUrl,
        status: candidate.status,
        matches,
      });
    }
  }
  return { agents: best(agentHints), submissions: best(submissionHints) };
}
