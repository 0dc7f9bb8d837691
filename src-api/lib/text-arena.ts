/**
 * Many short texts, stored as UTF-8 in large Buffers outside the JavaScript
 * heap, each under a key.
 *
 * Why not a Map of strings: 100,000 profiles of ~0.85 KB are ~85 MB of live
 * heap, and V8 lets the old generation grow in proportion to what is live
 * before it collects. Under load that doubled the server's resident memory
 * with garbage. Kept here they cost their bytes and one number per key.
 *
 * Texts are appended to the current chunk and never written over, so a
 * Buffer view handed out stays valid. Removing a text leaves its bytes as
 * garbage; when garbage outweighs the live texts (and is over a floor), the
 * live texts are copied into fresh chunks and the old ones are let go.
 * Iteration order (`oldestKey`) is insertion order.
 */
export class TextArena {
  /** Where each text is: chunk index, offset and byte length packed in one number (see `pack`). */
  private readonly locations = new Map<string, number>();
  private chunks: Buffer[] = [];
  private chunkUsed = 0;
  private liveBytes = 0;
  private garbageBytes = 0;
  /** Counts removals and clears (and so compactions): a location noted before the count moved may be stale. */
  private removals = 0;
  /** Per handle (see visitBytesAt): the key last visited under it. */
  private readonly handleKeys: (string | undefined)[] = [];
  /** Per handle: its key's location and the removal count then, at 2 × handle and 2 × handle + 1. */
  private handleLocations = new Float64Array(0);

  constructor(
    private readonly chunkBytes = 4 << 20,
    private readonly garbageFloorBytes = 16 << 20,
  ) {
    if (chunkBytes > MAX_OFFSET) throw new RangeError(`chunkBytes must be at most ${MAX_OFFSET}`);
  }

  get size(): number {
    return this.locations.size;
  }

  /** Bytes held in chunks (live texts, garbage and free space). */
  get allocatedBytes(): number {
    return this.chunks.length * this.chunkBytes;
  }

  has(key: string): boolean {
    return this.locations.has(key);
  }

  get(key: string): string | undefined {
    return this.getBytes(key)?.toString('utf8');
  }

  /** The text's UTF-8 bytes, as a view of its chunk (no copy; stays valid, chunks are never written over). */
  getBytes(key: string): Buffer | undefined {
    const location = this.locations.get(key);
    if (location === undefined) return undefined;
    const { chunk, offset, length } = unpack(location);
    return this.chunks[chunk]!.subarray(offset, offset + length);
  }

  /**
   * Calls `visit` with the chunk holding the text of `key` and the text's byte range in it, without making a view
   * (a search answer copies ~20 texts straight into its own Buffer; a view each was a tenth of a cheap search).
   * The range stays valid as long as the chunk is held. False when there is no such text.
   */
  visitBytes(key: string, visit: (chunk: Buffer, start: number, end: number) => void): boolean {
    const location = this.locations.get(key);
    if (location === undefined) return false;
    this.visitLocation(location, visit);
    return true;
  }

  /**
   * As visitBytes, with `handle` a small integer the caller pairs with `key` (search: the agent's slot in the
   * index). The key's location is noted under the handle, so the next visit of the same key under the same
   * handle, with nothing removed meanwhile, skips the Map: a lookup among 100,000 keys was most of the cost of a
   * search page's profiles. A handle is only a hint: a different key under it, or any removal, compaction or
   * clear since, goes through the Map again. Handles index arrays: keep them dense, from 0.
   */
  visitBytesAt(handle: number, key: string, visit: (chunk: Buffer, start: number, end: number) => void): boolean {
    const noted = this.handleLocations;
    let location: number;
    if (this.handleKeys[handle] === key && noted[2 * handle + 1] === this.removals) location = noted[2 * handle]!;
    else {
      const found = this.locations.get(key);
      if (found === undefined) return false;
      location = found;
      this.note(handle, key, location);
    }
    this.visitLocation(location, visit);
    return true;
  }

  set(key: string, text: string): void {
    this.delete(key);
    this.locations.set(key, this.append(text));
  }

