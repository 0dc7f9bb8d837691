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
 * garbage. A chunk whose texts are all removed is let go at once: a cache that
 * drops its oldest text for each new one (the profile cache of a directory
 * larger than it) empties its oldest chunks one by one and never needs more.
 * Garbage spread over live chunks is copied away when it outweighs the live
 * texts (and is over a floor): the live bytes go into fresh chunks.
 * Iteration order (`oldestKey`) is insertion order.
 */
export class TextArena {
  /** Where each text is: chunk index, offset and byte length packed in one number (see `pack`). */
  private readonly locations = new Map<string, number>();
  /** By index; a chunk let go is RELEASED until its index is used again (indices stay below MAX_CHUNKS). */
  private chunks: Buffer[] = [];
  /** Per chunk: bytes of its live texts, and bytes written to it (live and garbage). */
  private chunkLive: number[] = [];
  private chunkWritten: number[] = [];
  /** Indices of released chunks, for the next new chunk. */
  private freeChunks: number[] = [];
  /** The chunk texts are appended to (-1: none yet), and how much of it is written. */
  private current = -1;
  private chunkUsed = 0;
  private liveBytes = 0;
  private garbageBytes = 0;
  /**
   * Keys in the order they were set, each with the location it got then. Map iteration cannot give the oldest key
   * cheaply: V8 keeps a removed entry's hole at the front of the table until it rehashes, so with the oldest removed
   * for each new one, `keys().next()` stepped over tens of thousands of holes (~50 µs a profile-cache miss at
   * 1,000,000 agents). An entry whose key was since removed or set again is stale; oldestKey drops it. (A key set
   * again at the very place it had, in a chunk index used again, would pass for its older entry: it would only go early.)
   */
  private orderKeys: (string | undefined)[] = [];
  private orderLocations: number[] = [];
  private orderHead = 0;
  /** Counts removals and clears (and so compactions): a location noted before the count moved may be stale. */
  private removals = 0;
  /**
   * Per handle (see visitBytesAt), in pages of NOTE_PAGE handles made on first use, at 3 × (handle mod NOTE_PAGE):
   * its key's location, the removal count then, and the tag it was noted under. NaN until noted (equal to nothing).
   * Pages, not one array grown by doubling: at 1,000,000 agents that array reached 24 MB, and filling and copying it
   * on each growth took ~140 ms of the first searches' time, in stalls of tens of ms.
   */
  private handlePages: (Float64Array | undefined)[] = [];

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
    return (this.chunks.length - this.freeChunks.length) * this.chunkBytes;
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
   * As visitBytes, with `handle` a small integer the caller pairs with `key` under `tag` (search: the agent's slot
   * in the index, under the index's slot numbering). The key's location is noted under the handle, so the next
   * visit under the same handle and tag, with nothing removed meanwhile, skips the Map: a lookup among 100,000 keys
   * was most of the cost of a search page's profiles. The key itself is not read then (its string is a cache miss
   * a hit, ~3 µs of a 20-hit page at 100,000 agents): the caller promises that under one tag a handle always
   * stands for the same key, and uses a new tag when that may change. Any removal, compaction or clear since, or
   * another tag, goes through the Map again. Handles index an array: keep them dense, from 0.
   */
  visitBytesAt(handle: number, tag: number, key: string, visit: (chunk: Buffer, start: number, end: number) => void): boolean {
    const page = handle >>> NOTE_PAGE_BITS;
    const at = 3 * (handle & (NOTE_PAGE - 1));
    let notes = this.handlePages[page];
    let location: number;
    if (notes !== undefined && notes[at + 2] === tag && notes[at + 1] === this.removals) location = notes[at]!;
    else {
      const found = this.locations.get(key);
      if (found === undefined) return false;
      location = found;
      notes ??= this.handlePages[page] = new Float64Array(3 * NOTE_PAGE).fill(NaN);
      notes[at] = location;
      notes[at + 1] = this.removals;
      notes[at + 2] = tag;
    }
    this.visitLocation(location, visit);
    return true;
  }

  set(key: string, text: string): void {
    this.delete(key);
    const length = Buffer.byteLength(text);
    if (length > this.chunkBytes || length > MAX_LENGTH) throw new RangeError(`a text of ${length} bytes does not fit a chunk`);
    this.makeRoom(length);
    this.chunks[this.current]!.write(text, this.chunkUsed, 'utf8');
    this.remember(key, this.appended(length));
  }

  delete(key: string): boolean {
    const location = this.locations.get(key);
    if (location === undefined) return false;
    this.locations.delete(key);
    // Counted before a compaction, which only a removal starts: it moves every text.
    this.removals++;
    const { chunk, length } = unpack(location);
    this.liveBytes -= length;
    this.garbageBytes += length;
    this.chunkLive[chunk]! -= length;
    if (this.chunkLive[chunk] === 0 && chunk !== this.current) this.release(chunk);
    else if (this.garbageBytes > Math.max(this.liveBytes, this.garbageFloorBytes)) this.compact();
    return true;
  }

  clear(): void {
    this.removals++;
    this.locations.clear();
    this.resetChunks();
  }

