/**
 * Typo lookups (Vocabulary.fuzzyMatches) of the bench's query classes, this checkout against another one's
 * vocabulary.ts (`--base DIR`), alternating rounds in one process; the matches must be the same.
 *
 *   npx tsx bench/fuzzy-ab.ts --base /tmp/base [--agents 100000]
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { allowedEdits } from '../src-api/modules/search/expansion';
import { indexTerms } from '../src-api/modules/search/text';
import { Vocabulary } from '../src-api/modules/search/vocabulary';
import { classSearches, generateAgents } from './lib/dataset';
import { argument } from './lib/cli';

const base = path.resolve(argument('base') ?? '.');
const { Vocabulary: BaseVocabulary } = (await import(path.join(base, 'src-api/modules/search/vocabulary.ts'))) as {
  Vocabulary: typeof Vocabulary;
};
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
for (const { kind, words } of classes) {
  for (const word of words) {
    const [a, b] = vocabularies.map((vocabulary) => JSON.stringify(vocabulary.fuzzyMatches(word, allowedEdits)));
    if (a !== b) throw new Error(`${kind} "${word}": different matches`);
  }
  const best = [Infinity, Infinity];
  for (let round = 0; round < 5; round++) {
    vocabularies.forEach((vocabulary, v) => {
      const started = performance.now();
      for (const word of words) vocabulary.fuzzyMatches(word, allowedEdits);
      best[v] = Math.min(best[v]!, ((performance.now() - started) * 1000) / words.length);
    });
  }
  console.log(
    `${kind.padEnd(24)} base ${best[0]!.toFixed(0)} µs, this ${best[1]!.toFixed(0)} µs, this/base ${(best[1]! / best[0]!).toFixed(2)}`,
  );
}