  delete(key: string): boolean {
    const location = this.locations.get(key);
    if (location === undefined) return false;
    this.locations.delete(key);
    // Counted before a compaction, which only a removal starts: it moves every text.
    this.removals++;
    const { length } = unpack(location);
    this.liveBytes -= length;
    this.garbageBytes += length;
    if (this.garbageBytes > Math.max(this.liveBytes, this.garbageFloorBytes)) this.compact();
    return true;
  }

  clear(): void {
    this.removals++;
    this.locations.clear();
    this.chunks = [];
    this.chunkUsed = 0;
    this.liveBytes = 0;
    this.garbageBytes = 0;
  }

  /** The key stored longest ago (first in insertion order), if any. */
  oldestKey(): string | undefined {
    return this.locations.keys().next().value;
  }

  /** Hands `visit` the chunk and byte range a packed location names (no view, no object: see visitBytes). */
  private visitLocation(location: number, visit: (chunk: Buffer, start: number, end: number) => void): void {
    const high = Math.floor(location / OFFSET_BITS);
    const length = location - high * OFFSET_BITS;
    const chunk = Math.floor(high / OFFSET_BITS);
    const offset = high - chunk * OFFSET_BITS;
    visit(this.chunks[chunk]!, offset, offset + length);
  }

  private note(handle: number, key: string, location: number): void {
    const keys = this.handleKeys;
    if (handle >= keys.length) {
      // Pushed, not assigned past the end: a far index would turn the array sparse (a dictionary).
      while (keys.length <= handle) keys.push(undefined);
      if (2 * keys.length > this.handleLocations.length) {
        const grown = new Float64Array(Math.max(2 * keys.length, 2 * this.handleLocations.length));
        grown.set(this.handleLocations);
        this.handleLocations = grown;
      }
    }
    keys[handle] = key;
    this.handleLocations[2 * handle] = location;
    this.handleLocations[2 * handle + 1] = this.removals;
  }

  private append(text: string): number {
    const length = Buffer.byteLength(text);
    if (length > this.chunkBytes || length > MAX_LENGTH) throw new RangeError(`a text of ${length} bytes does not fit a chunk`);
    if (this.chunks.length === 0 || this.chunkUsed + length > this.chunkBytes) {
      if (this.chunks.length >= MAX_CHUNKS) throw new RangeError(`the arena is full (${MAX_CHUNKS} chunks)`);
      this.chunks.push(Buffer.allocUnsafeSlow(this.chunkBytes));
      this.chunkUsed = 0;
    }
    const chunk = this.chunks.length - 1;
    const offset = this.chunkUsed;
    this.chunks[chunk]!.write(text, offset, 'utf8');
    this.chunkUsed += length;
    this.liveBytes += length;
    return pack(chunk, offset, length);
  }

  /** Copies the live texts, in their order, into fresh chunks. */
  private compact(): void {
    const old = this.chunks;
    const entries = [...this.locations];
    this.chunks = [];
    this.chunkUsed = 0;
    this.liveBytes = 0;
    this.garbageBytes = 0;
    for (const [key, location] of entries) {
      const { chunk, offset, length } = unpack(location);
      this.locations.set(key, this.append(old[chunk]!.toString('utf8', offset, offset + length)));
    }
  }
}

// Offsets and lengths below 2^22 (4 MiB) and up to 2^9 chunks: 53 bits, exact in a double.
const OFFSET_BITS = 2 ** 22;
const MAX_OFFSET = OFFSET_BITS;
const MAX_LENGTH = OFFSET_BITS - 1;
const MAX_CHUNKS = 2 ** 9;

function pack(chunk: number, offset: number, length: number): number {
  return (chunk * OFFSET_BITS + offset) * OFFSET_BITS + length;
}

// Math.floor rather than %: a remainder of numbers past 2^31 is a call into the runtime (fmod), floor is one instruction.
function unpack(location: number): { chunk: number; offset: number; length: number } {
  const high = Math.floor(location / OFFSET_BITS);
  const chunk = Math.floor(high / OFFSET_BITS);
  return { chunk, offset: high - chunk * OFFSET_BITS, length: location - high * OFFSET_BITS };
}
