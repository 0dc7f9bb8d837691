import { stemMayChange } from './analyzer';
import { grownInt32 } from './bitsets';
import { NO_SUFFIX } from './text';
import { TypoIndex, type BestMatches, type EditAllowance, type FuzzyMatch } from './typo-index';

/** New terms wait in an unsorted list (scanned linearly by prefix lookups) until there are this many. */
const PENDING_MERGE_THRESHOLD = 1024;
/** Never look at more than this many vocabulary terms for one prefix. */
export const PREFIX_SCAN_LIMIT = 20_000;

/**
 * Every distinct term of the index, with two lookups besides the exact one:
 *
 * - prefixes, by binary search over the terms in sorted order;
 * - near misses (typos), by the trigram index of typo-index.ts.
 *
 * Terms are never removed: a term whose agents are all gone has no postings
 * and is skipped by the index.
 */
export class Vocabulary {
  private readonly terms: string[] = [];
  /**
   * term → id, open addressing over (id + 1), 0 = empty. Our own table rather
   * than a Map so that indexing can look a word up as a slice of its text,
   * without allocating a string for each of the millions of words it reads.
   */
  private table = new Int32Array(1 << 12);
  private termHashes = new Int32Array(1024);

  private sorted: string[] = [];
  private sortedIds: number[] = [];
  /** Per sorted term, 1 when stemming may change it (analyzer's stemMayChange): read in order by stem scans. */
  private sortedStemmable = new Uint8Array(0);
  private pending: number[] = [];

  private readonly typos = new TypoIndex(this);

  get size(): number {
    return this.terms.length;
  }

  term(termId: number): string {
    return this.terms[termId]!;
  }

  idOf(term: string): number | undefined {
    const termId = this.find(term, 0, term.length, NO_SUFFIX, hashSlice(term, 0, term.length, NO_SUFFIX));
    return termId < 0 ? undefined : termId;
  }

  /** The id of `term`, adding it when new. */
  intern(term: string): number {
    return this.internSlice(term, 0, term.length, NO_SUFFIX);
  }

  /** The id of the term source[start, end) + suffix character (if not -1), adding it when new. */
  internSlice(source: string, start: number, end: number, suffix: number): number {
    const hash = hashSlice(source, start, end, suffix);
    const known = this.find(source, start, end, suffix, hash);
    if (known >= 0) return known;
    const term = source.slice(start, end) + (suffix === NO_SUFFIX ? '' : String.fromCharCode(suffix));
    const termId = this.terms.length;
    this.terms.push(term);
    if (termId >= this.termHashes.length) this.termHashes = grownInt32(this.termHashes, termId + 1);
    this.termHashes[termId] = hash;
    if ((termId + 1) * 2 > this.table.length) this.rehash(this.table.length * 2);
    this.place(termId);
    this.typos.add(termId, term);
    this.pending.push(termId);
    return termId;
  }

  /** Calls `visit` for every term that starts with `prefix` (itself included), in no particular order. */
  forEachWithPrefix(prefix: string, visit: (termId: number) => void): void {
    const [first, end] = this.prefixRun(prefix);
    const ids = this.sortedIds;
    for (let index = first; index < end; index++) visit(ids[index]!);
    for (const termId of this.pending) if (this.terms[termId]!.startsWith(prefix)) visit(termId);
  }

  /**
   * Calls `visit` for the terms that start with `prefix` and that stemming may change, and for the term `also` if it
   * starts with it, in the order of forEachWithPrefix (which visits the others too). A stem scan wants the terms
   * whose stem is a given stem: such a term is either the stem itself or one stemming changes. The others are
   * passed over without reading them (at 1,000,000 agents a four-letter prefix's thousands of terms, each a cache
   * miss for its string).
   */
  forEachStemmableWithPrefix(prefix: string, also: number | undefined, visit: (termId: number) => void): void {
    const [first, end] = this.prefixRun(prefix);
    const ids = this.sortedIds;
    const stemmable = this.sortedStemmable;
    for (let index = first; index < end; index++) if (stemmable[index] !== 0 || ids[index] === also) visit(ids[index]!);
    for (const termId of this.pending) {
      const term = this.terms[termId]!;
      if (term.startsWith(prefix) && (termId === also || stemMayChange(term))) visit(termId);
    }
  }

