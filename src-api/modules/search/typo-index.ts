import { grownInt32, popcount32 } from './bitsets';
import { EditDistancePattern } from './edit-distance';
import { TopMatches, type BestMatches } from './top-matches';

export type { BestMatches } from './top-matches';

/** Vocabulary terms that one query term may stand for, with how far they are from it. */
export interface FuzzyMatch {
  termId: number;
  /** Edits (insertion, deletion, substitution, adjacent swap). */
  distance: number;
  /** Dice coefficient of the two words' trigram sets, 0–1: ranks matches at the same distance. */
  similarity: number;
}

/** How many edits a typo may have, given the lengths of the typed word and the vocabulary word. */
export type EditAllowance = (queryLength: number, termLength: number) => number;

/**
 * Edit distances computed per typo lookup at most, best trigram overlap first:
 * bounds the worst case when a word has thousands of look-alikes.
 */
const MAX_VERIFICATIONS = 2_000;
/**
 * Trigram list entries are (the term's number among the terms of its first letter) × 64 + length (63: look the length up; terms are at most MAX_TOKEN_LENGTH,
 * 40, plus a suffix character), small integers for vocabularies of up to 2^24 terms.
 */
const LENGTH_BITS = 6;
const LENGTH_SLOTS = 1 << LENGTH_BITS;
/**
 * Per term, during a typo lookup: the lookup's stamp (its candidates: older stamps are stale), the first of the
 * query's gram lists that holds the term and in how many it is, 8 bits each: up to 255 lists, so query words up to
 * 250 letters (fuzzyMatches returns before that: the index's words have at most MAX_TOKEN_LENGTH + 1).
 */
const MARK_COUNT = 0xff;
const MARK_FIRST_SHIFT = 8;
const MARK_FIRST = 0xff << MARK_FIRST_SHIFT;
const MARK_STAMP_SHIFT = 16;
/** Stamps stay positive 32-bit integers; after the last one, every mark is cleared. */
const MAX_MARK_STAMP = 2 ** (31 - MARK_STAMP_SHIFT) - 1;
const MARK_STAMP = MAX_MARK_STAMP << MARK_STAMP_SHIFT;
const NO_ENTRIES: readonly number[] = [];
/**
 * A long gram list is read whole, not searched for the candidates, when it has at most this many entries per candidate
 * (a search gallops: a few unpredictable steps per candidate, against one sequential entry read).
 */
export const WHOLE_READ = { perCandidate: 4 };
const RADIX_BITS = 9;
const RADIX = 1 << RADIX_BITS;
/** Padding characters that cannot occur in a term, so grams also mark where a word starts and ends. */
const START = '\u0002\u0002';
const END = '\u0003\u0003';

/** What the typo index needs of the vocabulary: a term's id (it keeps the terms' letters itself, see LetterTerms). */
export interface TermLookup {
  idOf(term: string): number | undefined;
}

/**
 * Near misses (typos) of a word among the vocabulary's terms, by a trigram
 * index over the terms: two words within edit distance k share at least
 * max(|grams(a)|, |grams(b)|) − 4k distinct padded trigrams (one edit, even an
 * adjacent swap, destroys at most four), so only terms reaching that count
 * (and of a length within k) are checked with the exact, bounded edit
 * distance. No query ever walks the whole vocabulary, nor the longest lists of
 * its grams: a term sharing enough grams is also in one of the shorter lists
 * (see fuzzyMatches). The trigram lists are kept per first letter, and typos
 * are only looked for among words with the same first letter (as
 * Elasticsearch's prefix_length 1): people rarely mistype it, and it makes the
 * lists an order of magnitude shorter.
 */
