import { MIN_STEM_LENGTH, stemOf, stemPrefix } from './analyzer';
import type { IndexStore } from './index-store';
import type { EditAllowance } from './typo-index';

/**
 * Query expansion: each query term stands for vocabulary terms with a factor
 * (exact 1.0; other forms of the word, by stem, 0.9; prefix completions
 * 0.6–0.9, closer to 0.9 the less is missing;
 * typos 0.4–0.5 for one edit and 0.24–0.3 for two (for a word no agent
 * uses), higher with more trigrams in common; a misspelt form of a word,
 * found by its stem, 0.4).
 */

const PREFIX_MIN_LENGTH = 2;
const MAX_PREFIX_EXPANSIONS = 6;
/**
 * Typo tolerance: a query word of ONE_EDIT_MIN_LENGTH letters or more may be
 * one edit off; two edits when the longer of the typed and the vocabulary
 * word has TWO_EDITS_MIN_LENGTH letters or more ("mirimir" for "mirsilmir":
 * the typed word came out short because letters were dropped).
 */
export const ONE_EDIT_MIN_LENGTH = 4;
export const TWO_EDITS_MIN_LENGTH = 8;
export const allowedEdits: EditAllowance = (queryLength, termLength) =>
  queryLength < ONE_EDIT_MIN_LENGTH ? 0 : Math.max(queryLength, termLength) >= TWO_EDITS_MIN_LENGTH ? 2 : 1;
/**
 * A word some agent uses is taken as meant: its near misses are looked for one edit away, not two. Its two-edit
 * look-alikes are other words far more often than what the user meant (at 1,000,000 agents a 12-letter name has a
 * dozen), and finding them took five times as long there as finding the one-edit ones (bench/fuzzy-known-ab.ts).
 */
export const knownWordEdits: EditAllowance = (queryLength, termLength) => Math.min(1, allowedEdits(queryLength, termLength));
const MAX_FUZZY_EXPANSIONS = 8;
/** A term this many agents use is taken as spelt right: no typo expansion (saves time, avoids "data" → "date"). */
const FUZZY_SKIP_DOCUMENT_FREQUENCY = 10;
const PREFIX_FACTOR_MIN = 0.6;
const PREFIX_FACTOR_SPAN = 0.3;
/** Typo factors by edit count, scaled by 0.8–1.0 with trigram similarity; one edit always beats two. */
const FUZZY_FACTOR = [1, 0.5, 0.3] as const;
const FUZZY_SIMILARITY_SPAN = 0.2;
const EXPANSION_CACHE_SIZE = 10_000;
/** Other forms of the word ("summarize" for "summarization"): below the exact form. */
const STEM_FACTOR = 0.9;
/** A word with the same stem is at most this much longer than the stem ("summar" + "izations"). */
const MAX_STEM_SUFFIX_LENGTH = 8;
/** A misspelt form ("translatr"): its last 1–3 letters dropped, what is left (5 letters or more) taken as a stem. */
const FORM_TYPO_MAX_CUT = 3;
const FORM_TYPO_MIN_STEM_LENGTH = 5;
/** As a one-edit typo with little in common (FUZZY_FACTOR[1] × 0.8). */
const FORM_TYPO_FACTOR = 0.4;

export interface Expansions {
  terms: { termId: number; factor: number }[];
  /** Agents with the query term itself (0: it is not a known word). */
  exactFrequency: number;
}

export class QueryExpander {
  private readonly cache = new Map<string, Expansions>();
  private cacheVocabularySize = 0;

  constructor(private readonly store: IndexStore) {}

