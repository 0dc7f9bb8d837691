import { camelBoundaries } from './analyzer';

/**
 * Text handling shared by indexing and querying: both sides must turn text
 * into terms the same way, or nothing matches.
 */

/** Longer tokens are cut here: nobody types 40+ characters of one word, and it bounds fuzzy work. */
export const MAX_TOKEN_LENGTH = 40;

/**
 * Words too common to say anything about relevance. They are dropped from
 * every field except the name, where "The Scraper" should still be findable
 * as typed.
 */
export const STOPWORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'by',
  'for',
  'from',
  'has',
  'have',
  'in',
  'into',
  'is',
  'it',
  'its',
  'of',
  'on',
  'or',
  'that',
  'the',
  'this',
  'to',
  'was',
  'were',
  'will',
  'with',
]);

const NON_ASCII = /[\u0080-\uffff]/;
const COMBINING_MARKS = /\p{M}+/gu;
const UNICODE_WORD = /[\p{L}\p{N}]+/gu;

/**
 * Calls `visit` with each lowercase word of letters and digits, accents
 * stripped ("Café-Bot" → "cafe", "bot"). ASCII text, the common case, takes a
 * hand-written scan: this runs for every word of every agent at start-up.
 */
export function forEachToken(text: string, visit: (token: string) => void): void {
  let lower = text.toLowerCase();
  if (NON_ASCII.test(lower)) {
    lower = lower.normalize('NFKD').replace(COMBINING_MARKS, '');
    UNICODE_WORD.lastIndex = 0;
    for (let match = UNICODE_WORD.exec(lower); match !== null; match = UNICODE_WORD.exec(lower)) {
      const token = match[0];
      visit(token.length > MAX_TOKEN_LENGTH ? token.slice(0, MAX_TOKEN_LENGTH) : token);
    }
    return;
  }
  let start = -1;
  const length = lower.length;
  for (let i = 0; i <= length; i++) {
    const code = i < length ? lower.charCodeAt(i) : 0;
    const isWordChar = (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
    if (isWordChar) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      visit(lower.slice(start, Math.min(i, start + MAX_TOKEN_LENGTH)));
      start = -1;
    }
  }
}

export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  forEachToken(text, (token) => tokens.push(token));
  return tokens;
}

/**
 * A term as a slice of `source`, plus a character to append (-1: none), so
 * that indexing never has to allocate a string for a word it already knows.
 */
export type TermVisitor = (source: string, start: number, end: number, suffix: number) => void;

export const NO_SUFFIX = -1;

/**
 * Calls `visit` with the terms a field contributes to the index, in order,
 * with repeats (for term frequency): the words of `forEachToken` as written
 * (lowercased; word forms are matched at query time through stems),
 * stopwords dropped unless `keepStopwords`. A word in camel case also gives
 * its parts ("CodeReviewer" → "code", "reviewer", "codereviewer"), as hyphens,
 * dots and underscores already separate words. Same terms as `indexTerms`,
 * without a string per word for ASCII text.
 */
export function forEachIndexTerm(text: string, keepStopwords: boolean, visit: TermVisitor): void {
  const lower = text.toLowerCase();
  if (NON_ASCII.test(lower)) {
    // Rare: accents folded by forEachToken; camel case is only split in ASCII text.
    forEachToken(text, (token) => {
      if (keepStopwords || !STOPWORDS.has(token)) visit(token, 0, token.length, NO_SUFFIX);
    });
    return;
  }
  const keep = (start: number, end: number): boolean =>
    keepStopwords || end - start > MAX_STOPWORD_LENGTH || !STOPWORD_KEYS.has(shortWordKey(lower, start, end));
  let start = -1;
  const length = lower.length;
  for (let i = 0; i <= length; i++) {
    const code = i < length ? lower.charCodeAt(i) : 0;
    if ((code >= 97 && code <= 122) || (code >= 48 && code <= 57)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      const end = Math.min(i, start + MAX_TOKEN_LENGTH);
      const parts = camelBoundaries(text, start, end);
      if (parts) {
        for (let p = 1; p < parts.length; p++) if (keep(parts[p - 1]!, parts[p]!)) visit(lower, parts[p - 1]!, parts[p]!, NO_SUFFIX);
      }
      if (keep(start, end)) visit(lower, start, end, NO_SUFFIX);
      start = -1;
    }
  }
}

/** An exact number for a word of at most 4 lowercase letters or digits (base 37), to test stopwords without a string. */
function shortWordKey(source: string, start: number, end: number): number {
  let key = 0;
  for (let i = start; i < end; i++) {
    const code = source.charCodeAt(i);
    key = key * 37 + (code >= 97 ? code - 96 : code - 21);
  }
  return key;
}

