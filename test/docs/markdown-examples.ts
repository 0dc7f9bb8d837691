import { expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { agentInput, startTestServer, type TestServer } from '../helpers/test-server';

/**
 * Executable documentation: the fenced code blocks of our Markdown files, run
 * against live servers by test/docs/*.test.ts so that no example can go stale.
 *
 * Conventions (documented for writers in docs/api.md, "How these examples are tested"):
 *
 * - Executable blocks (bash, python, ts, js, …) run, in order, unless marked
 *   `norun`: `<!-- norun: why -->` on the line(s) before the fence, or the word
 *   `norun` in the info string (```bash norun). Every norun block is counted and
 *   listed by the tests, so nothing is skipped silently.
 * - An output block (```json, ```http or ```text) directly after an executable
 *   block (only blank lines between) is that block's expected output:
 *   - json: the output must be JSON (a leading banner, e.g. npm's, is skipped)
 *     that has every key shown with the same value. `…` stands for "anything
 *     here": a bare `…` value is any value; a string containing `…` matches any
 *     string with `…` as a wildcard ("evt_…"); a bare `…` member of an object
 *     is decoration (objects are always matched as subsets); a bare `…` item of
 *     an array means "any number of items here" (without one, the lengths must
 *     be equal).
 *   - http: a status (or request) line, header lines and, after a blank line,
 *     an optional body. Each header shown must be present (names compared
 *     case-insensitively, `…` wildcards in values); the body is matched as
 *     json (or as text when it is not JSON).
 *   - text: line by line, blank lines ignored; `…` inside a line is a wildcard
 *     and a line that is only `…` stands for any number of lines.
 * - Info-string attributes give other blocks a role: `file=NAME` writes the block
 *   to NAME in the session's working folder instead of running it, `verifier`
 *   marks a signature-verification snippet that the webhook tests run against
 *   real deliveries.
 */

export const REPO_ROOT = path.resolve(import.meta.dirname, '../..');

export const EXECUTABLE_LANGS = new Set([
  'bash',
  'sh',
  'shell',
  'zsh',
  'console',
  'python',
  'py',
  'python3',
  'ts',
  'typescript',
  'tsx',
  'js',
  'javascript',
  'mjs',
]);
export const OUTPUT_LANGS = new Set(['json', 'http', 'text', 'txt', 'output']);

export interface Fence {
  /** Repository-relative path of the Markdown file. */
  file: string;
  /** 0-based position among the file's fences. */
  index: number;
  /** 1-based line of the opening fence. */
  line: number;
  /** The whole info string, e.g. "bash norun" or "python file=receiver.py". */
  info: string;
  /** The first word of the info string, lower-cased ("" for none). */
  lang: string;
  /** The other words of the info string: `norun`, `verifier`, `file=NAME` (value "" for bare words). */
  attrs: Map<string, string>;
  code: string;
  /** Text between the previous fence (or the start of the file) and this one. */
  before: string;
  /** Why the block is not run, when it is marked norun (the comment's text, or "" when no reason was given). */
  norun: string | undefined;
  /** The next fence, when only blank lines separate the two. */
  next: Fence | undefined;
}

/** `where` for messages: "docs/api.md:42". */
export function where(fence: Fence): string {
  return `${fence.file}:${fence.line}`;
}

export function isExecutable(fence: Fence): boolean {
  return EXECUTABLE_LANGS.has(fence.lang);
}

export function isOutput(fence: Fence): boolean {
  return OUTPUT_LANGS.has(fence.lang);
}

/** A Markdown file of the repository, read and split into fences. */
export function readFences(relativePath: string): Fence[] {
  return parseFences(fs.readFileSync(path.join(REPO_ROOT, relativePath), 'utf8'), relativePath);
}

/** The fenced code blocks of a CommonMark document (backtick and tilde fences, any indentation). */
export function parseFences(markdown: string, file = '<markdown>'): Fence[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const fences: Fence[] = [];
  let textStart = 0;
  let closedAt = -1; // line index just after the previous fence's closing line
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^`]*?)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent = '', marker = '', info = ''] = open;
    const content: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(lines[j]!);
      if (close && close[1]![0] === marker[0] && close[1]!.length >= marker.length) break;
      const text = lines[j]!;
      content.push(text.startsWith(indent) ? text.slice(indent.length) : text.trimStart());
    }
    const [lang = '', ...rest] = info.split(/\s+/).filter(Boolean);
    const attrs = new Map<string, string>();
    for (const word of rest) {
      const eq = word.indexOf('=');
      attrs.set(eq < 0 ? word : word.slice(0, eq), eq < 0 ? '' : word.slice(eq + 1));
    }
    const before = lines.slice(textStart, i).join('\n');
    const comment = /<!--\s*norun\b:?\s*([\s\S]*?)\s*-->\s*$/.exec(before);
    const fence: Fence = {
      file,
      index: fences.length,
      line: i + 1,
      info,
      lang: lang.toLowerCase(),
      attrs,
      code: content.join('\n'),
      before,
      norun: comment ? comment[1]! : attrs.has('norun') ? rest.slice(rest.indexOf('norun') + 1).join(' ') : undefined,
      next: undefined,
    };
    const previous = fences.at(-1);
    if (previous && closedAt >= 0 && lines.slice(closedAt, i).every((line) => line.trim() === '')) previous.next = fence;
    fences.push(fence);
    i = j;
    closedAt = j + 1;
    textStart = j + 1;
  }
  return fences;
}

/** Replaces every `from` with `to` in a text, failing loudly when a substitution no longer applies anywhere. */
export function substitute(fences: Fence[], substitutions: [from: string, to: string][]): Fence[] {
  for (const [from] of substitutions) {
    if (!fences.some((fence) => fence.code.includes(from))) {
      throw new Error(`the substitution of "${from}" matches no code block of ${fences[0]?.file}: update the test`);
    }
  }
  const apply = (text: string) => substitutions.reduce((result, [from, to]) => result.split(from).join(to), text);
  const copies = fences.map((fence) => ({ ...fence, code: apply(fence.code) }));
  copies.forEach((copy, i) => {
    if (fences[i]!.next) copy.next = copies[fences[i]!.next!.index];
  });
  return copies;
}

// ---------------------------------------------------------------------------
// JSON with `…` placeholders.

/** A bare `…` value: anything at all (but present). */
export const ANY = Symbol('any');
/** A bare `…` item of an array: any number of items. */
export const REST = Symbol('rest');

/**
 * Parses JSON extended with bare `…` (or `...`) tokens: as a value it is ANY,
 * as an array item REST, as an object member it is skipped. Trailing commas
 * before a closing bracket are allowed, so `[1, 2, …]` and `{"a": 1, …}` read naturally.
 */
export function parseLooseJson(text: string): unknown {
  let at = 0;
  const fail = (message: string): never => {
    const line = text.slice(0, at).split('\n').length;
    throw new SyntaxError(`${message} at line ${line} of the expected JSON`);
  };
  const space = () => {
    while (at < text.length && /\s/.test(text[at]!)) at++;
  };
  const ellipsis = (): boolean => {
    space();
    if (text.startsWith('…', at)) {
      at += 1;
      return true;
    }
    if (text.startsWith('...', at)) {
      at += 3;
      return true;
    }
    return false;
  };
  const string = (): string => {
    const end = /^"(?:[^"\\\n]|\\.)*"/.exec(text.slice(at));
    if (!end) fail('a string was expected');
    at += end![0].length;
    return JSON.parse(end![0]) as string;
  };
  const value = (): unknown => {
    if (ellipsis()) return ANY;
    space();
    const c = text[at];
    if (c === '{') {
      at++;
      const object: Record<string, unknown> = {};
      for (;;) {
        space();
        if (text[at] === '}') {
          at++;
          return object;
        }
        if (!ellipsis()) {
          const key = string();
          space();
          if (text[at] !== ':') fail('":" was expected');
          at++;
          object[key] = value();
        }
        space();
        if (text[at] === ',') at++;
        else if (text[at] !== '}') fail('"," or "}" was expected');
      }
    }
    if (c === '[') {
      at++;
      const array: unknown[] = [];
      for (;;) {
        space();
        if (text[at] === ']') {
          at++;
          return array;
        }
        array.push(ellipsis() ? REST : value());
        space();
        if (text[at] === ',') at++;
        else if (text[at] !== ']') fail('"," or "]" was expected');
      }
    }
    if (c === '"') return string();
    const literal = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(at));
    if (!literal) fail('a JSON value was expected');
    at += literal![0].length;
    return JSON.parse(literal![0]);
  };
  const result = value();
  space();
  if (at < text.length) fail('unexpected text after the JSON value');
  return result;
}

function wildcard(pattern: string): RegExp {
  const parts = pattern.split(/…|\.\.\./).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[\\s\\S]*')}$`);
}

