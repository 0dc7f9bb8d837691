import { describe, expect, it } from 'vitest';
import { TextArena } from '../../src-api/lib/text-arena';

describe('TextArena', () => {
  it('stores, replaces and removes texts, multi-byte ones included', () => {
    const arena = new TextArena(64, 1024);
    arena.set('a', '{"name":"Ünïcode ✓ 🤖"}');
    arena.set('b', 'plain');
    expect(arena.get('a')).toBe('{"name":"Ünïcode ✓ 🤖"}');
    expect(arena.get('b')).toBe('plain');
    arena.set('a', 'replaced');
    expect(arena.get('a')).toBe('replaced');
    expect(arena.size).toBe(2);
    expect(arena.delete('b')).toBe(true);
    expect(arena.delete('b')).toBe(false);
    expect(arena.get('b')).toBeUndefined();
    expect(arena.has('a')).toBe(true);
    arena.clear();
    expect(arena.size).toBe(0);
    expect(arena.get('a')).toBeUndefined();
  });

  it('spans chunks, keeps insertion order, and compacts garbage without losing a live text', () => {
    const arena = new TextArena(100, 50);
    const expected = new Map<string, string>();
    for (let i = 0; i < 500; i++) {
      const text = `text ${i} ${'é'.repeat(i % 20)}`;
      arena.set(`k${i}`, text);
      expected.set(`k${i}`, text);
      if (i % 3 === 0) {
        arena.delete(`k${i - 1}`);
        expected.delete(`k${i - 1}`);
      }
    }
    for (const [key, text] of expected) expect(arena.get(key)).toBe(text);
    // visitBytes hands out the same bytes as getBytes, as a range of the chunk instead of a view.
    for (const key of expected.keys()) {
      let visited = '';
      expect(arena.visitBytes(key, (chunk, start, end) => (visited = chunk.toString('utf8', start, end)))).toBe(true);
      expect(visited).toBe(arena.getBytes(key)!.toString('utf8'));
    }
    expect(arena.visitBytes('k-missing', () => expect.unreachable())).toBe(false);
    expect(arena.size).toBe(expected.size);
    expect(arena.oldestKey()).toBe(expected.keys().next().value);
    // Compaction let the dead chunks go: what is allocated stays within a small multiple of what is live.
    const liveBytes = [...expected.values()].reduce((sum, text) => sum + Buffer.byteLength(text), 0);
    expect(arena.allocatedBytes).toBeLessThan(3 * liveBytes + 200);
  });

  it('as a cache dropping its oldest text for each new one: oldest key in order, emptied chunks let go, live texts never moved', () => {
    // No garbage floor: before chunks were let go, garbage past the live bytes meant a compaction (every text copied).
    const arena = new TextArena(1_000, 0);
    const reference = new Map<string, string>();
    const capacity = 50;
    let kept: { key: string; bytes: Buffer } | undefined;
    for (let i = 0; i < 20_000; i++) {
      if (arena.size >= capacity) {
        const oldest = arena.oldestKey()!;
        expect(oldest).toBe(reference.keys().next().value);
        arena.delete(oldest);
        reference.delete(oldest);
      }
      // Now and then a text changes (a profile invalidated and read again): set anew, it becomes the newest.
      if (i % 7 === 0 && reference.size > 10) {
        const changed = [...reference.keys()][5]!;
        arena.set(changed, `changed ${i}`);
        reference.delete(changed);
        reference.set(changed, `changed ${i}`);
      }
      const text = `profile ${i} ${'x'.repeat(i % 90)}`;
      arena.set(`k${i}`, text);
      reference.set(`k${i}`, text);
      if (i === 19_970) kept = { key: `k${i}`, bytes: arena.getBytes(`k${i}`)! };
    }
    for (const [key, text] of reference) expect(arena.get(key)).toBe(text);
    expect(arena.oldestKey()).toBe(reference.keys().next().value);
    // Still where it was written: no compaction copied the live texts.
    const now = arena.getBytes(kept!.key)!;
    expect(now.buffer).toBe(kept!.bytes.buffer);
    expect(now.byteOffset).toBe(kept!.bytes.byteOffset);
    // 20,000 texts of ~60 bytes went through ~1,200 chunks' worth of space (over the 512-chunk limit of indices):
    // emptied chunks were let go and their indices used again, and a few chunks hold the live texts.
    const liveBytes = [...reference.values()].reduce((sum, text) => sum + Buffer.byteLength(text), 0);
    expect(arena.allocatedBytes).toBeLessThanOrEqual(liveBytes + 3 * 1_000);
  });

  it('visitBytesAt: a handle notes its key’s place under a tag, and never hands out a replaced, removed or moved text, or another tag’s', () => {
    const arena = new TextArena(100, 50);
    const at = (handle: number, tag: number, key: string): string | undefined => {
      let visited: string | undefined;
      const found = arena.visitBytesAt(handle, tag, key, (chunk, start, end) => (visited = chunk.toString('utf8', start, end)));
      expect(found).toBe(visited !== undefined);
      return visited;
    };
    arena.set('a', 'first a');
    arena.set('b', 'first b');
    // A far handle first (its page of notes made): the handles below it, on its page or not, are not noted (NaN),
    // even under tag 0.
    expect(at(5000, 1, 'a')).toBe('first a');
    expect(at(5000, 1, 'a')).toBe('first a');
    expect(at(4999, 0, 'b')).toBe('first b');
    expect(at(0, 0, 'b')).toBe('first b');
    expect(at(1, 1, 'b')).toBe('first b');
    // The same handle with another key under another tag (the caller's slots were renumbered): that key's text.
    expect(at(5000, 2, 'b')).toBe('first b');
    expect(at(5000, 2, 'b')).toBe('first b');
    expect(at(5000, 3, 'a')).toBe('first a');
    // Replaced (a removal, then an append elsewhere): the new text, not the noted place.
    arena.set('a', 'second a');
    expect(at(5000, 3, 'a')).toBe('second a');
    // Removed: none.
    arena.delete('b');
    expect(at(1, 1, 'b')).toBeUndefined();
    // Moved by a compaction (garbage over the floor): still the right text under a handle noted before it.
    expect(at(7, 1, 'a')).toBe('second a');
    for (let i = 0; i < 40; i++) arena.set('churn', `churn text ${i}`);
    expect(arena.allocatedBytes).toBeLessThanOrEqual(200);
    expect(at(7, 1, 'a')).toBe('second a');
    expect(at(8, 1, 'churn')).toBe('churn text 39');
    arena.clear();
    expect(at(7, 1, 'a')).toBeUndefined();
    arena.set('a', 'third a');
    expect(at(7, 1, 'a')).toBe('third a');
  });

  it('refuses a text larger than a chunk', () => {
    expect(() => new TextArena(16).set('big', 'x'.repeat(17))).toThrow(RangeError);
  });
});