const MAX_STOPWORD_LENGTH = Math.max(...[...STOPWORDS].map((word) => word.length));
const STOPWORD_KEYS: ReadonlySet<number> = new Set([...STOPWORDS].map((word) => shortWordKey(word, 0, word.length)));

/** The terms `forEachIndexTerm` visits, as strings. */
export function indexTerms(text: string, keepStopwords: boolean): string[] {
  const terms: string[] = [];
  forEachIndexTerm(text, keepStopwords, (source, start, end, suffix) =>
    terms.push(source.slice(start, end) + (suffix === NO_SUFFIX ? '' : String.fromCharCode(suffix))),
  );
  return terms;
}

export interface ParsedQuery {
  /** Distinct query words (camel case split, stopwords dropped unless nothing else is left), at most `maxTerms`. */
  terms: string[];
  /** Hash of the whole query's words, compared with each name's to find an exact-name match. */
  nameKey: number;
}

/** The words of a query: as `tokenize`, with camel-cased words split into their parts. */
export function queryWords(query: string): string[] {
  const words: string[] = [];
  if (NON_ASCII.test(query)) return tokenize(query);
  const pattern = /[A-Za-z0-9]+/g;
  for (let match = pattern.exec(query); match !== null; match = pattern.exec(query)) {
    const start = match.index;
    const end = Math.min(start + match[0].length, start + MAX_TOKEN_LENGTH);
    const parts = camelBoundaries(query, start, end);
    if (!parts) words.push(query.slice(start, end).toLowerCase());
    else for (let p = 1; p < parts.length; p++) words.push(query.slice(parts[p - 1], parts[p]).toLowerCase());
  }
  return words;
}

export function parseQuery(query: string, maxTerms: number): ParsedQuery {
  const words = queryWords(query);
  const meaningful = words.filter((word) => !STOPWORDS.has(word));
  const terms = [...new Set(meaningful.length > 0 ? meaningful : words)].slice(0, maxTerms);
  const tokens = tokenize(query);
  return { terms, nameKey: tokens.length > 0 ? hashString(tokens.join(' ')) : -1 };
}

/** The exact-name key of a name: its words joined by single spaces, hashed ("Code-Reviewer" = "code reviewer"). */
export function nameKeyOf(name: string): number {
  const tokens = tokenize(name);
  return tokens.length > 0 ? hashString(tokens.join(' ')) : -1;
}

/**
 * cyrb53: a fast 53-bit string hash, exact in a Float64Array. Used to tell
 * whether an agent's indexed text changed and for exact-name matches; a
 * collision (about 1 in 2^53) would at worst skip one re-index.
 */
export function hashString(text: string, seed = 0): number {
  // Both halves of a 53-bit seed go in, so hashes can be chained field by field.
  let h1 = 0xdeadbeef ^ (seed >>> 0);
  let h2 = 0x41c6ce57 ^ Math.floor(seed / 4294967296);
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

let rowA = new Int32Array(64);
let rowB = new Int32Array(64);
let rowC = new Int32Array(64);

/**
 * Optimal-string-alignment distance (Levenshtein plus adjacent
 * transpositions, so "agnet" is one edit from "agent"), giving up early:
 * returns `max + 1` as soon as the distance is known to exceed `max`.
 */
export function boundedEditDistance(a: string, b: string, max: number): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (n === 0 || m === 0) return Math.max(n, m) <= max ? Math.max(n, m) : max + 1;
  if (rowA.length < m + 1) {
    rowA = new Int32Array(m + 1);
    rowB = new Int32Array(m + 1);
    rowC = new Int32Array(m + 1);
  }
  // Three rolling rows: two back (transpositions), previous, current. Only the band |i − j| ≤ max is computed:
  // a cell outside it is more than max edits away, and the cell just past each end of the band holds max + 1.
  const outside = max + 1;
  let twoBack = rowA;
  let previous = rowB;
  let current = rowC;
  for (let j = 0; j <= m; j++) previous[j] = j <= max ? j : outside;
  for (let i = 1; i <= n; i++) {
    const low = Math.max(1, i - max);
    const high = Math.min(m, i + max);
    current[low - 1] = low === 1 ? i : outside;
    let rowMin = low === 1 ? i : outside;
    const ca = a.charCodeAt(i - 1);
    for (let j = low; j <= high; j++) {
      const cb = b.charCodeAt(j - 1);
      const cost = ca === cb ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb) {
        value = Math.min(value, twoBack[j - 2]! + 1);
      }
      current[j] = value;
      if (value < rowMin) rowMin = value;
    }
    if (high < m) current[high + 1] = outside;
    if (rowMin > max) return outside;
    const recycled = twoBack;
    twoBack = previous;
    previous = current;
    current = recycled;
  }
  const distance = previous[m]!;
  return distance <= max ? distance : max + 1;
}
