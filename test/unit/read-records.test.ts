import { describe, expect, it } from 'vitest';
import { readRecords, readRecordsFromBytes } from '../../src-api/cli/read-records';

describe('import files read from their bytes (cli import)', () => {
  const cases: Record<string, string> = {
    'JSONL with a byte order mark, blank and CRLF lines': '\ufeff{"name":"a"}\n\n{"name":"b"}\r\n   \n{"name":"ü"}',
    'JSONL with a broken line': '{"name":"a"}\n{"name":\n{"name":"c"}\n',
    'a JSON array': '\n  [{"name":"a"},\n {"name":"b"}]\n',
    'a broken JSON array': '[{"name":"a"},,{"name":"b"}',
    'an empty file': '',
  };
  for (const [what, text] of Object.entries(cases)) {
    it(`reads ${what} as the text reader does: same records, lines and issues`, () => {
      expect(readRecordsFromBytes(Buffer.from(text, 'utf8'))).toEqual(readRecords(text));
    });
  }

  it('reads each JSONL line on its own: a multi-byte character never straddles a decode', () => {
    const lines = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ name: `agent ${i} — 名前 ${'é'.repeat(i % 7)}` }));
    const read = readRecordsFromBytes(Buffer.from(`${lines.join('\n')}\n`, 'utf8'));
    expect(read.issues).toEqual([]);
    expect(read.records).toHaveLength(2000);
    expect(read.records[1999]).toEqual({ value: JSON.parse(lines[1999]!), line: 2000 });
  });
});
