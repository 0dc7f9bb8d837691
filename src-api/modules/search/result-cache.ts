/**
 * Answers to repeated searches, valid for one value of the change cursor:
 * `get` and `set` take the cursor the index has caught up to, and a different
 * cursor empties the cache first, so an answer computed before a write is
 * never served after it. Least recently used entries go first past `capacity`.
 */
export class ResultCache<T> {
  private readonly entries = new Map<string, T>();
  private seq = -1;

  constructor(private readonly capacity: number) {}

  get(key: string, seq: number): T | undefined {
    this.sync(seq);
    const value = this.entries.get(key);
    if (value !== undefined) {
      // Most recently used last.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, seq: number, value: T): void {
    this.sync(seq);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }

  private sync(seq: number): void {
    if (seq === this.seq) return;
    this.entries.clear();
    this.seq = seq;
  }
}