  /** The key stored longest ago (first in insertion order), if any. */
  oldestKey(): string | undefined {
    const keys = this.orderKeys;
    while (this.orderHead < keys.length) {
      const key = keys[this.orderHead]!;
      if (this.locations.get(key) === this.orderLocations[this.orderHead]) return key;
      keys[this.orderHead++] = undefined;
    }
    return undefined;
  }

  /** Hands `visit` the chunk and byte range a packed location names (no view, no object: see visitBytes). */
  private visitLocation(location: number, visit: (chunk: Buffer, start: number, end: number) => void): void {
    const high = Math.floor(location / OFFSET_BITS);
    const length = location - high * OFFSET_BITS;
    const chunk = Math.floor(high / OFFSET_BITS);
    const offset = high - chunk * OFFSET_BITS;
    visit(this.chunks[chunk]!, offset, offset + length);
  }

  /** Makes the current chunk one with room for `length` more bytes. */
  private makeRoom(length: number): void {
    if (this.current >= 0 && this.chunkUsed + length <= this.chunkBytes) return;
    // The chunk being left may already have had every text removed: it was kept only while current.
    if (this.current >= 0 && this.chunkLive[this.current] === 0) this.release(this.current);
    const index = this.freeChunks.pop() ?? this.chunks.length;
    if (index >= MAX_CHUNKS) throw new RangeError(`the arena is full (${MAX_CHUNKS} chunks)`);
    this.chunks[index] = Buffer.allocUnsafeSlow(this.chunkBytes);
    this.chunkLive[index] = 0;
    this.chunkWritten[index] = 0;
    this.current = index;
    this.chunkUsed = 0;
  }

  /** Counts `length` bytes just written at the current chunk's end as a live text; returns its location. */
  private appended(length: number): number {
    const location = pack(this.current, this.chunkUsed, length);
    this.chunkUsed += length;
    this.liveBytes += length;
    this.chunkLive[this.current]! += length;
    this.chunkWritten[this.current]! += length;
    return location;
  }

  private remember(key: string, location: number): void {
    this.locations.set(key, location);
    // Entries passed by oldestKey and stale ones are dropped in one pass once they are half of the order: O(1) amortized.
    if (this.orderKeys.length > 2 * this.locations.size + 1024) this.dropStaleOrder();
    this.orderKeys.push(key);
    this.orderLocations.push(location);
  }

  private dropStaleOrder(): void {
    const keys: (string | undefined)[] = [];
    const locations: number[] = [];
    for (let i = this.orderHead; i < this.orderKeys.length; i++) {
      const key = this.orderKeys[i]!;
      if (key !== undefined && this.locations.get(key) === this.orderLocations[i]) {
        keys.push(key);
        locations.push(this.orderLocations[i]!);
      }
    }
    this.orderKeys = keys;
    this.orderLocations = locations;
    this.orderHead = 0;
  }

  /** Lets a chunk whose texts are all removed go; its index serves the next new chunk. */
  private release(chunk: number): void {
    this.garbageBytes -= this.chunkWritten[chunk]!;
    this.chunks[chunk] = RELEASED;
    this.chunkWritten[chunk] = 0;
    this.freeChunks.push(chunk);
    if (chunk === this.current) this.current = -1;
  }

  private resetChunks(): void {
    this.chunks = [];
    this.chunkLive = [];
    this.chunkWritten = [];
    this.freeChunks = [];
    this.current = -1;
    this.chunkUsed = 0;
    this.liveBytes = 0;
    this.garbageBytes = 0;
    this.orderKeys = [];
    this.orderLocations = [];
    this.orderHead = 0;
  }

  /** Copies the live texts' bytes, oldest first, into fresh chunks (no string is made). */
  private compact(): void {
    const old = this.chunks;
    const entries = [...this.locations];
    this.resetChunks();
    for (const [key, location] of entries) {
      const { chunk, offset, length } = unpack(location);
      this.makeRoom(length);
      old[chunk]!.copy(this.chunks[this.current]!, this.chunkUsed, offset, offset + length);
      this.remember(key, this.appended(length));
    }
  }
}

/** The placeholder of a chunk let go. */
const RELEASED = Buffer.alloc(0);

// Offsets and lengths below 2^22 (4 MiB) and up to 2^9 chunks: 53 bits, exact in a double.
const OFFSET_BITS = 2 ** 22;
const MAX_OFFSET = OFFSET_BITS;
const MAX_LENGTH = OFFSET_BITS - 1;
const MAX_CHUNKS = 2 ** 9;
/** Handles noted per page (see handlePages): 96 KB a page. */
const NOTE_PAGE_BITS = 12;
const NOTE_PAGE = 1 << NOTE_PAGE_BITS;

function pack(chunk: number, offset: number, length: number): number {
  return (chunk * OFFSET_BITS + offset) * OFFSET_BITS + length;
}

// Math.floor rather than %: a remainder of numbers past 2^31 is a call into the runtime (fmod), floor is one instruction.
function unpack(location: number): { chunk: number; offset: number; length: number } {
  const high = Math.floor(location / OFFSET_BITS);
  const chunk = Math.floor(high / OFFSET_BITS);
  return { chunk, offset: high - chunk * OFFSET_BITS, length: location - high * OFFSET_BITS };
}
