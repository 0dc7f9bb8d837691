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
  if (word.length < MIN_STEM_LENGTH) return word;
  // Digits and the like: nothing to stem ("gpt4", "v2").
  for (let i = 0; i < word.length; i++) {
    const code = word.charCodeAt(i);
    if (code < 97 || code > 122) return word;
  }
  const stem = stemmer(word);
  return stem.length > 2 && stem.endsWith('y') && /[aeiou]/.test(stem.slice(0, -1)) ? `${stem.slice(0, -1)}i` : stem;
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
