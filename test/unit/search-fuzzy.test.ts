import { describe, expect, it } from 'vitest';
import { allowedEdits } from '../../src-api/modules/search/expansion';
import { boundedEditDistance } from '../../src-api/modules/search/text';
import { distinctGrams, WHOLE_READ, type FuzzyMatch } from '../../src-api/modules/search/typo-index';
import { Vocabulary } from '../../src-api/modules/search/vocabulary';

/** Edit distances a lookup computes at most (vocabulary.ts's MAX_VERIFICATIONS). */
const MAX_VERIFICATIONS = 2_000;

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state / 2 ** 32;
  };
}

function randomWord(next: () => number, alphabet: string, first: string, minLength: number, maxLength: number): string {
  const length = minLength + Math.floor(next() * (maxLength - minLength + 1));
  let word = first;
  while (word.length < length) word += alphabet[Math.floor(next() * alphabet.length)]!;
  return word;
}

function typo(next: () => number, word: string, alphabet: string): string {
  if (word.length < 3) return word;
  const at = 1 + Math.floor(next() * (word.length - 2));
  const letter = alphabet[Math.floor(next() * alphabet.length)]!;
  const kind = Math.floor(next() * 4);
  if (kind === 0) return word.slice(0, at) + letter + word.slice(at + 1);
  if (kind === 1) return word.slice(0, at) + word.slice(at + 1);
  if (kind === 2) return word.slice(0, at) + letter + word.slice(at);
  return word.slice(0, at) + word[at + 1]! + word[at]! + word.slice(at + 2);
}

const gramSets = new Map<string, Set<string>>();

/** How many candidates the last `scanned` lookup had to choose the checked ones from. */
let lastCandidates = 0;

/**
 * The lookup by its definition, over every term: the terms with the query's first letter sharing a gram with it
 * (the first gram aside) and passing the length and shared-gram filters, most shared grams first, then by the first
 * of the query's grams they have, then by id; the first MAX_VERIFICATIONS of them checked by edit distance.
 */
function scanned(terms: readonly string[], term: string): FuzzyMatch[] {
  const length = term.length;
  let maxDistance = 0;
  for (let other = Math.max(1, length - 2); other <= length + 2; other++) maxDistance = Math.max(maxDistance, allowedEdits(length, other));
  if (maxDistance === 0) return [];
  const grams = distinctGrams(term);
  const queryGrams = grams.filter((gram) => gram !== `\u0002\u0002${term[0]}`);
  const candidates: { termId: number; shared: number; first: number; gramCount: number }[] = [];
  terms.forEach((other, termId) => {
    if (other[0] !== term[0] || Math.abs(other.length - length) > maxDistance) return;
    const otherGrams = gramSets.get(other) ?? new Set(distinctGrams(other));
    gramSets.set(other, otherGrams);
    const held = queryGrams.map((gram) => otherGrams.has(gram));
    const count = held.filter(Boolean).length;
    if (count === 0) return;
    const shared = Math.min(255, count + 1);
    const gramCount = Math.min(255, otherGrams.size);
    const allowed = allowedEdits(length, other.length);
    if (allowed === 0 || Math.abs(other.length - length) > allowed) return;
    if (shared < Math.max(1, Math.max(grams.length, gramCount) - 4 * allowed)) return;
    candidates.push({ termId, shared, first: held.indexOf(true), gramCount });
  });
  candidates.sort((a, b) => b.shared - a.shared || a.first - b.first || a.termId - b.termId);
  lastCandidates = candidates.length;
  const matches: FuzzyMatch[] = [];
  for (const { termId, shared, gramCount } of candidates.slice(0, MAX_VERIFICATIONS)) {
    if (terms[termId] === term) continue;
    const allowed = allowedEdits(length, terms[termId]!.length);
    const distance = boundedEditDistance(term, terms[termId]!, allowed);
    if (distance <= allowed) matches.push({ termId, distance, similarity: (2 * shared) / (grams.length + gramCount) });
  }
  return matches;
}