  /** Where the sorted terms with `prefix` start and end, at most PREFIX_SCAN_LIMIT of them (the pending ones merged first when many). */
  private prefixRun(prefix: string): [first: number, end: number] {
    // Merged on demand, so a bulk load does not merge over and over.
    if (this.pending.length >= PENDING_MERGE_THRESHOLD) this.mergePending();
    // The terms with the prefix are one run of the sorted array: its two ends are found by binary search, so the
    // visit loops compare no strings (at 1,000,000 agents a four-letter prefix has thousands of terms).
    const sorted = this.sorted;
    const first = firstFailing(0, sorted.length, (index) => sorted[index]! < prefix);
    return [first, firstFailing(first, Math.min(sorted.length, first + PREFIX_SCAN_LIMIT), (index) => sorted[index]!.startsWith(prefix))];
  }

  /** Terms within the allowed number of edits of `term`, the term itself excluded (see TypoIndex). */
  fuzzyMatches(term: string, allowance: EditAllowance, best?: BestMatches): FuzzyMatch[] {
    return this.typos.fuzzyMatches(term, allowance, best);
  }

  /** Gram-list entries that typo lookups read or looked up, in all (for tests and benches). */
  get entriesRead(): number {
    return this.typos.entriesRead;
  }

  /** Folds the new terms into the sorted array (a linear merge). */
  mergePending(): void {
    if (this.pending.length === 0) return;
    const added = this.pending
      .map((termId) => ({ termId, term: this.terms[termId]! }))
      .sort((a, b) => (a.term < b.term ? -1 : a.term > b.term ? 1 : 0));
    const sorted: string[] = new Array(this.sorted.length + added.length);
    const sortedIds: number[] = new Array(sorted.length);
    const sortedStemmable = new Uint8Array(sorted.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < this.sorted.length || j < added.length) {
      if (j >= added.length || (i < this.sorted.length && this.sorted[i]! < added[j]!.term)) {
        sorted[k] = this.sorted[i]!;
        sortedStemmable[k] = this.sortedStemmable[i]!;
        sortedIds[k++] = this.sortedIds[i++]!;
      } else {
        sorted[k] = added[j]!.term;
        sortedStemmable[k] = stemMayChange(added[j]!.term) ? 1 : 0;
        sortedIds[k++] = added[j++]!.termId;
      }
    }
    this.sorted = sorted;
    this.sortedIds = sortedIds;
    this.sortedStemmable = sortedStemmable;
    this.pending = [];
  }

  private find(source: string, start: number, end: number, suffix: number, hash: number): number {
    const mask = this.table.length - 1;
    const length = end - start + (suffix === NO_SUFFIX ? 0 : 1);
    for (let probe = hash & mask; ; probe = (probe + 1) & mask) {
      const entry = this.table[probe]!;
      if (entry === 0) return -1;
      const termId = entry - 1;
      if (this.termHashes[termId] !== hash) continue;
      const term = this.terms[termId]!;
      if (term.length !== length) continue;
      let same = true;
      for (let i = start; i < end; i++) {
        if (term.charCodeAt(i - start) !== source.charCodeAt(i)) {
          same = false;
          break;
        }
      }
      if (same && (suffix === NO_SUFFIX || term.charCodeAt(length - 1) === suffix)) return termId;
    }
  }

  private place(termId: number): void {
    const mask = this.table.length - 1;
    let probe = this.termHashes[termId]! & mask;
    while (this.table[probe] !== 0) probe = (probe + 1) & mask;
    this.table[probe] = termId + 1;
  }

  private rehash(size: number): void {
    this.table = new Int32Array(size);
    for (let termId = 0; termId < this.terms.length; termId++) this.place(termId);
  }
}

/** FNV-1a over the slice and suffix, then a final avalanche so that linear probing spreads. */
function hashSlice(source: string, start: number, end: number, suffix: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ source.charCodeAt(i), 0x01000193);
  if (suffix !== NO_SUFFIX) hash = Math.imul(hash ^ suffix, 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash | 0;
}

/** The first index in [from, to) for which `holds` is false (to if none), where it holds for a prefix of the range: a binary search. */
function firstFailing(from: number, to: number, holds: (index: number) => boolean): number {
  let low = from;
  let high = to;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (holds(mid)) low = mid + 1;
    else high = mid;
  }
  return low;
}
