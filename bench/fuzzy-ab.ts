/**
 * Typo lookups (Vocabulary.fuzzyMatches) of the bench's query classes, this checkout against another one's
 * vocabulary.ts (`--base DIR`), alternating rounds in one process, each asked for the eight best matches as query
 * expansion asks; those eight must be the same. `--whole-read N`: this checkout's WHOLE_READ.perCandidate.
 *
 *   npx tsx bench/fuzzy-ab.ts --base /tmp/base [--agents 100000] [--whole-read 4]
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { allowedEdits } from '../src-api/modules/search/expansion';
import { indexTerms } from '../src-api/modules/search/text';
import { Vocabulary } from '../src-api/modules/search/vocabulary';
import { WHOLE_READ, type FuzzyMatch } from '../src-api/modules/search/typo-index';
import { classSearches, generateAgents } from './lib/dataset';
import { argument } from './lib/cli';

const base = path.resolve(argument('base') ?? '.');
const { Vocabulary: BaseVocabulary } = (await import(path.join(base, 'src-api/modules/search/vocabulary.ts'))) as {
  Vocabulary: typeof Vocabulary;
};
WHOLE_READ.perCandidate = Number(argument('whole-read') ?? WHOLE_READ.perCandidate);
const agents = generateAgents(Number(argument('agents') ?? 100_000));
const vocabularies = [new BaseVocabulary(), new Vocabulary()];
for (const agent of agents) {
  for (const text of [agent.name, agent.tagline, agent.description, agent.author, ...agent.capabilities]) {
    for (const term of indexTerms(text, true)) for (const vocabulary of vocabularies) vocabulary.intern(term);
  }
}
const classes = (['exact distinctive word', 'typo', 'prefix'] as const).map((kind) => ({
  kind,
  words: classSearches(agents, kind, 1000).map((search) => search.q),
}));
// As query expansion asks (expansion.ts): the best MAX_FUZZY_EXPANSIONS by edits, then similarity. The base may
// not take `best` (it then returns every match): the best eight must be the same.
const best = { count: 8, usable: () => true };
const bestEight = (matches: FuzzyMatch[]) =>
  JSON.stringify([...matches].sort((a, b) => a.distance - b.distance || b.similarity - a.similarity).slice(0, best.count));
for (const { kind, words } of classes) {
  for (const word of words) {
    const [a, b] = vocabularies.map((vocabulary) => bestEight(vocabulary.fuzzyMatches(word, allowedEdits, best)));
    if (a !== b) throw new Error(`${kind} "${word}": different matches`);
  }
  const fastest = [Infinity, Infinity];
  for (let round = 0; round < 5; round++) {
    vocabularies.forEach((vocabulary, v) => {
      const started = performance.now();
      for (const word of words) vocabulary.fuzzyMatches(word, allowedEdits, best);
      fastest[v] = Math.min(fastest[v]!, ((performance.now() - started) * 1000) / words.length);
    });
  }
  console.log(
    `${kind.padEnd(24)} base ${fastest[0]!.toFixed(0)} µs, this ${fastest[1]!.toFixed(0)} µs, this/base ${(fastest[1]! / fastest[0]!).toFixed(2)}`,
  );
}
