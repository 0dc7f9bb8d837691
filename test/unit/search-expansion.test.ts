import { describe, expect, it, vi } from 'vitest';
import { porterMayChange, stemOf, stemPrefix } from '../../src-api/modules/search/analyzer';
import { QueryExpander, allowedEdits, knownWordEdits } from '../../src-api/modules/search/expansion';
import type { IndexStore } from '../../src-api/modules/search/index-store';
import { Vocabulary } from '../../src-api/modules/search/vocabulary';
import { seededRandom } from '../../src-api/lib/seeded-random';

// The stemmer as npm ships it, counting its calls.
const stemmerCalls = vi.hoisted(() => ({ count: 0 }));
vi.mock('stemmer', async (importOriginal) => {
  const actual = await importOriginal<typeof import('stemmer')>();
  return {
    stemmer: (word: string) => {
      stemmerCalls.count++;
      return actual.stemmer(word);
    },
  };
});
const { stemmer } = await vi.importActual<typeof import('stemmer')>('stemmer');

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
/** Every suffix the stemmer's steps look for, and the letters they leave before them. */
const SUFFIXES = [
  ...['s', 'es', 'ies', 'sses', 'ss', 'ed', 'eed', 'ing', 'y', 'e', 'll', 'at', 'bl', 'iz', 'ation', 'ization', 'ational', 'tional'],
  ...['enci', 'anci', 'izer', 'bli', 'alli', 'entli', 'eli', 'ousli', 'ator', 'alism', 'iveness', 'fulness', 'ousness', 'aliti'],
  ...['iviti', 'biliti', 'logi', 'icate', 'ative', 'alize', 'iciti', 'ical', 'ful', 'ness', 'al', 'ance', 'ence', 'er', 'ic'],
  ...['able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize', 'ion', 'sion', 'tion'],
];

describe('analyzer: words the stemmer leaves alone', () => {
  it('says a word is left alone only when the stemmer gives it back unchanged', () => {
    const check = (word: string): void => {
      if (!porterMayChange(word)) expect(stemmer(word), word).toBe(word);
    };
    // Every word of four letters, and words made of the suffixes and single letters in any order.
    for (const a of LETTERS) for (const b of LETTERS) for (const c of LETTERS) for (const d of LETTERS) check(a + b + c + d);
    const random = seededRandom(24);
    for (let i = 0; i < 200_000; i++) {
      let word = '';
      for (let part = 1 + random.int(4); part > 0; part--) word += random.next() < 0.5 ? random.pick(SUFFIXES) : random.pick([...LETTERS]);
      if (random.next() < 0.5) word += random.pick([...LETTERS]);
      if (word.length >= 4) check(word);
    }
  });

  it('stems such words without the stemmer (a stem scan tests thousands of terms a new query word)', () => {
    stemmerCalls.count = 0;
    for (const word of ['caltrikirmirzu', 'kazumorvel', 'quodaxpho', 'linbrimorquo', 'jastalgorvox']) expect(stemOf(word)).toBe(word);
    expect(stemmerCalls.count).toBe(0);
    expect(stemOf('summarization')).toBe('summar');
    expect(stemOf('deploys')).toBe('deploi');
    expect(stemmerCalls.count).toBe(2);
  });
});

/** A vocabulary and document frequencies, as much of an IndexStore as the expander reads. */
function storeOf(
  words: string[],
  frequencyOf: (word: string) => number,
): { store: IndexStore; lookups: { count: number }; add: (word: string, frequency: number) => void } {
  const vocabulary = new Vocabulary();
  const frequencies: number[] = [];
  const add = (word: string, frequency: number): void => {
    frequencies[vocabulary.intern(word)] = frequency;
  };
  for (const word of words) add(word, frequencyOf(word));
  const lookups = { count: 0 };
  const documentFrequencyOf = (termId: number): number => {
    lookups.count++;
    return frequencies[termId] ?? 0;
  };
  return { store: { vocabulary, documentFrequencyOf } as unknown as IndexStore, lookups, add };
}

/** expand() as it was written before its completions were kept as they came: every completion sorted. */
function expandBySorting(store: IndexStore, term: string): { termId: number; factor: number }[] {
  const { vocabulary } = store;
  const frequency = (termId: number): number => store.documentFrequencyOf(termId);
  const factors = new Map<number, number>();
  const exact = vocabulary.idOf(term);
  if (exact !== undefined && frequency(exact) > 0) factors.set(exact, 1);
  if (term.length >= 2) {
    const completions: number[] = [];
    vocabulary.forEachWithPrefix(term, (termId) => {
      if (termId !== exact && frequency(termId) > 0) completions.push(termId);
    });
    completions.sort((a, b) => frequency(b) - frequency(a));
    for (const termId of completions.slice(0, 6)) factors.set(termId, 0.6 + (0.3 * term.length) / vocabulary.term(termId).length);
  }
  if (term.length >= 4) {
    const stem = stemOf(term);
    vocabulary.forEachWithPrefix(stemPrefix(stem), (termId) => {
      if (termId === exact || frequency(termId) === 0 || (factors.get(termId) ?? 0) >= 0.9) return;
      const word = vocabulary.term(termId);
      if (word.length <= stem.length + 8 && stemOf(word) === stem) factors.set(termId, 0.9);
    });
  }
  const exactFrequency = exact === undefined ? 0 : frequency(exact);
  if (term.length >= 4 && exactFrequency < 10) {
    const near = vocabulary
      .fuzzyMatches(term, exactFrequency > 0 ? knownWordEdits : allowedEdits)
      .filter(({ termId }) => frequency(termId) > 0)
      .sort((a, b) => a.distance - b.distance || b.similarity - a.similarity || frequency(b.termId) - frequency(a.termId))
      .slice(0, 8);
    for (const { termId, distance, similarity } of near) {
      const factor = [1, 0.5, 0.3][distance]! * (0.8 + 0.2 * similarity);
      if ((factors.get(termId) ?? 0) < factor) factors.set(termId, factor);
    }
  }
  return [...factors].map(([termId, factor]) => ({ termId, factor }));
}