function show(value: unknown): string {
  if (value === ANY) return '…';
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** Where `actual` differs from the `expected` pattern (empty: it matches). */
export function matchJson(expected: unknown, actual: unknown, at = '$'): string[] {
  if (expected === ANY) return actual === undefined ? [`${at}: missing`] : [];
  if (typeof expected === 'string' && (expected.includes('…') || expected.includes('...'))) {
    if (expected === '…' || expected === '...') return actual === undefined ? [`${at}: missing`] : [];
    return typeof actual === 'string' && wildcard(expected).test(actual) ? [] : [`${at}: expected ${show(expected)}, got ${show(actual)}`];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${at}: expected an array, got ${show(actual)}`];
    return matchArray(expected, actual, at);
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${at}: expected an object, got ${show(actual)}`];
    return Object.entries(expected).flatMap(([key, value]) =>
      Object.hasOwn(actual, key)
        ? matchJson(value, (actual as Record<string, unknown>)[key], `${at}.${key}`)
        : [`${at}: no "${key}" (has ${Object.keys(actual).join(', ') || 'no keys'})`],
    );
  }
  return Object.is(expected, actual) ? [] : [`${at}: expected ${show(expected)}, got ${show(actual)}`];
}

function matchArray(expected: unknown[], actual: unknown[], at: string): string[] {
  const segments: unknown[][] = [[]];
  for (const item of expected) {
    if (item === REST) segments.push([]);
    else segments.at(-1)!.push(item);
  }
  const items = (list: unknown[], offset: number) => list.flatMap((item, i) => matchJson(item, actual[offset + i], `${at}[${offset + i}]`));
  if (segments.length === 1) {
    if (actual.length !== expected.length)
      return [`${at}: expected ${expected.length} items, got ${actual.length} (add "…" to allow more)`];
    return items(expected, 0);
  }
  const first = segments[0]!;
  const last = segments.at(-1)!;
  const middle = segments.slice(1, -1);
  const minimum = segments.reduce((n, segment) => n + segment.length, 0);
  if (actual.length < minimum) return [`${at}: expected at least ${minimum} items, got ${actual.length}`];
  const problems = [...items(first, 0), ...items(last, actual.length - last.length)];
  let from = first.length;
  for (const segment of middle) {
    let found = -1;
    for (let start = from; start + segment.length <= actual.length - last.length; start++) {
      if (items(segment, start).length === 0) {
        found = start;
        break;
      }
    }
    if (found < 0) problems.push(`${at}: no run of items matching ${show(segment)} after item ${from}`);
    else from = found + segment.length;
  }
  return problems;
}

