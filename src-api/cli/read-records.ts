import type { ImportIssue, ImportRecord } from '../modules/agents/import-records';

/**
 * Reads the records of an import file: a JSON array, or JSONL (one JSON value
 * per line, blank lines skipped). The first non-space character decides: `[`
 * means an array. Every record keeps the line it starts on (and, in an array,
 * its index) so that error reports can point at it.
 *
 * Syntax errors are collected, not thrown: the caller reports them all.
 */
export interface ReadResult {
  format: 'json' | 'jsonl';
  records: ImportRecord[];
  issues: ImportIssue[];
}

const NEWLINE = 10;
const QUOTE = 34;
const COMMA = 44;
const BACKSLASH = 92;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/**
 * As `readRecords`, from the file's bytes: JSONL is decoded a line at a time,
 * so a file longer than V8's longest string (about 512 MB: 1,000,000 agents)
 * can be imported. A JSON array is decoded whole, as `readRecords` needs it.
 */
export function readRecordsFromBytes(bytes: Buffer): ReadResult {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  let first = bom;
  while (first < bytes.length && (bytes[first] === 32 || bytes[first] === 9 || bytes[first] === 10 || bytes[first] === 13)) first++;
  if (bytes[first] === OPEN_BRACKET) return readRecords(bytes.toString('utf8', bom));
  const records: ImportRecord[] = [];
  const issues: ImportIssue[] = [];
  let line = 1;
  for (let start = bom; start < bytes.length; line++) {
    const newline = bytes.indexOf(NEWLINE, start);
    const end = newline === -1 ? bytes.length : newline;
    readJsonLine(bytes.toString('utf8', start, end), line, records, issues);
    start = end + 1;
  }
  return { format: 'jsonl', records, issues };
}

export function readRecords(text: string): ReadResult {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const first = body.search(/\S/);
  if (first !== -1 && body[first] === '[') return readJsonArray(body, first);
  return readJsonLines(body);
}

function readJsonLines(text: string): ReadResult {
  const records: ImportRecord[] = [];
  const issues: ImportIssue[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) readJsonLine(lines[i]!, i + 1, records, issues);
  return { format: 'jsonl', records, issues };
}

/** One JSONL line (blank: skipped) into `records`, or its syntax error into `issues`. */
function readJsonLine(text: string, line: number, records: ImportRecord[], issues: ImportIssue[]): void {
  if (text.trim() === '') return;
  try {
    records.push({ value: JSON.parse(text), line });
  } catch (error) {
    issues.push({ line, pointer: '', detail: `invalid JSON: ${jsonErrorReason(error)}` });
  }
}

/**
 * Splits the top-level array into element texts with a small scanner (strings,
 * escapes and nesting), then parses each element on its own: a syntax error is
 * reported at the line where it is, and the other elements are still checked.
 */
function readJsonArray(text: string, open: number): ReadResult {
  const records: ImportRecord[] = [];
  const issues: ImportIssue[] = [];
  let line = 1 + countNewlines(text, 0, open);
  let i = open + 1;
  let index = 0;
  let nextNewline = -2; // see newlineFrom()

  const skipSpace = () => {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === NEWLINE) line++;
      else if (c !== 32 && c !== 9 && c !== 13) break;
      i++;
    }
  };

  skipSpace();
  if (text[i] === ']') return finish(i + 1);

  for (;;) {
    skipSpace();
    const start = i;
    const startLine = line;
    let depth = 0;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i = skipString(i + 1);
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (depth === 0 && c === CLOSE_BRACKET) break;
        depth = Math.max(0, depth - 1);
      } else if (c === COMMA && depth === 0) break;
      else if (c === NEWLINE) line++;
      i++;
    }
    const element = text.slice(start, i);
    if (i >= text.length) {
      // Either the "]" is missing, or a broken element (unterminated string, unbalanced
      // brackets) ran the scan to the end: then JSON.parse says where it breaks.
      if (element.trim() === '' || parseElement(element, startLine, index)) {
        issues.push({ line, pointer: '', detail: 'invalid JSON: the array is not closed (missing "]")' });
      }
      return { format: 'json', records, issues };
    }
    if (element.trim() === '') {
      issues.push({ line: startLine, index, pointer: '', detail: `invalid JSON: expected a value before "${text[i]}"` });
    } else {
      const result = parseElement(element, startLine, index);
      if (result) records.push({ value: result.value, line: startLine, index });
    }
    index++;
    if (text[i] === ']') return finish(i + 1);
    i++; // the comma
  }

  /** Parses one element; on a syntax error records it (at the line where it is) and returns undefined. */
  function parseElement(element: string, startLine: number, elementIndex: number): { value: unknown } | undefined {
    try {
      return { value: JSON.parse(element) };
    } catch (error) {
      const position = jsonErrorPosition(error);
      const errorLine = position === undefined ? startLine : startLine + countNewlines(element, 0, position);
      issues.push({ line: errorLine, index: elementIndex, pointer: '', detail: `invalid JSON: ${jsonErrorReason(error)}` });
      return undefined;
    }
  }

  /** The next newline at or after `at` (memoised: a minified array is one long line). */
  function newlineFrom(at: number): number {
    if (nextNewline !== -1 && nextNewline < at) nextNewline = text.indexOf('\n', at);
    return nextNewline;
  }

  /**
   * The index after the closing quote of a string whose content starts at `from`.
   * A raw newline cannot be inside a JSON string: the scan resynchronises there
   * (and JSON.parse reports the error in that element).
   */
  function skipString(from: number): number {
    let at = from;
    for (;;) {
      const quote = text.indexOf('"', at);
      const newline = newlineFrom(at);
      if (newline !== -1 && (quote === -1 || newline < quote)) {
        line++;
        return newline + 1;
      }
      if (quote === -1) return text.length;
      let backslashes = 0;
      while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) return quote + 1;
      at = quote + 1;
    }
  }

  function finish(afterClose: number): ReadResult {
    const rest = text.slice(afterClose);
    const extra = rest.search(/\S/);
    if (extra !== -1) {
      issues.push({
        line: line + countNewlines(rest, 0, extra),
        pointer: '',
        detail: 'invalid JSON: unexpected content after the closing "]"',
      });
    }
    return { format: 'json', records, issues };
  }
}

function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === NEWLINE) n++;
  return n;
}

function jsonErrorPosition(error: unknown): number | undefined {
  const match = /at position (\d+)/.exec(error instanceof Error ? error.message : '');
  return match ? Number(match[1]) : undefined;
}

/** V8's message without the position and the echo of the input ("Unexpected token '}'"). */
function jsonErrorReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (
    message
      .replace(/ in JSON at position \d+( \(line \d+ column \d+\))?/, '')
      .replace(/, ".*" is not valid JSON$/s, '')
      .trim() || 'not valid JSON'
  );
}
