import { describe, expect, it } from 'vitest';
import {
  ANY,
  matchHttp,
  matchJson,
  matchOutput,
  matchText,
  parseFences,
  parseLooseJson,
  parseOutputJson,
  plan,
  REST,
  runBashSession,
  runPythonSession,
  runTypeScriptSession,
  type Fence,
} from './markdown-examples';
import { makeTempDir } from '../helpers/temp-dir';

/** The doc-test machinery itself: it must fail when a doc is wrong, or the doc tests prove nothing. */

describe('parseFences', () => {
  const markdown = [
    '# Title',
    '',
    '```bash',
    'echo hi',
    '```',
    '',
    '```json',
    '{"a": 1}',
    '```',
    '',
    'Prose.',
    '',
    '<!-- norun: needs a network -->',
    '',
    '```python',
    'import requests',
    '```',
    '',
    '- a list item:',
    '',
    '  ~~~ts file=check.ts',
    '  const x = 1;',
    '  ~~~',
    '````text',
    '```',
    '````',
  ].join('\n');
  const fences = parseFences(markdown, 'x.md');

  it('finds fences, languages, attributes, norun comments and what directly follows', () => {
    expect(fences.map((fence) => [fence.lang, fence.line])).toEqual([
      ['bash', 3],
      ['json', 7],
      ['python', 15],
      ['ts', 21],
      ['text', 24],
    ]);
    expect(fences[0]!.next).toBe(fences[1]);
    expect(fences[1]!.next).toBeUndefined(); // prose in between
    expect(fences[2]!.norun).toBe('needs a network');
    expect(fences[3]!.attrs.get('file')).toBe('check.ts');
    expect(fences[3]!.code).toBe('const x = 1;');
    expect(fences[4]!.code).toBe('```');
  });

  it('plans: steps with their outputs, files, norun, and the rest', () => {
    const p = plan(fences);
    expect(p.steps.map((step) => step.fence.lang)).toEqual(['bash']);
    expect(p.steps[0]!.expected).toBe(fences[1]);
    expect(p.norun).toEqual([fences[2]]);
    expect(p.files).toEqual([fences[3]]);
    expect(p.other).toEqual([fences[4]]);
  });

  it('reads `norun` in the info string too', () => {
    expect(parseFences('```bash norun needs a TTY\nls\n```')[0]!.norun).toBe('needs a TTY');
  });
});

describe('JSON with … placeholders', () => {
  it('parses bare … as ANY, REST or decoration', () => {
    expect(parseLooseJson('{"a": …, "b": [1, …], …}')).toEqual({ a: ANY, b: [1, REST] });
    expect(parseLooseJson('[…, "x", …]')).toEqual([REST, 'x', REST]);
  });

  it('matches subsets of objects, with wildcards in strings', () => {
    const actual = { id: 'evt_123', n: 5, nested: { a: 1, b: 2 }, extra: true };
    expect(matchJson(parseLooseJson('{"id": "evt_…", "nested": {"a": 1}}'), actual)).toEqual([]);
    expect(matchJson(parseLooseJson('{"n": …}'), actual)).toEqual([]);
    expect(matchJson(parseLooseJson('{"id": "rev_…"}'), actual)).toHaveLength(1);
    expect(matchJson(parseLooseJson('{"n": 6}'), actual)).toHaveLength(1);
    expect(matchJson(parseLooseJson('{"missing": …}'), actual)).toHaveLength(1);
    expect(matchJson(parseLooseJson('{"nested": {"a": 2}}'), actual)).toHaveLength(1);
  });

  it('matches arrays exactly, or with … for any number of items', () => {
    expect(matchJson(parseLooseJson('[1, 2]'), [1, 2])).toEqual([]);
    expect(matchJson(parseLooseJson('[1, 2]'), [1, 2, 3])).toHaveLength(1);
    expect(matchJson(parseLooseJson('[1, …]'), [1, 2, 3])).toEqual([]);
    expect(matchJson(parseLooseJson('[…, 3]'), [1, 2, 3])).toEqual([]);
    expect(matchJson(parseLooseJson('[…, 2, …]'), [1, 2, 3])).toEqual([]);
    expect(matchJson(parseLooseJson('[…, 4, …]'), [1, 2, 3])).toHaveLength(1);
    expect(matchJson(parseLooseJson('[…]'), [])).toEqual([]);
    expect(matchJson(parseLooseJson('[2, …]'), [1, 2])).toHaveLength(1);
  });

  it('finds the JSON after a banner in the output', () => {
    expect(parseOutputJson('\n> pkg@1.0.0 cli\n> tsx cli.ts\n\n{"id": 1}\n')).toEqual({ id: 1 });
    expect(() => parseOutputJson('no json here')).toThrow(/not JSON/);
  });
});