export class TypoIndex {
  private longestTerm = 0;
  /** The terms by first character (code unit): a lookup only reads its own letter's, numbered 0, 1, 2, … in id order. */
  private readonly letters = new Map<number, LetterTerms>();
  private readonly gramPostings = new Map<string, number[]>();
  /**
   * Per term of the letter being looked up (by its number in the letter), its stamp, first list and count in the
   * current typo lookup (see MARK_COUNT): as long as the largest letter's terms.
   */
  private gramMarks = new Int32Array(1024);
  /** The terms a typo lookup met (numbers in their letter), and room to sort them. */
  private candidates: Int32Array = new Int32Array(1024);
  private candidateScratch: Int32Array = new Int32Array(1024);
  private gramStamp = 0;
  /** Gram-list entries that typo lookups read or looked up, in all (for tests and benches). */
  entriesRead = 0;

  constructor(private readonly terms: TermLookup) {}

  /** Indexes a new vocabulary term (ids come in order: 0, 1, 2, …). */
  add(termId: number, term: string): void {
    const first = term.charCodeAt(0);
    let letter = this.letters.get(first);
    if (!letter) this.letters.set(first, (letter = new LetterTerms()));
    const grams = distinctGrams(term);
    const rank = letter.add(termId, term, Math.min(255, grams.length), letterSet(term));
    if (letter.size > this.gramMarks.length) this.gramMarks = grownInt32(this.gramMarks, letter.size);
    if (term.length > this.longestTerm) this.longestTerm = term.length;
    // The term's length rides along in each entry: the length filter of a typo lookup then reads nothing else.
    const entry = rank * LENGTH_SLOTS + Math.min(term.length, LENGTH_SLOTS - 1);
    for (const gram of grams) {
      const key = term[0] + gram;
      const list = this.gramPostings.get(key);
      if (list) list.push(entry);
      else this.gramPostings.set(key, [entry]);
    }
  }