/** The JSON value printed in `output`: all of it, or from the first line that starts a JSON value (after a banner). */
export function parseOutputJson(output: string): unknown {
  const trimmed = output.trim();
  try {
    return JSON.parse(trimmed);
  } catch {
    const lines = trimmed.split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!/^\s*[[{]/.test(lines[i]!)) continue;
      try {
        return JSON.parse(lines.slice(i).join('\n'));
      } catch {
        // not from here
      }
    }
  }
  throw new Error(`the output is not JSON:\n${clip(output)}`);
}

/** Text, line by line: blank lines ignored, `…` a wildcard within a line, a line of only `…` any number of lines. */
export function matchText(expected: string, actual: string): string[] {
  const lines = (text: string) =>
    text
      .replace(/\r\n?/g, '\n')
      .split('\n')
      .map((line) => line.trimEnd())
      .filter((line) => line.trim() !== '');
  const want = lines(expected);
  const got = lines(actual);
  const matches = (w: number, g: number): boolean => {
    if (w === want.length) return g === got.length;
    const pattern = want[w]!.trim();
    if (pattern === '…' || pattern === '...') {
      for (let skip = g; skip <= got.length; skip++) if (matches(w + 1, skip)) return true;
      return false;
    }
    return g < got.length && wildcard(want[w]!.trim()).test(got[g]!.trim()) && matches(w + 1, g + 1);
  };
  return matches(0, 0) ? [] : [`expected the lines\n${want.join('\n')}\ngot\n${got.join('\n')}`];
}

interface HttpMessage {
  startLine: string;
  headers: [name: string, value: string][];
  body: string;
}

