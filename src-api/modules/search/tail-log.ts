const CHUNK_BITS = 16;
const CHUNK_SIZE = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK_SIZE - 1;

/**
 * Postings added since the index's last compaction: an append-only log in
 * fixed-size typed chunks, with one linked list per term (newest first).
 * Indexing 100,000 agents appends millions of entries; in chunks that makes
 * no garbage and gives the GC nothing to trace, where per-term JS arrays
 * would be copied as they grow.
 *
 * An entry is referred to by its position + 1, so that 0 can mean "none" in
 * zero-filled arrays.
 */
export class TailLog {
  private readonly slotChunks: Int32Array[] = [];
  private readonly frequencyChunks: Uint16Array[] = [];
  private readonly previousChunks: Int32Array[] = [];
  /** Per term: its newest entry, 0 = none. */
  private heads = new Int32Array(1024);
  /** Per term: how many entries it has. */
  private counts = new Int32Array(1024);
  private entries = 0;

  get length(): number {
    return this.entries;
  }

  /** Records that `slot` has term `termId`, with packed per-field `frequencies`. */
  append(termId: number, slot: number, frequencies: number): void {
    if (termId >= this.heads.length) {
      const capacity = Math.max(termId + 1, this.heads.length * 2);
      const heads = new Int32Array(capacity);
      heads.set(this.heads);
      this.heads = heads;
      const counts = new Int32Array(capacity);
      counts.set(this.counts);
      this.counts = counts;
    }
    const position = this.entries++;
    const chunk = position >>> CHUNK_BITS;
    if (chunk === this.slotChunks.length) {
      this.slotChunks.push(new Int32Array(CHUNK_SIZE));
      this.frequencyChunks.push(new Uint16Array(CHUNK_SIZE));
      this.previousChunks.push(new Int32Array(CHUNK_SIZE));
    }
    const offset = position & CHUNK_MASK;
    this.slotChunks[chunk]![offset] = slot;
    this.frequencyChunks[chunk]![offset] = frequencies;
    this.previousChunks[chunk]![offset] = this.heads[termId]!;
    this.heads[termId] = position + 1;
    this.counts[termId]!++;
  }

  /** The newest entry of `termId`, 0 when it has none. */
  head(termId: number): number {
    return termId < this.heads.length ? this.heads[termId]! : 0;
  }

  count(termId: number): number {
    return termId < this.counts.length ? this.counts[termId]! : 0;
  }

  /** The entry before `entry` of the same term, 0 at the end. */
  previous(entry: number): number {
    return this.previousChunks[(entry - 1) >>> CHUNK_BITS]![(entry - 1) & CHUNK_MASK]!;
  }

  slot(entry: number): number {
    return this.slotChunks[(entry - 1) >>> CHUNK_BITS]![(entry - 1) & CHUNK_MASK]!;
  }

  frequencies(entry: number): number {
    return this.frequencyChunks[(entry - 1) >>> CHUNK_BITS]![(entry - 1) & CHUNK_MASK]!;
  }

  clear(): void {
    this.slotChunks.length = 0;
    this.frequencyChunks.length = 0;
    this.previousChunks.length = 0;
    this.heads = new Int32Array(this.heads.length);
    this.counts = new Int32Array(this.counts.length);
    this.entries = 0;
  }
}