describe('expansion: completions', () => {
  it('equals sorting every completion by frequency (first visited first among equals), with stems and typos', () => {
    const random = seededRandom(7);
    const stems = ['summar', 'deploi', 'translat', 'review', 'cal', 'calt', 'kaz', 'mor'];
    const endings = ['', 's', 'ize', 'izer', 'ization', 'ing', 'ed', 'er', 'ers', 'ment', 'y', 'ies', 'ate', 'ion', 'ful'];
    for (let round = 0; round < 6; round++) {
      const words = new Set<string>();
      while (words.size < 3_000) {
        let word = random.pick(stems);
        while (random.next() < 0.6) word += random.pick(['ka', 'zu', 'mor', 'tri', 'lin', 'al', 'i', 'e', 'o']);
        words.add(word + random.pick(endings));
      }
      // Few distinct frequencies (many ties) and some zeros (terms whose agents are gone).
      const frequencyOf = (): number => (random.next() < 0.1 ? 0 : 1 + random.int(round < 3 ? 3 : 40));
      const { store, add } = storeOf([...words], frequencyOf);
      const queries = [...stems, ...[...words].slice(0, 150), ...[...words].slice(0, 150).map((word) => word.slice(0, 4))];
      for (const query of queries) {
        const expected = expandBySorting(store, query);
        expect(new QueryExpander(store).expand(query, true).terms, query).toEqual(expected);
      }
      // Terms added since the last merge of the sorted terms (fewer than the vocabulary merges at) are visited too.
      for (const word of [...words].slice(0, 300)) add(`${word}${random.pick(endings)}${random.pick(endings)}`, frequencyOf());
      for (const query of queries.slice(0, 200)) {
        const expected = expandBySorting(store, query);
        expect(new QueryExpander(store).expand(query, true).terms, query).toEqual(expected);
      }
    }
  });

  it('looks each completion of a long run up a few times, not once per comparison of a sort', () => {
    const random = seededRandom(11);
    const words = Array.from({ length: 20_000 }, (_, i) => `calt${i.toString(36)}x`);
    const { store, lookups } = storeOf(words, () => 1 + random.int(1_000));
    const termReads = vi.spyOn(store.vocabulary, 'term');
    new QueryExpander(store).expand('calt', true);
    // The prefix scan looks every completion up once; keeping the six most frequent adds ~1 more a completion, and
    // the stem scan none (see below).
    // Sorting them all took ~2 × log2(20,000) ≈ 29.
    expect(lookups.count).toBeLessThan(2.5 * words.length);
    // The stem scan ("calt") passes over the terms stemming leaves alone (all of these) without reading them: only
    // the six completions' lengths are read.
    expect(termReads.mock.calls.length).toBeLessThan(10);
  });
});

describe('expansion: typos', () => {
  const words = ['kubernetes', 'kubernets', 'kubernotes', 'kubrnetis'];
  const { store } = storeOf(words, () => 3);
  const near = (query: string) =>
    new QueryExpander(store)
      .expand(query, false)
      .terms.map(({ termId, factor }) => [store.vocabulary.term(termId), factor < 0.35 ? 2 : factor < 1 ? 1 : 0])
      .sort();

  it('looks two edits away for a word no agent uses, one for a word some agent uses', () => {
    // "kubrnetes" is unknown: one edit from "kubernetes", two from "kubernets", "kubernotes" and "kubrnetis".
    expect(near('kubrnetes')).toEqual([
      ['kubernetes', 1],
      ['kubernets', 2],
      ['kubernotes', 2],
      ['kubrnetis', 1],
    ]);
    // "kubernets" is some agent's word: its one-edit neighbours only ("kubrnetis" is two away).
    expect(near('kubernets')).toEqual([
      ['kubernetes', 1],
      ['kubernets', 0],
    ]);
    expect(near('kubernotes')).toEqual([
      ['kubernetes', 1],
      ['kubernotes', 0],
    ]);
  });
});

describe('expansion: misspelt forms', () => {
  const words = ['translation', 'translations', 'deploys', 'deploy', 'agent', 'agents'];
  const { store } = storeOf(words, () => 5);
  const termsOf = (query: string): string[] =>
    new QueryExpander(store)
      .expand(query, false)
      .terms.map(({ termId }) => store.vocabulary.term(termId))
      .sort();

  it('takes the word less its last one to three letters as a stem when nothing else matches', () => {
    // Three edits from every indexed form: no typo matches.
    expect(termsOf('translatr')).toEqual(['translation', 'translations']);
    expect(termsOf('deploymnt')).toEqual(['deploy', 'deploys']);
    for (const { factor } of new QueryExpander(store).expand('deploymnt', false).terms) expect(factor).toBe(0.4);
  });

  it('is not tried when the word matches otherwise, nor for stems under five letters', () => {
    // One edit from "agents": a typo; as a misspelt form it would also bring "agent".
    expect(termsOf('agentsx')).toEqual(['agents']);
    expect(termsOf('agenxyz')).toEqual([]);
    expect(termsOf('agentxyzw')).toEqual([]);
    expect(termsOf('quorvantix')).toEqual([]);
  });
});
