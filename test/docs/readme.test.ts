import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { waitUntilSettled } from '../helpers/serve-process';
import { exampleEnv, isExecutable, plan, readFences, REPO_ROOT, run, where, type Fence } from './markdown-examples';

/**
 * README.md: its shell blocks start servers and whole test suites, so none runs
 * as a session. The quick start's curl lines run against a live demo server
 * (the address replaced), and the answer the README shows must be the one it
 * gets. The README's links, and those of the other documents, must resolve.
 */

const DOC = 'README.md';

/**
 * Executable README blocks outside the sections these docs own, so without a
 * `<!-- norun -->` comment: named here instead, with why. Each entry must
 * match exactly one block, and every other executable block must be marked.
 */
const NOT_RUN: { firstLine: string; reason: string }[] = [
  { firstLine: 'npm install', reason: 'installs, starts the desktop app and runs every suite: what this suite itself runs under' },
  {
    firstLine: 'npm run serve',
    reason: 'starts a server on the default port until stopped; its curl lines are run below against a live server',
  },
];

const fences = readFences(DOC);
const planned = plan(fences);

function quickStart(): Fence {
  return fences.find((fence) => isExecutable(fence) && fence.code.startsWith('npm run serve'))!;
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ demoData: true });
});
afterAll(async () => {
  await server?.close();
});

describe(`${DOC}: code blocks`, () => {
  it('every executable block is marked norun or named, with a reason, in NOT_RUN', () => {
    const unmarked = fences.filter((fence) => isExecutable(fence) && fence.norun === undefined);
    const named = (fence: Fence) => NOT_RUN.filter((entry) => fence.code.split('\n')[0]!.startsWith(entry.firstLine));
    for (const fence of unmarked) expect(named(fence), `${where(fence)} is neither run nor marked norun`).toHaveLength(1);
    for (const entry of NOT_RUN) {
      expect(
        unmarked.filter((fence) => fence.code.split('\n')[0]!.startsWith(entry.firstLine)),
        `NOT_RUN entry "${entry.firstLine}" matches no README block (any more): remove it`,
      ).toHaveLength(1);
    }
    console.log(
      [
        `${DOC}: ${fences.length} blocks, ${unmarked.length + planned.norun.length} executable, none run as a session:`,
        ...NOT_RUN.map((entry) => `  not run: ${entry.firstLine}…: ${entry.reason}`),
        ...planned.norun.map((fence) => `  norun ${where(fence)}: ${fence.norun}`),
      ].join('\n'),
    );
  });

  it('the quick start: the health answer shown is what a fresh demo server answers, and the search runs', async () => {
    const block = quickStart();
    expect(block, 'the quick start block (npm run serve …)').toBeDefined();
    const lines = block.code.split('\n');
    const curls = lines.filter((line) => line.startsWith('curl '));
    expect(curls.length).toBeGreaterThan(0);
    // The answer shown is that of a settled server (index and caches warmed up).
    await waitUntilSettled(server.origin, 30_000);
    for (const [i, line] of lines.entries()) {
      if (!line.startsWith('curl ')) continue;
      const command = line.split('http://127.0.0.1:8787').join(server.origin);
      const result = await run('bash', ['-c', command], { env: exampleEnv(), timeoutMs: 30_000 });
      expect(result.code, `${where(block)}: ${line}\n${result.stderr}`).toBe(0);
      const answer = JSON.parse(result.stdout) as unknown;
      const shown = /^#\s*(\{.*\})\s*$/.exec(lines[i + 1] ?? '')?.[1];
      if (shown) expect(answer, `${where(block)}: the answer shown after ${line}`).toEqual(JSON.parse(shown));
    }
  });
});

describe('links between the documents', () => {
  const documents = [
    'README.md',
    'docs/api.md',
    'docs/webhooks.md',
    'src-api/modules/webhooks/README.md',
    'clients/python/README.md',
    'clients/typescript/README.md',
  ];

  /** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
  function anchors(markdown: string): Set<string> {
    const seen = new Map<string, number>();
    const result = new Set<string>();
    const withoutCode = markdown.replace(/^([ \t]*)(`{3,}|~{3,})[\s\S]*?^\1\2[ \t]*$/gm, '');
    for (const match of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
      const slug = match[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-');
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      result.add(n === 0 ? slug : `${slug}-${n}`);
    }
    return result;
  }

  for (const document of documents) {
    it(`${document}: every relative link points at a file (and heading) that exists`, () => {
      const text = fs.readFileSync(path.join(REPO_ROOT, document), 'utf8');
      const withoutCode = text.replace(/^([ \t]*)(`{3,}|~{3,})[\s\S]*?^\1\2[ \t]*$/gm, '').replace(/`[^`\n]*`/g, '');
      const broken: string[] = [];
      for (const match of withoutCode.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
        const [file, anchor] = target.split('#') as [string, string | undefined];
        const resolved = file ? path.resolve(path.dirname(path.join(REPO_ROOT, document)), file) : path.join(REPO_ROOT, document);
        if (!fs.existsSync(resolved)) {
          broken.push(`${target}: no such file`);
          continue;
        }
        if (anchor && resolved.endsWith('.md') && !anchors(fs.readFileSync(resolved, 'utf8')).has(anchor)) {
          broken.push(`${target}: no heading #${anchor} in ${path.relative(REPO_ROOT, resolved)}`);
        }
      }
      expect(broken).toEqual([]);
    });
  }

  it('the README links the API walk-through and the webhooks guide', () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('](docs/api.md)');
    expect(readme).toContain('](docs/webhooks.md)');
  });
});