  /**
   * Terms within the allowed number of edits of `term`, the term itself excluded. With `best`, a candidate that could
   * not be among the `best.count` best matches that are `best.usable` (fewest edits, then most similar) is passed
   * over unchecked: those best are all in the answer, with some of the others.
   */
  fuzzyMatches(term: string, allowance: EditAllowance, best?: BestMatches): FuzzyMatch[] {
    const length = term.length;
    let maxDistance = 0;
    for (let other = Math.max(1, length - 2); other <= length + 2; other++) maxDistance = Math.max(maxDistance, allowance(length, other));
    // No term is long enough: nothing would pass the length filter. (So a word of 250 letters or more, whose grams
    // would overflow the marks' 8 bits, stops here: the index's words have at most MAX_TOKEN_LENGTH + 1.)
    if (maxDistance === 0 || length - maxDistance > this.longestTerm) return [];
    // No term starts with its letter: every list below would be empty.
    const letter = this.letters.get(term.charCodeAt(0));
    if (!letter) return [];
    const grams = distinctGrams(term);
    // Every term in these lists starts with the same letter, so shares the gram "␂␂" + that letter: its list (the
    // longest) is not read, and it is counted for each candidate below. A term sharing no other gram never passes
    // (each allowance needs at least 2 shared grams), so nothing is lost.
    const firstGram = `${START}${term[0]}`;
    const lists: (readonly number[])[] = [];
    const order: number[] = [];
    for (const gram of grams) {
      if (gram === firstGram) continue;
      order.push(order.length);
      lists.push(this.gramPostings.get(term[0] + gram) ?? NO_ENTRIES);
    }
    // A term passes with `shared` = its grams in these lists + 1 ≥ max(grams.length, its own) − 4 × allowed, so it is in
    // `needed` of the lists at least; it is then in at least one of all but the needed − 1 longest (pigeonhole). Those
    // are read whole, and the long ones only searched for the terms found there (by galloping: the lists are in term
    // id order, so in the order of the terms' numbers in their letter). At 1,000,000 agents a letter's common grams have 40,000 terms each: reading them was most of the work.
    const needed = Math.max(1, grams.length - 4 * maxDistance - 1);
    if (needed > 1) order.sort((a, b) => lists[a]!.length - lists[b]!.length || a - b);
    const read = order.length - (needed - 1);
    const readInOrder = needed > 1 ? order.slice(0, read).sort((a, b) => a - b) : order;
    const stampBits = this.nextGramStamp() << MARK_STAMP_SHIFT;
    const marks = this.gramMarks;
    const { lengths, gramCounts, letterSets, ids, starts: charStarts, chars } = letter;
    // Read in the query's order, so a term's first list is the first that meets it; the order found is then by first
    // list, then by id, as candidates were always met. Terms are known here by their number in the letter (`rank`):
    // the marks, lengths and letter sets read are the letter's, not spread over every term of the vocabulary
    // (at 1,000,000 agents 40,000 terms of 1,000,000: the marks of a lookup stay in the CPU's cache).
    let reached = this.candidates;
    let found = 0;
    for (const index of readInOrder) {
      const list = lists[index]!;
      this.entriesRead += list.length;
      for (let i = 0; i < list.length; i++) {
        const entry = list[i]!;
        const rank = entry >>> LENGTH_BITS;
        const packed = entry & (LENGTH_SLOTS - 1);
        const difference = (packed === LENGTH_SLOTS - 1 ? lengths[rank]! : packed) - length;
        if (difference > maxDistance || difference < -maxDistance) continue;
        const mark = marks[rank]!;
        if ((mark & MARK_STAMP) !== stampBits) {
          marks[rank] = stampBits | (index << MARK_FIRST_SHIFT) | 1;
          if (found === reached.length) reached = this.growCandidates();
          reached[found++] = rank;
        } else {
          marks[rank] = mark + 1;
        }
      }
    }
    // The long lists, shortest first: each is read whole when that is cheaper than looking its candidates up in it
    // (a look-up gallops through the list: several unpredictable steps against one sequential entry), else searched
    // for them (which needs them in id order: sorted once, on the first search). Either way a term that cannot reach
    // `needed` even with every list after this one is dropped.
    let sorted = false;
    for (let o = read; o < order.length; o++) {
      const index = order[o]!;
      const list = lists[index]!;
      const after = order.length - o - 1;
      let kept = 0;
      if (list.length <= WHOLE_READ.perCandidate * found) {
        this.entriesRead += list.length;
        for (let i = 0; i < list.length; i++) {
          const entry = list[i]!;
          const rank = entry >>> LENGTH_BITS;
          const mark = marks[rank]!;
          // A term this lookup has marked is a candidate (or was one; a dropped one's count no longer matters).
          if ((mark & MARK_STAMP) !== stampBits) continue;
          marks[rank] = seenIn(mark, index);
        }
        for (let f = 0; f < found; f++) {
          const rank = reached[f]!;
          if ((marks[rank]! & MARK_COUNT) + after >= needed) reached[kept++] = rank;
        }
        found = kept;
        continue;
      }
      if (!sorted) {
        sortIds(reached, found, this.scratchFor(found));
        sorted = true;
      }
      let position = 0;
      for (let f = 0; f < found; f++) {
        const rank = reached[f]!;
        let mark = marks[rank]!;
        if ((mark & MARK_COUNT) + after + 1 < needed) continue;
        position = gallop(list, position, rank * LENGTH_SLOTS);
        this.entriesRead++;
        if (position < list.length && list[position]! >>> LENGTH_BITS === rank) marks[rank] = mark = seenIn(mark, index);
        if ((mark & MARK_COUNT) + after >= needed) reached[kept++] = rank;
      }
      found = kept;
    }
    // Whole reads leave the candidates in the order met; the ranking below takes them in id order among equals.
    if (read < order.length && !sorted) sortIds(reached, found, this.scratchFor(found));
    // Candidates passing the count and length filters, most grams in common first, then by their first list and id
    // (the order they were always met in), at most MAX_VERIFICATIONS of them: a stable counting sort by shared grams
    // and first list of the candidates, which are in id order or in the order met.
    const slots = (order.length + 1) * order.length;
    const starts = new Int32Array(slots + 1);
    let passing = 0;
    for (let f = 0; f < found; f++) {
      const rank = reached[f]!;
      const mark = marks[rank]!;
      const shared = Math.min(255, (mark & MARK_COUNT) + 1);
      const allowed = allowance(length, lengths[rank]!);
      if (allowed === 0 || Math.abs(lengths[rank]! - length) > allowed) continue;
      if (shared < Math.max(1, Math.max(grams.length, gramCounts[rank]!) - 4 * allowed)) continue;
      const slot = (order.length + 1 - shared) * order.length + ((mark & MARK_FIRST) >>> MARK_FIRST_SHIFT);
      starts[slot + 1]!++;
      reached[passing++] = rank;
    }
    for (let slot = 0; slot < slots; slot++) starts[slot + 1]! += starts[slot]!;
    const ranked = new Int32Array(passing);
    for (let f = 0; f < passing; f++) {
      const rank = reached[f]!;
      const mark = marks[rank]!;
      const shared = Math.min(255, (mark & MARK_COUNT) + 1);
      const slot = (order.length + 1 - shared) * order.length + ((mark & MARK_FIRST) >>> MARK_FIRST_SHIFT);
      ranked[starts[slot]!++] = rank;
    }
    const matches: FuzzyMatch[] = [];
    const pattern = new EditDistancePattern(term);
    const letters = letterSet(term);
    const self = this.terms.idOf(term) ?? -1;
    const verified = Math.min(passing, MAX_VERIFICATIONS);
    const top = best && best.count > 0 ? new TopMatches(best.count) : undefined;
    for (let r = 0; r < verified; r++) {
      const rank = ranked[r]!;
      const termId = ids[rank]!;
      const shared = Math.min(255, (marks[rank]! & MARK_COUNT) + 1);
      const similarity = (2 * shared) / (grams.length + gramCounts[rank]!);
      // Sharing `shared` grams, a term is at least ⌈(grams − shared) / 4⌉ edits away (one edit destroys at most four):
      // when that and its similarity cannot tie the worst of the best, its edits need not be counted.
      if (top?.full && top.beats(Math.ceil((Math.max(grams.length, gramCounts[rank]!) - shared) / 4), similarity)) continue;
      // Counted as verified either way, so the cap falls where it always did and the matches are the same.
      if (termId === self) continue;
      const allowed = allowance(length, lengths[rank]!);
      // One edit changes at most two letters of the set (a swap none): a larger difference is more than `allowed` edits.
      if (popcount32(letters ^ letterSets[rank]!) > 2 * allowed) continue;
      const distance = pattern.distance(chars, charStarts[rank]!, lengths[rank]!, allowed);
      if (distance <= allowed) {
        matches.push({ termId, distance, similarity });
        if (top && best!.usable(termId)) top.offer(distance, similarity);
      }
    }
    return matches;
  }

