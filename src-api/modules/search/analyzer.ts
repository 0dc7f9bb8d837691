import { stemmer } from 'stemmer';

/**
 * Word forms: the Porter stemmer (npm `stemmer`), so that "summarize",
 * "summarizer" and "summarization" share the stem "summar", "translate" and
 * "translator" share "translat". One adjustment: Porter turns a final "y"
 * into "i" before it strips later suffixes, so "deploys" gives "deploi" but
 * "deployment" gives "deploy"; a stem still ending in "y" is given the same
 * "i" (its own step-1c rule applied once more), so both give "deploi".
 *
 * The index keeps each word as written; stems are used at query time only
 * (see `expansion.ts`), so an exact form can be ranked above other forms of
 * the word, and the index pays nothing for them.
 */

/** Words shorter than this are left alone: stems of 1–3 letter words mostly merge unrelated words ("ai", "as"). */
export const MIN_STEM_LENGTH = 4;

export function stemOf(word: string): string {
  if (!stemMayChange(word)) return word;
  const stem = stemmer(word);
  return stem.length > 2 && stem.endsWith('y') && /[aeiou]/.test(stem.slice(0, -1)) ? `${stem.slice(0, -1)}i` : stem;
}

/**
 * Whether `stemOf(word)` may differ from `word`: when false, it is the word itself. Short words and words with
 * digits and the like ("gpt4", "v2") are not stemmed; most words end in none of the stemmer's suffixes (its
 * regular expressions cost ~0.7 µs a word; a query's stem scan meets thousands of terms, see expansion.ts).
 */
export function stemMayChange(word: string): boolean {
  if (word.length < MIN_STEM_LENGTH) return false;
  for (let i = 0; i < word.length; i++) {
    const code = word.charCodeAt(i);
    if (code < 97 || code > 122) return false;
  }
  return porterMayChange(word);
}

/**
 * Whether the Porter stemmer may change `word` (4 letters or more, all a–z): false only when the word ends in
 * none of the suffixes its steps look for, so that every step leaves it as it is: an "s" (step 1a); "ed", "eed"
 * or "ing" (1b); a "y" (1c); step 2's, 3's and 4's suffixes (ational, tional, enci, anci, izer, bli, alli, entli,
 * eli, ousli, ization, ation, ator, alism, iveness, fulness, ousness, aliti, iviti, biliti, logi; icate, ative,
 * alize, iciti, ical, ful, ness; al, ance, ence, er, ic, able, ible, ant, ement, ment, ent, ou, ism, ate, iti, ous,
 * ive, ize, ion); an "e" or "ll" (step 5). Tested on the last letters only, so some words are sent to the
 * stemmer that it leaves alone ("tal", "ant" with too short a stem).
 */
export function porterMayChange(word: string): boolean {
  const before = word.charCodeAt(word.length - 2);
  switch (word.charCodeAt(word.length - 1)) {
    case 0x73: // s
    case 0x79: // y
    case 0x65: // e: ance, ence, able, ible, ate, ive, ize, icate, ative, alize, step 5
      return true;
    case 0x64: // d: ed, eed
      return before === 0x65;
    case 0x67: // g
      return word.endsWith('ing');
    case 0x6c: // l: al (ational, tional, ical), ll, ful
      return before === 0x61 || before === 0x6c || word.endsWith('ful');
    case 0x72: // r: er (izer), ator
      return before === 0x65 || word.endsWith('ator');
    case 0x6e: // n: ion (ization, ation)
      return word.endsWith('ion');
    case 0x63: // c: ic
      return before === 0x69;
    case 0x74: // t: nt (ant, ent, ment, ement)
      return before === 0x6e;
    case 0x75: // u: ou
      return before === 0x6f;
    case 0x6d: // m: ism (alism)
      return word.endsWith('ism');
    case 0x69: // i: ci (enci, anci), li (bli, alli, entli, eli, ousli), ti (aliti, iviti, biliti, iciti, iti), gi (logi)
      return before === 0x63 || before === 0x6c || before === 0x74 || before === 0x67;
    default:
      return false;
  }
}

/**
 * Every word with stem `stem` starts with this: the stem itself, less a
 * final "e" or "i" that stemming may have put there ("hoping" → "hope",
 * "summary" → "summari").
 */
export function stemPrefix(stem: string): string {
  return stem.length > 3 && (stem.endsWith('e') || stem.endsWith('i')) ? stem.slice(0, -1) : stem;
}

/**
 * Where a word written in camel case splits into words: "CodeReviewer" →
 * [0, 4, 12], "XMLParser" → [0, 3, 9], "OAuth2Client" → [0, 1, 6, 12]…
 * Offsets into `text` from `start` to `end` (both included as the first and
 * last boundary); null when the word has no inner case change (the common
 * case, decided without allocating).
 */
export function camelBoundaries(text: string, start: number, end: number): number[] | null {
  let boundaries: number[] | null = null;
  for (let i = start + 1; i < end; i++) {
    const previous = text.charCodeAt(i - 1);
    const current = text.charCodeAt(i);
    const next = i + 1 < end ? text.charCodeAt(i + 1) : 0;
    const split =
      (isUpper(current) && (isLower(previous) || isDigit(previous))) || (isUpper(previous) && isUpper(current) && isLower(next));
    if (split) (boundaries ??= [start]).push(i);
  }
  if (boundaries) boundaries.push(end);
  return boundaries;
}

function isUpper(code: number): boolean {
  return code >= 65 && code <= 90;
}

function isLower(code: number): boolean {
  return code >= 97 && code <= 122;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}