describe('Vocabulary.fuzzyMatches', () => {
  const cases = [
    { alphabet: 'ab', firsts: 'a', size: 20_000, lengths: [9, 14] },
    { alphabet: 'abc', firsts: 'ab', size: 20_000, lengths: [6, 18] },
    { alphabet: 'abcde', firsts: 'ab', size: 8_000, lengths: [4, 14] },
    { alphabet: 'abcdefghijklmnopqrstuvwxyz', firsts: 'ab', size: 20_000, lengths: [3, 20] },
  ] as const;

  it.each(cases)(
    'equals a scan of every term with the same first letter ($alphabet, $size terms)',
    ({ alphabet, firsts, size, lengths }) => {
      const next = random(size);
      const vocabulary = new Vocabulary();
      const terms: string[] = [];
      for (let i = 0; i < size; i++) {
        const term = randomWord(next, alphabet, firsts[Math.floor(next() * firsts.length)]!, lengths[0], lengths[1]);
        if (vocabulary.idOf(term) !== undefined) continue;
        vocabulary.intern(term);
        terms.push(term);
      }
      let capped = 0;
      for (let q = 0; q < 60; q++) {
        const known = terms[Math.floor(next() * terms.length)]!;
        const query = q % 3 === 0 ? known : q % 3 === 1 ? typo(next, known, alphabet) : randomWord(next, alphabet, 'a', 4, 22);
        const expected = scanned(terms, query);
        expect(vocabulary.fuzzyMatches(query, allowedEdits), query).toEqual(expected);
        if (lastCandidates > MAX_VERIFICATIONS) capped++;
      }
      // Small alphabets make thousands of look-alikes, so the cap on verifications decides which are checked.
      if (alphabet === 'ab') expect(capped).toBeGreaterThan(0);
    },
  );

  it('finds every term within the allowed edits when fewer than the cap look alike', () => {
    const next = random(7);
    const vocabulary = new Vocabulary();
    const terms: string[] = [];
    for (let i = 0; i < 5_000; i++) {
      const term = randomWord(next, 'abcdefghijklmnopqrstuvwxyz', 'abcdefghijklmnopqrstuvwxyz'[Math.floor(next() * 26)]!, 4, 16);
      if (vocabulary.idOf(term) !== undefined) continue;
      vocabulary.intern(term);
      terms.push(term);
    }
    for (let q = 0; q < 200; q++) {
      const query = typo(next, typo(next, terms[Math.floor(next() * terms.length)]!, 'abcdefghijklmnopqrstuvwxyz'), 'abc');
      const found = vocabulary
        .fuzzyMatches(query, allowedEdits)
        .map(({ termId, distance }) => [terms[termId], distance])
        .sort();
      const all = terms
        .filter((term) => term[0] === query[0] && term !== query)
        .map((term) => [term, boundedEditDistance(query, term, allowedEdits(query.length, term.length))] as const)
        .filter(([term, distance]) => distance <= allowedEdits(query.length, term.length))
        .map(([term, distance]) => [term, distance])
        .sort();
      expect(found, query).toEqual(all);
    }
  });

  it('does not read the longest gram lists of a long word through', () => {
    // 20,000 words starting "kal": the lists of "␂ka" and "kal" hold them all.
    const next = random(3);
    const vocabulary = new Vocabulary();
    const terms: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const term = `kal${randomWord(next, 'abcdefghijklmnopqrstuvwxyz', '', 9, 11)}`;
      if (vocabulary.idOf(term) !== undefined) continue;
      vocabulary.intern(term);
      terms.push(term);
    }
    const query = typo(next, terms[123]!, 'xyz');
    const before = vocabulary.entriesRead;
    expect(vocabulary.fuzzyMatches(query, allowedEdits)).toEqual(scanned(terms, query));
    // Reading every list but the first gram's would be more than 2 × 20,000 entries.
    expect(vocabulary.entriesRead - before).toBeLessThan(terms.length);
  });

  it("marks only the terms of the word's first letter (a lookup reads no other), numbered in that letter", () => {
    const next = random(5);
    const vocabulary = new Vocabulary();
    const terms: string[] = [];
    for (const first of 'abcdefgh') {
      for (let i = 0; i < 1_000; i++) {
        const term = randomWord(next, 'abcdefghijklmnopqrstuvwxyz', first, 5, 12);
        if (vocabulary.idOf(term) !== undefined) continue;
        vocabulary.intern(term);
        terms.push(term);
      }
    }
    for (let q = 0; q < 80; q++) {
      const query = typo(next, terms[Math.floor(next() * terms.length)]!, 'abcdefghijklmnopqrstuvwxyz');
      expect(vocabulary.fuzzyMatches(query, allowedEdits), query).toEqual(scanned(terms, query));
    }
    // As many marks as the largest letter has terms (~1,000), not as the vocabulary (~8,000): at 1,000,000 agents a
    // letter's 40,000 marks stay in the CPU's cache, where the vocabulary's million did not.
    const { markSlots } = (vocabulary as unknown as { typos: { markSlots: number } }).typos;
    expect(markSlots).toBeLessThanOrEqual(2_048);
  });

  /** Words made of a few syllables, as the bench's names: thousands of look-alikes, long gram lists. */
  function syllableVocabulary(seed: number, count: number): { vocabulary: Vocabulary; terms: string[]; next: () => number } {
    const next = random(seed);
    const syllables = ['ma', 'mi', 'mo', 'ta', 'ti', 'to'];
    const vocabulary = new Vocabulary();
    const terms: string[] = [];
    while (terms.length < count) {
      let term = '';
      const parts = 4 + Math.floor(next() * 3);
      for (let i = 0; i < parts; i++) term += syllables[Math.floor(next() * syllables.length)]!;
      if (vocabulary.idOf(term) !== undefined) continue;
      vocabulary.intern(term);
      terms.push(term);
    }
    return { vocabulary, terms, next };
  }

  it('finds the same matches whether it reads the long gram lists whole or searches them', () => {
    const { vocabulary, terms, next } = syllableVocabulary(17, 8_000);
    const queries = Array.from({ length: 60 }, (_, q) => {
      const word = terms[Math.floor(next() * terms.length)]!;
      return q % 2 === 0 ? word : typo(next, word, 'aimot');
    });
    const saved = WHOLE_READ.perCandidate;
    try {
      for (const perCandidate of [0, 4, Infinity]) {
        WHOLE_READ.perCandidate = perCandidate;
        for (const query of queries)
          expect(vocabulary.fuzzyMatches(query, allowedEdits), `${query} ${perCandidate}`).toEqual(scanned(terms, query));
      }
    } finally {
      WHOLE_READ.perCandidate = saved;
    }
  });

  it('asked for the best few usable matches, returns them all, checking fewer terms', () => {
    const { vocabulary, terms, next } = syllableVocabulary(23, 8_000);
    // Terms with an odd id are not usable (as words no agent uses any more are not).
    const usable = (termId: number) => termId % 2 === 0;
    const bestEight = (matches: FuzzyMatch[]) =>
      matches
        .filter(({ termId }) => usable(termId))
        .sort((a, b) => a.distance - b.distance || b.similarity - a.similarity)
        .slice(0, 8);
    let all = 0;
    let returned = 0;
    for (let q = 0; q < 60; q++) {
      const word = terms[Math.floor(next() * terms.length)]!;
      const query = q % 2 === 0 ? word : typo(next, word, 'aimot');
      const every = vocabulary.fuzzyMatches(query, allowedEdits);
      const best = vocabulary.fuzzyMatches(query, allowedEdits, { count: 8, usable });
      // The same eight, in the same order (ties included): what query expansion keeps of either.
      expect(bestEight(best), query).toEqual(bestEight(every));
      // Every term returned is a match the full lookup returns too, in its order.
      expect(best, query).toEqual(every.filter((match) => best.some(({ termId }) => termId === match.termId)));
      all += every.length;
      returned += best.length;
    }
    expect(all).toBeGreaterThan(60 * 8);
    expect(returned).toBeLessThan(all * 0.8);
  });

  it('gives the same matches after its lookup stamps start over', () => {
    const vocabulary = new Vocabulary();
    for (const term of ['kubernetes', 'kubernetis', 'kubernete', 'summarization', 'summarisation']) vocabulary.intern(term);
    const expected = vocabulary.fuzzyMatches('kubernetes', allowedEdits);
    expect(expected.map(({ termId }) => vocabulary.term(termId)).sort()).toEqual(['kubernete', 'kubernetis']);
    for (let i = 0; i < 70_000; i++) vocabulary.fuzzyMatches(i % 2 === 0 ? 'summarizaton' : 'kubernetes', allowedEdits);
    expect(vocabulary.fuzzyMatches('kubernetes', allowedEdits)).toEqual(expected);
  });
});
