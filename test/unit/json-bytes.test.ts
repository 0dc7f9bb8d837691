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