/** An HTTP message as `curl -i` prints it (or as written in a doc). */
export function parseHttpMessage(text: string): HttpMessage {
  const normalized = text.replace(/\r\n?/g, '\n').replace(/^\s*\n/, '');
  const split = normalized.indexOf('\n\n');
  const head = split < 0 ? normalized : normalized.slice(0, split);
  const body = split < 0 ? '' : normalized.slice(split + 2);
  const [startLine = '', ...headerLines] = head.split('\n');
  const headers = headerLines
    .filter((line) => line.includes(':'))
    .map((line): [string, string] => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]);
  return { startLine: startLine.trim(), headers, body };
}

/** An HTTP message against the documented one: start line, the headers shown, the body shown. */
export function matchHttp(expectedText: string, actualText: string): string[] {
  const expected = parseHttpMessage(expectedText);
  const actual = parseHttpMessage(actualText);
  const problems: string[] = [];
  const expectedStatus = /^HTTP\/[\d.]+\s+(\d{3})/.exec(expected.startLine);
  if (expectedStatus) {
    const actualStatus = /^HTTP\/[\d.]+\s+(\d{3})/.exec(actual.startLine);
    if (actualStatus?.[1] !== expectedStatus[1]) problems.push(`status: expected ${expectedStatus[1]}, got "${actual.startLine}"`);
  } else if (!wildcard(expected.startLine).test(actual.startLine)) {
    problems.push(`start line: expected "${expected.startLine}", got "${actual.startLine}"`);
  }
  for (const [name, value] of expected.headers) {
    const values = actual.headers.filter(([n]) => n === name).map(([, v]) => v);
    if (values.length === 0) problems.push(`header ${name}: missing (has ${actual.headers.map(([n]) => n).join(', ')})`);
    else if (!values.some((v) => wildcard(value).test(v)))
      problems.push(`header ${name}: expected "${value}", got "${values.join('", "')}"`);
  }
  if (expected.body.trim()) problems.push(...matchBody(expected.body, actual.body));
  return problems;
}

function matchBody(expected: string, actual: string): string[] {
  let pattern: unknown;
  try {
    pattern = parseLooseJson(expected.trim());
  } catch {
    return matchText(expected, actual);
  }
  let value: unknown;
  try {
    value = JSON.parse(actual);
  } catch {
    return [`body: expected JSON, got ${clip(actual)}`];
  }
  return matchJson(pattern, value, 'body');
}

/** Checks `output` against an output block; returns the problems (empty when it matches). */
export function matchOutput(expected: Fence, output: string): string[] {
  if (expected.lang === 'json') {
    let value: unknown;
    try {
      value = parseOutputJson(output);
    } catch (error) {
      return [(error as Error).message];
    }
    return matchJson(parseLooseJson(expected.code), value);
  }
  if (expected.lang === 'http') return matchHttp(expected.code, output);
  return matchText(expected.code, output);
}

export function clip(text: string, max = 2000): string {
  return text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters)` : text;
}

// ---------------------------------------------------------------------------
// Running.

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command in its own process group, and kills the whole group when it
 * ends or times out, so that servers an example starts in the background never
 * outlive the test.
 */
export function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? REPO_ROOT,
      env: options.env ?? process.env,
      detached: true,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${options.timeoutMs} ms]`;
      killGroup();
    }, options.timeoutMs ?? 120_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    // 'exit', not 'close': a background process of the example may still hold stdout open.
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      setTimeout(() => {
        killGroup();
        resolve({ code, signal, stdout, stderr });
      }, 100);
    });
    if (child.stdin) {
      child.stdin.on('error', () => {}); // the command may exit without reading its input
      child.stdin.end(options.input);
    }
  });
}

const MARKER = '@@DOC-STEP';

export interface Step {
  fence: Fence;
  code: string;
}

export interface StepResult {
  step: Step;
  /** What the step printed; undefined when the session stopped before it. */
  output: string | undefined;
}

export interface SessionResult {
  run: Run;
  steps: StepResult[];
  /** The step the session died in, when it exited non-zero. */
  failed: Step | undefined;
}