  /** The vocabulary terms a query term stands for, cached until the vocabulary grows. */
  expand(term: string, withPrefixes: boolean): Expansions {
    const { vocabulary } = this.store;
    if (this.cacheVocabularySize !== vocabulary.size || this.cache.size >= EXPANSION_CACHE_SIZE) {
      this.cache.clear();
      this.cacheVocabularySize = vocabulary.size;
    }
    const cacheKey = withPrefixes ? `${term}*` : term;
    const cached = this.cache.get(cacheKey);
    if (cached) return cached;

    const factors = new Map<number, number>();
    const frequency = (termId: number): number => this.store.documentFrequencyOf(termId);
    const exact = vocabulary.idOf(term);
    if (exact !== undefined && frequency(exact) > 0) factors.set(exact, 1);

    if (withPrefixes && term.length >= PREFIX_MIN_LENGTH) {
      // The most frequent completions, the first visited first among equals (a stable sort's first few): kept as they
      // come rather than all sorted (at 1,000,000 agents a four-letter prefix has thousands).
      const completions: number[] = [];
      vocabulary.forEachWithPrefix(term, (termId) => {
        if (termId === exact) return;
        const termFrequency = frequency(termId);
        if (termFrequency === 0) return;
        let at = completions.length;
        while (at > 0 && frequency(completions[at - 1]!) < termFrequency) at--;
        if (at >= MAX_PREFIX_EXPANSIONS) return;
        completions.splice(at, 0, termId);
        if (completions.length > MAX_PREFIX_EXPANSIONS) completions.pop();
      });
      for (const termId of completions) {
        factors.set(termId, PREFIX_FACTOR_MIN + (PREFIX_FACTOR_SPAN * term.length) / vocabulary.term(termId).length);
      }
    }

    if (term.length >= MIN_STEM_LENGTH) {
      this.forEachWithStem(stemOf(term), (termId) => {
        if (termId !== exact && (factors.get(termId) ?? 0) < STEM_FACTOR) factors.set(termId, STEM_FACTOR);
      });
    }

    const exactFrequency = exact === undefined ? 0 : frequency(exact);
    if (term.length >= ONE_EDIT_MIN_LENGTH && exactFrequency < FUZZY_SKIP_DOCUMENT_FREQUENCY) {
      const usable = (termId: number): boolean => frequency(termId) > 0;
      const near = vocabulary
        .fuzzyMatches(term, exactFrequency > 0 ? knownWordEdits : allowedEdits, { count: MAX_FUZZY_EXPANSIONS, usable })
        .filter(({ termId }) => usable(termId))
        .sort((a, b) => a.distance - b.distance || b.similarity - a.similarity || frequency(b.termId) - frequency(a.termId))
        .slice(0, MAX_FUZZY_EXPANSIONS);
      for (const { termId, distance, similarity } of near) {
        const factor = FUZZY_FACTOR[distance]! * (1 - FUZZY_SIMILARITY_SPAN + FUZZY_SIMILARITY_SPAN * similarity);
        if ((factors.get(termId) ?? 0) < factor) factors.set(termId, factor);
      }
    }

    if (factors.size === 0) this.addFormTypos(term, factors);

    const expansions: Expansions = {
      terms: [...factors].map(([termId, factor]) => ({ termId, factor })),
      exactFrequency,
    };
    this.cache.set(cacheKey, expansions);
    return expansions;
  }

  /**
   * A misspelt form of a word may be too far from every form the index holds for the typo rule: "translatr" is
   * three edits from "translation", "deploymnt" from "deploy". When nothing else matched, the word less its last
   * one to three letters is tried as a stem ("translat", "deploy"): the longest such stem that indexed words have.
   */
  private addFormTypos(term: string, factors: Map<number, number>): void {
    for (let cut = 1; cut <= FORM_TYPO_MAX_CUT && term.length - cut >= FORM_TYPO_MIN_STEM_LENGTH; cut++) {
      this.forEachWithStem(stemOf(term.slice(0, -cut)), (termId) => factors.set(termId, FORM_TYPO_FACTOR));
      if (factors.size > 0) return;
    }
  }

  /** The indexed words (document frequency above 0) whose stem is `stem`. */
  private forEachWithStem(stem: string, visit: (termId: number) => void): void {
    const { vocabulary } = this.store;
    // Words sharing the stem all start with its prefix: a bounded prefix scan, each candidate stemmed once per query
    // word. A word stemming leaves as it is has this stem only if it is the stem: only those two kinds are visited.
    vocabulary.forEachStemmableWithPrefix(stemPrefix(stem), vocabulary.idOf(stem), (termId) => {
      if (this.store.documentFrequencyOf(termId) === 0) return;
      const word = vocabulary.term(termId);
      if (word.length <= stem.length + MAX_STEM_SUFFIX_LENGTH && stemOf(word) === stem) visit(termId);
    });
  }
}
