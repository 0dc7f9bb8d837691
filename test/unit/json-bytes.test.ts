import { describe, expect, it } from 'vitest';
import { JsonBytes } from '../../src-api/lib/json-bytes';

describe('JsonBytes', () => {
  it('joins literal JSON and ready bytes, multi-byte text included, into one valid document', () => {
    const profiles = [Buffer.from('{"name":"Ünïcode ✓"}'), Buffer.from('{"name":"plain"}')];
    const out = new JsonBytes()
      .raw(`{"query":${JSON.stringify('naïve "quoted"')},"agents":[`)
      .list(profiles, (profile, json) => json.bytes(profile.subarray(0, -1)).raw(',"score":1.5}'))
      .raw('],"total":2}')
      .toBuffer();
    expect(JSON.parse(out.toString('utf8'))).toEqual({
      query: 'naïve "quoted"',
      agents: [
        { name: 'Ünïcode ✓', score: 1.5 },
        { name: 'plain', score: 1.5 },
      ],
      total: 2,
    });
  });

  it('takes part of a byte piece (an object without its closing brace) and leaves the piece as it was', () => {
    const profile = Buffer.from('{"name":"Ünï"}');
    const out = new JsonBytes()
      .raw('[')
      .bytesUpTo(profile, profile.length - 1)
      .raw(',"score":2}]')
      .toBuffer();
    expect(JSON.parse(out.toString('utf8'))).toEqual([{ name: 'Ünï', score: 2 }]);
    expect(profile.toString('utf8')).toBe('{"name":"Ünï"}');
  });

  it('takes a byte range from inside a larger buffer, between text pieces', () => {
    const chunk = Buffer.from('xx{"name":"Ünï"}{"name":"b"}yy');
    const first = chunk.indexOf('{');
    const second = chunk.indexOf('{', first + 1);
    const out = new JsonBytes()
      .raw('[')
      .range(chunk, first, second - 1)
      .raw(',"score":1},')
      .range(chunk, second, chunk.length - 2)
      .raw(']')
      .toBuffer();
    expect(JSON.parse(out.toString('utf8'))).toEqual([{ name: 'Ünï', score: 1 }, { name: 'b' }]);
    // A range that is the whole of one buffer alone is still copied out of it (the buffer is not handed back).
    expect(new JsonBytes().range(chunk, first, second).toBuffer().toString()).toBe('{"name":"Ünï"}');
  });

  it('writes short and long text pieces, ASCII or not, byte for byte as Buffer.from would', () => {
    // Up to 32 characters and ASCII, a piece is measured and written in JavaScript; the others by Node.
    const texts = [
      ',',
      ',"score":0.1234}',
      'a'.repeat(31),
      'b'.repeat(32),
      'c'.repeat(33),
      'é',
      `${'d'.repeat(30)}é`,
      `${'e'.repeat(31)}✓`,
      '🤖',
      `x${'\ud800'}y`,
      '\u007f\u0080',
      `${'f'.repeat(40)}ü`,
    ];
    const chunk = Buffer.from('[{"name":"Ünï"}]');
    for (const [i, text] of texts.entries()) {
      const out = new JsonBytes()
        .raw(text)
        .range(chunk, 1, chunk.length - 1)
        .raw(text)
        .raw(texts[(i + 1) % texts.length]!)
        .toBuffer();
      expect(out.equals(Buffer.from(`${text}{"name":"Ünï"}${text}${texts[(i + 1) % texts.length]}`, 'utf8')), JSON.stringify(text)).toBe(
        true,
      );
    }
  });

  it('writes an empty list and a document of text alone', () => {
    expect(
      new JsonBytes()
        .raw('{"agents":[')
        .list([], () => undefined)
        .raw(']}')
        .toBuffer()
        .toString(),
    ).toBe('{"agents":[]}');
  });
});