function splitByMarkers(stdout: string, steps: Step[]): { results: StepResult[]; reached: number; finished: boolean } {
  const outputs = new Map<number, string>();
  const pattern = new RegExp(`^${MARKER} (\\d+|END)@@$`, 'gm');
  let current = -1;
  let from = 0;
  let finished = false;
  for (let match = pattern.exec(stdout); match; match = pattern.exec(stdout)) {
    if (current >= 0) outputs.set(current, stdout.slice(from, match.index));
    if (match[1] === 'END') {
      finished = true;
      current = -1;
    } else current = Number(match[1]);
    from = match.index + match[0].length + 1;
  }
  if (current >= 0) outputs.set(current, stdout.slice(from));
  const reached = Math.max(-1, ...outputs.keys());
  return { results: steps.map((step, i) => ({ step, output: outputs.get(i) })), reached, finished };
}

/** Runs shell steps in order in one `bash -e` session; each step's output is told apart by markers. */
export async function runBashSession(
  steps: Step[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<SessionResult> {
  const script = steps.map((step, i) => `printf '\\n${MARKER} %d@@\\n' ${i}\n${step.code}\n`).join('') + `printf '\\n${MARKER} END@@\\n'\n`;
  const file = path.join(options.cwd, `.doc-session-${process.pid}.sh`);
  fs.writeFileSync(file, script);
  try {
    const result = await run('bash', ['-e', file], { cwd: options.cwd, env: options.env, timeoutMs: options.timeoutMs });
    const { results, reached, finished } = splitByMarkers(result.stdout, steps);
    return { run: result, steps: results, failed: finished && result.code === 0 ? undefined : steps[Math.max(0, reached)] };
  } finally {
    fs.rmSync(file, { force: true });
  }
}

const PYTHON_DRIVER = `
import json, sys
steps = json.load(open(sys.argv[1], encoding="utf-8"))
namespace = {"__name__": "__main__"}
for i, step in enumerate(steps):
    print("\\n${MARKER} %d@@" % i, flush=True)
    # Padded with blank lines so that a traceback names the Markdown file's own line numbers.
    exec(compile("\\n" * step["line"] + step["code"], step["file"], "exec"), namespace)
    sys.stdout.flush()
print("\\n${MARKER} END@@", flush=True)
`;

/** Runs Python steps in order in one interpreter, sharing one namespace (as a reader pasting them one after the other would). */
export async function runPythonSession(
  steps: Step[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<SessionResult> {
  const file = path.join(options.cwd, `.doc-steps-${process.pid}.json`);
  fs.writeFileSync(file, JSON.stringify(steps.map((step) => ({ code: step.code, file: step.fence.file, line: step.fence.line }))));
  try {
    const result = await run('python3', ['-c', PYTHON_DRIVER, file], { cwd: options.cwd, env: options.env, timeoutMs: options.timeoutMs });
    const { results, reached, finished } = splitByMarkers(result.stdout, steps);
    return { run: result, steps: results, failed: finished && result.code === 0 ? undefined : steps[Math.max(0, reached)] };
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/**
 * Runs TypeScript steps as one ES module (`node --import tsx`), in order, as a
 * reader putting them in one file would: imports are hoisted, top-level await
 * works. A statement line ending in `// true` or `// false` is checked to
 * evaluate to that value.
 */
export async function runTypeScriptSession(
  steps: Step[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<SessionResult> {
  const checked = (step: Step) =>
    step.code
      .split('\n')
      .map((line, i) => {
        const claim = /^(\s*)(?!(?:const|let|var|return|import|export)\b)(\S.*?);\s*\/\/\s*(true|false)\b.*$/.exec(line);
        if (!claim) return line;
        const [, indent, expression, value] = claim;
        return `${indent}__docCheck(${expression}, ${value}, ${JSON.stringify(`${step.fence.file}:${step.fence.line + 1 + i}`)});`;
      })
      .join('\n');
  const source =
    `function __docCheck(actual: unknown, expected: boolean, at: string): void {\n` +
    `  if (actual !== expected) throw new Error(\`\${at}: the example says \${expected}, got \${String(actual)}\`);\n}\n` +
    steps.map((step, i) => `console.log('\\n${MARKER} ${i}@@');\n${checked(step)}\n`).join('') +
    `console.log('\\n${MARKER} END@@');\n`;
  // .mts: an ES module wherever it is written. tsx from this repository, whatever the folder.
  const file = path.join(options.cwd, `doc-steps-${process.pid}.mts`);
  fs.writeFileSync(file, source);
  try {
    const tsx = import.meta.resolve('tsx');
    const result = await run(process.execPath, ['--import', tsx, file], {
      cwd: options.cwd,
      env: options.env,
      timeoutMs: options.timeoutMs,
    });
    const { results, reached, finished } = splitByMarkers(result.stdout, steps);
    return { run: result, steps: results, failed: finished && result.code === 0 ? undefined : steps[Math.max(0, reached)] };
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** Why a session failed, for an assertion message. */
export function describeFailure(session: SessionResult): string {
  const step = session.failed;
  const output = step ? session.steps.find((s) => s.step === step)?.output : undefined;
  return [
    `the example at ${step ? where(step.fence) : '?'} failed (exit ${session.run.code ?? session.run.signal})`,
    step ? `--- example ---\n${step.code}` : '',
    output ? `--- its output ---\n${clip(output)}` : '',
    `--- stderr ---\n${clip(
      session.run.stderr
        .split('\n')
        .filter((line) => !/^npm warn/i.test(line))
        .join('\n'),
      4000,
    )}`,
  ]
    .filter(Boolean)
    .join('\n');
}

// ---------------------------------------------------------------------------
// Accounting: every executable block is run, or marked norun, and counted.

export interface Plan {
  /** Executable blocks to run, each with its expected output block, if any. */
  steps: (Step & { expected: Fence | undefined })[];
  /** Blocks written to files (file=NAME). */
  files: Fence[];
  /** Blocks with the `verifier` role. */
  verifiers: Fence[];
  norun: Fence[];
  /** Output blocks checked against a step's output. */
  outputs: Fence[];
  /** Other blocks (data, illustrations), neither executable nor an output. */
  other: Fence[];
}

export function plan(fences: Fence[], runnable: (fence: Fence) => boolean = () => true): Plan {
  const result: Plan = { steps: [], files: [], verifiers: [], norun: [], outputs: [], other: [] };
  const outputs = new Set<Fence>();
  for (const fence of fences) {
    if (outputs.has(fence)) continue;
    if (fence.norun !== undefined) {
      result.norun.push(fence);
      if (fence.next && isOutput(fence.next)) outputs.add(fence.next); // the output of a norun block is not checked either
    } else if (fence.attrs.has('file')) result.files.push(fence);
    else if (fence.attrs.has('verifier')) result.verifiers.push(fence);
    else if (isExecutable(fence) && runnable(fence)) {
      const expected = fence.next && isOutput(fence.next) && fence.next.norun === undefined ? fence.next : undefined;
      if (expected) {
        outputs.add(expected);
        result.outputs.push(expected);
      }
      result.steps.push({ fence, code: fence.code, expected });
    } else result.other.push(fence);
  }
  return result;
}

/** A one-line account of a plan, for the test log. */
export function summarize(file: string, p: Plan): string {
  const lines = [
    `${file}: ${p.steps.length} run, ${p.outputs.length} outputs checked, ${p.files.length} files, ${p.verifiers.length} verifiers, ${p.norun.length} norun, ${p.other.length} other`,
    ...p.norun.map((fence) => `  norun ${where(fence)} (${fence.lang}): ${fence.norun || 'no reason given'}`),
  ];
  return lines.join('\n');
}

// ---------------------------------------------------------------------------
// Places to run in.

/**
 * A scratch folder inside the repository (under test-results/, git-ignored),
 * so that `npm run cli` and `npx tsx` work from it as from the repository root.
 * Its tsconfig.json maps `@agent-directory/client` to clients/typescript/src for
 * tsx, as if the package were installed (a node_modules folder would make npm
 * take the scratch folder for the project root).
 */
export function makeScratchDir(name: string): string {
  const base = path.join(REPO_ROOT, 'test-results', 'docs');
  fs.mkdirSync(base, { recursive: true });
  const dir = fs.mkdtempSync(path.join(base, `${name}-`));
  const client = path.join(REPO_ROOT, 'clients', 'typescript', 'src');
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        paths: {
          '@agent-directory/client': [path.join(client, 'index.ts')],
          '@agent-directory/client/webhooks': [path.join(client, 'webhooks.ts')],
        },
      },
    }),
  );
  return dir;
}

export function removeScratchDir(dir: string | undefined): void {
  if (dir && dir.startsWith(path.join(REPO_ROOT, 'test-results', 'docs'))) fs.rmSync(dir, { recursive: true, force: true });
}

/** A free TCP port on 127.0.0.1 (for servers an example starts itself). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The environment examples run in: no proxies, no colours, and the repository's tools first on PATH. */
export function exampleEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/^(AGENTDIR_|npm_|NODE_OPTIONS$|VITEST|http_proxy$|https_proxy$|HTTP_PROXY$|HTTPS_PROXY$)/.test(key)) delete env[key];
  }
  return {
    ...env,
    PATH: `${path.join(REPO_ROOT, 'node_modules', '.bin')}${path.delimiter}${env.PATH ?? ''}`,
    NO_COLOR: '1',
    PYTHONDONTWRITEBYTECODE: '1',
    ...extra,
  };
}

// ---------------------------------------------------------------------------
// Vitest glue shared by the doc tests.

/**
 * One test per step that has an expected output (named by its place in the
 * file), plus one for the session as a whole. `get` is called when the tests
 * run, after beforeAll has run the session; it gives the session and the plan
 * whose output blocks carry the substitutions the session was run with.
 */
export function defineStepTests(planned: Plan, get: () => { session: SessionResult; live: Plan }): void {
  it('the examples run in order in one session without an error', () => {
    const { session } = get();
    expect(session.failed, describeFailure(session)).toBeUndefined();
  });
  planned.steps.forEach((step, i) => {
    if (!step.expected) return;
    const lines = step.code.split('\n').filter((line) => line.trim() && !line.trim().startsWith('#'));
    const title = lines.find((line) => /\b(curl|npm|npx|node|python3|cat|echo|printf|openssl)\b/.test(line)) ?? lines[0] ?? '';
    it(`${where(step.fence)}: ${title.trim().slice(0, 90)}`, () => {
      const { session, live } = get();
      const output = session.steps[i]?.output;
      expect(output, `the session stopped before this example\n${describeFailure(session)}`).toBeDefined();
      const expected = live.steps[i]!.expected!;
      expect(
        matchOutput(expected, output!),
        `the output of ${where(step.fence)} does not match ${where(expected)}:\n${clip(output!)}`,
      ).toEqual([]);
    });
  });
}

/** Checks the plan's accounting: nothing unaccounted for, norun blocks as expected and each with a reason. */
export function expectAccounted(file: string, p: Plan, expectedNorun: number, options: { allowOther?: boolean } = {}): void {
  console.log(summarize(file, p));
  if (!options.allowOther) expect(p.other.map(where), 'blocks that are neither run, nor an output, nor marked norun').toEqual([]);
  expect(
    p.norun.length,
    `norun blocks of ${file}: ${p.norun.map((f) => `${where(f)} (${f.norun || 'no reason'})`).join('; ')}; update the expected count when adding one deliberately`,
  ).toBe(expectedNorun);
  for (const fence of p.norun) expect(fence.norun, `${where(fence)} is marked norun without saying why`).toBeTruthy();
}

// ---------------------------------------------------------------------------
// The server the clients' READMEs run against.

/** The agent ids the clients' README examples use as placeholders; the example server lists agents with these ids. */
export const README_AGENT_IDS = ['agt_123', 'agt_1', 'agt_2'];

export interface ClientExampleServer {
  server: TestServer;
  close(): Promise<void>;
}

/**
 * A demo server (rate limits off) that also lists the agents the READMEs name
 * (`agt_123`, …), with their source on a local web site that plays the owner:
 * it publishes the token of every pending claim at the well-known URL, as the
 * READMEs tell the reader to do between `claim` and `verify_claim`.
 */
export async function startClientExampleServer(): Promise<ClientExampleServer> {
  const state: { server?: TestServer } = {};
  const site = http.createServer(async (request, response) => {
    const server = state.server;
    if (request.url !== '/.well-known/agent-directory-claim.txt' || !server) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const pending = (await server.services.claims.list({ status: 'pending', page: 1, limit: 100 })).items;
    response.writeHead(200, { 'content-type': 'text/plain' }).end(pending.map((claim) => claim.verification.token).join('\n'));
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const siteOrigin = `http://127.0.0.1:${(site.address() as net.AddressInfo).port}`;
  const server = (state.server = await startTestServer({ demoData: true, allowPrivateUrls: true }));
  for (const id of README_AGENT_IDS) {
    await server.services.agents.edits.create(
      agentInput({
        name: `Example ${id}`,
        source_url: `${siteOrigin}/${id}`,
        capabilities: ['code-review', 'python'],
        categories: ['developer-tools'],
      }),
      { id, emitEvents: false },
    );
  }
  return {
    server,
    async close() {
      await server.close();
      await new Promise<void>((resolve) => site.close(() => resolve()));
    },
  };
}