  /** How many terms the lookups' marks have room for: as many as the letter with the most terms (for tests). */
  get markSlots(): number {
    return this.gramMarks.length;
  }

  /** Room to sort `count` candidates. */
  private scratchFor(count: number): Int32Array {
    if (this.candidateScratch.length < count) this.candidateScratch = new Int32Array(this.candidates.length);
    return this.candidateScratch;
  }

  /** The candidate buffer, twice as long, with what it held. */
  private growCandidates(): Int32Array {
    this.candidates = grownInt32(this.candidates, this.candidates.length * 2);
    return this.candidates;
  }

  private nextGramStamp(): number {
    if (this.gramStamp >= MAX_MARK_STAMP) {
      this.gramMarks.fill(0);
      this.gramStamp = 0;
    }
    return ++this.gramStamp;
  }
}

/** A candidate's mark once found in the query's gram list `index`: one more list, and the first of them if it comes first. */
function seenIn(mark: number, index: number): number {
  const counted = mark + 1;
  return index < (mark & MARK_FIRST) >>> MARK_FIRST_SHIFT ? (counted & ~MARK_FIRST) | (index << MARK_FIRST_SHIFT) : counted;
}

/** The terms of one first letter, numbered 0, 1, 2, … in id order, with what a typo lookup reads of each. */
class LetterTerms {
  size = 0;
  /** Per number, the term's id. */
  ids = new Int32Array(16);
  lengths = new Uint8Array(16);
  gramCounts = new Uint8Array(16);
  /** Which letters the term has (see `letterSet`): a cheap test that rules out most typo candidates. */
  letterSets = new Int32Array(16);
  /**
   * The terms' code units one after another, each from `starts[number]` (`lengths[number]` long), for the edit
   * distances: a lookup checks up to MAX_VERIFICATIONS look-alikes, and at 1,000,000 agents loading each one's string
   * (spread over the heap) was a cache miss, 40 % of a lookup.
   */
  starts = new Int32Array(16);
  chars = new Uint16Array(256);
  private charsUsed = 0;

