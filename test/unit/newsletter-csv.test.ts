import { describe, expect, it } from 'vitest';
import { csvCell, toCsv } from '../../src-api/modules/newsletter/csv';

describe('csvCell', () => {
  it('leaves plain text alone', () => {
    expect(csvCell('reader@example.com')).toBe('reader@example.com');
    expect(csvCell("o'neil")).toBe("o'neil");
  });

  it('quotes commas, quotes and line breaks, doubling the quotes (RFC 4180)', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line 1\nline 2')).toBe('"line 1\nline 2"');
    expect(csvCell('cr\rlf')).toBe('"cr\rlf"');
  });

  it.each(['=1+2', '+1', '-1', '@SUM(A1)', '\tTAB', '=HYPERLINK("http://x","y")'])(
    'prefixes a formula-looking cell with a single quote: %j',
    (cell) => {
      expect(csvCell(cell).replace(/^"/, '')).toMatch(/^'/);
    },
  );

  it('defuses and quotes a formula that also needs quoting', () => {
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe('"\'=HYPERLINK(""http://x"",""y"")"');
  });

  it('writes numbers, booleans and empty values as they are', () => {
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell(true)).toBe('true');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
  });
});

describe('toCsv', () => {
  it('writes a header row and CRLF-terminated records', () => {
    expect(
      toCsv(
        ['email', 'note'],
        [
          ['a@example.com', 'x,y'],
          ['=b@example.com', null],
        ],
      ),
    ).toBe('email,note\r\na@example.com,"x,y"\r\n\'=b@example.com,\r\n');
  });

  it('writes only the header for no rows', () => {
    expect(toCsv(['email'], [])).toBe('email\r\n');
  });
});
