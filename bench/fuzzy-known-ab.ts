/**
 * What looking a known word's look-alikes up one edit away instead of two saves (expansion.ts, knownWordEdits):
 * Vocabulary.fuzzyMatches of the bench's exact-distinctive-word queries (agents' own name words, all known, each
 * looked up once: a query word's expansions are cached after its first search) with both allowances, alternating
 * rounds in one process, each asked for the eight best as query expansion asks. Reports µs a word, the matches found
 * and the ratio to the two-edit baseline measured in the same run.
 *
 *   npx tsx bench/fuzzy-known-ab.ts [--agents 100000] [--rounds 5]
 */
import { performance } from 'node:perf_hooks';
import { allowedEdits, knownWordEdits } from '../src-api/modules/search/expansion';
import { indexTerms } from '../src-api/modules/search/text';
import type { EditAllowance } from '../src-api/modules/search/typo-index';
import { Vocabulary } from '../src-api/modules/search/vocabulary';
import { classSearches, generateAgents } from './lib/dataset';
import { argument } from './lib/cli';

const size = Number(argument('agents') ?? 100_000);
const rounds = Number(argument('rounds') ?? 5);
const agents = generateAgents(size);
const vocabulary = new Vocabulary();
for (const agent of agents) {
  for (const text of [agent.name, agent.tagline, agent.description, agent.author, ...agent.capabilities]) {
    for (const term of indexTerms(text, true)) vocabulary.intern(term);
  }
}
const words = [...new Set(classSearches(agents, 'exact distinctive word', 1000).map((search) => search.q))];
const unknown = words.filter((word) => vocabulary.idOf(word) === undefined).length;
if (unknown > 0) throw new Error(`${unknown} of the exact class's words are not in the vocabulary`);

const variants: { name: string; allowance: EditAllowance; best: number; matches: number }[] = [
  { name: 'two edits (baseline)', allowance: allowedEdits, best: Infinity, matches: 0 },
  { name: 'one edit (known words)', allowance: knownWordEdits, best: Infinity, matches: 0 },
];
const best = { count: 8, usable: () => true };
for (let round = 0; round < rounds; round++) {
  for (const variant of round % 2 ? [...variants].reverse() : variants) {
    let matches = 0;
    const started = performance.now();
    for (const word of words) matches += vocabulary.fuzzyMatches(word, variant.allowance, best).length;
    variant.best = Math.min(variant.best, ((performance.now() - started) * 1000) / words.length);
    variant.matches = matches;
  }
}
console.log(`${size.toLocaleString('en')} agents, ${words.length} exact-class words, best of ${rounds} rounds`);
for (const variant of variants) {
  const ratio = variant.best / variants[0]!.best;
  console.log(`  ${variant.name}: ${variant.best.toFixed(0)} µs a word (×${ratio.toFixed(2)}), ${variant.matches} look-alikes`);
}