  /** Adds a term (ids come in order), returning its number. */
  add(termId: number, term: string, gramCount: number, letters: number): number {
    const rank = this.size++;
    if (rank === this.ids.length) {
      this.ids = grownInt32(this.ids, rank + 1);
      this.letterSets = grownInt32(this.letterSets, rank + 1);
      this.starts = grownInt32(this.starts, rank + 1);
      this.lengths = grownUint8(this.lengths, this.ids.length);
      this.gramCounts = grownUint8(this.gramCounts, this.ids.length);
    }
    if (this.charsUsed + term.length > this.chars.length) {
      const grown = new Uint16Array(Math.max(this.charsUsed + term.length, this.chars.length * 2));
      grown.set(this.chars);
      this.chars = grown;
    }
    for (let i = 0; i < term.length; i++) this.chars[this.charsUsed + i] = term.charCodeAt(i);
    this.ids[rank] = termId;
    this.lengths[rank] = term.length;
    this.gramCounts[rank] = gramCount;
    this.letterSets[rank] = letters;
    this.starts[rank] = this.charsUsed;
    this.charsUsed += term.length;
    return rank;
  }
}

function grownUint8(array: Uint8Array, length: number): Uint8Array<ArrayBuffer> {
  const grown = new Uint8Array(length);
  grown.set(array);
  return grown;
}

/** The distinct trigrams of a term padded with two start and two end marks ("ab" → ␂␂a ␂ab ab␃ b␃␃). */
export function distinctGrams(term: string): string[] {
  const padded = `${START}${term}${END}`;
  const grams = new Set<string>();
  for (let i = 0; i + 3 <= padded.length; i++) grams.add(padded.slice(i, i + 3));
  return [...grams];
}

/**
 * The set of characters in a word as 32 bits, by character code mod 32 (a–z distinct; others may share a bit,
 * which only makes two sets look closer, so the test stays safe).
 */
function letterSet(word: string): number {
  let set = 0;
  for (let i = 0; i < word.length; i++) set |= 1 << (word.charCodeAt(i) & 31);
  return set;
}

/** Sorts ids[0, count) in place (a least-significant-digit radix sort, 9 bits a pass, through `scratch`). */
function sortIds(ids: Int32Array, count: number, scratch: Int32Array): void {
  let highest = 0;
  for (let i = 0; i < count; i++) if (ids[i]! > highest) highest = ids[i]!;
  const counts = new Int32Array(RADIX + 1);
  let from = ids;
  let to = scratch;
  for (let shift = 0; highest >>> shift > 0; shift += RADIX_BITS) {
    counts.fill(0);
    for (let i = 0; i < count; i++) counts[((from[i]! >>> shift) & (RADIX - 1)) + 1]!++;
    for (let digit = 0; digit < RADIX; digit++) counts[digit + 1]! += counts[digit]!;
    for (let i = 0; i < count; i++) to[counts[(from[i]! >>> shift) & (RADIX - 1)]!++] = from[i]!;
    [from, to] = [to, from];
  }
  if (from !== ids) ids.set(from.subarray(0, count));
}

/** The first position from `from` on whose entry is at least `target` (list.length if none): doubling steps, then halving. */
function gallop(list: readonly number[], from: number, target: number): number {
  let low = from;
  let step = 1;
  let high = from;
  while (high < list.length && list[high]! < target) {
    low = high + 1;
    high += step;
    step *= 2;
  }
  if (high > list.length) high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (list[mid]! < target) low = mid + 1;
    else high = mid;
  }
  return low;
}