describe('text and HTTP outputs', () => {
  it('matches text line by line, with … wildcards', () => {
    expect(matchText('a …\n…\nz', 'a b c\n\nx\ny\nz')).toEqual([]);
    expect(matchText('true', 'true\n')).toEqual([]);
    expect(matchText('true', 'false')).toHaveLength(1);
    expect(matchText('true', 'true\nmore')).toHaveLength(1);
  });

  it('matches the status, the headers shown and the body', () => {
    const actual =
      'HTTP/1.1 404 Not Found\r\nContent-Type: application/problem+json\r\nRateLimit: "reads";r=9;t=60\r\n\r\n{"code":"not_found","status":404}';
    expect(
      matchHttp(
        'HTTP/1.1 404 Not Found\ncontent-type: application/problem+json\nratelimit: "reads";r=…;t=…\n\n{"code": "not_found"}',
        actual,
      ),
    ).toEqual([]);
    expect(matchHttp('HTTP/1.1 200 OK', actual)).toHaveLength(1);
    expect(matchHttp('HTTP/1.1 404 Not Found\nlink: …', actual)).toHaveLength(1);
    expect(matchHttp('HTTP/1.1 404 Not Found\n\n{"code": "conflict"}', actual)).toHaveLength(1);
  });

  it('dispatches on the output block language', () => {
    const fence = (lang: string, code: string) => ({ lang, code }) as Fence;
    expect(matchOutput(fence('json', '{"ok": true}'), '{"ok": true, "x": 1}')).toEqual([]);
    expect(matchOutput(fence('json', '{"ok": true}'), '{"ok": false}')).toHaveLength(1);
    expect(matchOutput(fence('text', 'signature ok'), 'signature ok\n')).toEqual([]);
  });
});

describe('sessions', () => {
  const cwd = makeTempDir('agentdir-doc-sessions-');
  const steps = (codes: string[]) => codes.map((code, i) => ({ fence: { file: 'x.md', line: i * 10 + 1 } as Fence, code }));

  it('bash: one session, outputs per step, stops at the first failing step', async () => {
    const ok = await runBashSession(steps(['X=1\necho "a$X"', 'echo "b$X"']), { cwd, env: process.env });
    expect(ok.failed).toBeUndefined();
    expect(ok.steps.map((s) => s.output?.trim())).toEqual(['a1', 'b1']);
    const failing = await runBashSession(steps(['echo one', 'false', 'echo three']), { cwd, env: process.env });
    expect(failing.failed?.code).toBe('false');
    expect(failing.steps[2]!.output).toBeUndefined();
  });

  it('python: one namespace, tracebacks name the Markdown line', async () => {
    const ok = await runPythonSession(steps(['x = 2', 'print(x * 21)']), { cwd, env: process.env });
    expect(ok.failed).toBeUndefined();
    expect(ok.steps[1]!.output?.trim()).toBe('42');
    const failing = await runPythonSession(steps(['x = 1', 'assert x == 2']), { cwd, env: process.env });
    expect(failing.failed?.code).toBe('assert x == 2');
    expect(failing.run.stderr).toContain('File "x.md", line 12');
  });

  it('TypeScript: one module, and `// true` claims are checked', async () => {
    const ok = await runTypeScriptSession(steps(['const n: number = 1;', 'n === 1; // true\nconsole.log(n + 1);']), {
      cwd,
      env: process.env,
    });
    expect(ok.failed, ok.run.stderr).toBeUndefined();
    expect(ok.steps[1]!.output?.trim()).toBe('2');
    const failing = await runTypeScriptSession(steps(['const n = 1;', 'n === 2; // true']), { cwd, env: process.env });
    expect(failing.failed).toBeDefined();
    expect(failing.run.stderr).toContain('the example says true, got false');
  });
});
