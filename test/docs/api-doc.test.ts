import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  defineStepTests,
  exampleEnv,
  expectAccounted,
  freePort,
  makeScratchDir,
  plan,
  readFences,
  removeScratchDir,
  runBashSession,
  substitute,
  type Plan,
  type SessionResult,
} from './markdown-examples';

/**
 * docs/api.md is one walk-through: every bash block runs, in order, in one
 * `bash -e` session against a fresh server with the demo directory and the
 * default rate limits (as `npm run serve -- --allow-private-urls` on a new data
 * dir), and each output is checked against the block that follows it.
 */

const DOC = 'docs/api.md';
/** Blocks of docs/api.md that are deliberately not run (each says why in its norun comment). */
const EXPECTED_NORUN = 1;

const fences = readFences(DOC);
const planned = plan(fences);

let server: TestServer;
let scratch: string | undefined;
let session: SessionResult;
let live: Plan;

beforeAll(async () => {
  server = await startTestServer({ demoData: true, allowPrivateUrls: true, rateLimit: { enabled: true } });
  scratch = makeScratchDir('api');
  const sitePort = await freePort();
  live = plan(
    substitute(fences, [
      ['http://127.0.0.1:8787', server.origin],
      ['/tmp/agentdir-demo', server.dataDir],
      ['SITE_PORT=8000', `SITE_PORT=${sitePort}`],
      ['127.0.0.1:8000', `127.0.0.1:${sitePort}`],
    ]),
  );
  session = await runBashSession(live.steps, { cwd: scratch, env: exampleEnv(), timeoutMs: 240_000 });
}, 300_000);

afterAll(async () => {
  await server?.close();
  removeScratchDir(scratch);
});

describe(`${DOC}: every example runs`, () => {
  it('accounts for every code block: run, checked as output, or marked norun', () => {
    expectAccounted(DOC, planned, EXPECTED_NORUN);
    expect(planned.files.length + planned.verifiers.length, 'file= and verifier blocks have no runner in this document').toBe(0);
    expect(planned.steps.every((step) => step.fence.lang === 'bash')).toBe(true);
  });

  defineStepTests(planned, () => ({ session, live }));
});

describe(`${DOC}: covers the whole API`, () => {
  /** "GET /agents/{}" for each curl command of the examples ({} for a path segment that is a shell variable). */
  function documentedOperations(): Set<string> {
    const operations = new Set<string>();
    for (const step of planned.steps) {
      const commands = step.code.replace(/\\\n/g, ' ').split(/\n|\|/);
      for (const command of commands) {
        if (!/\bcurl\b/.test(command)) continue;
        const url = /"\$BASE(\/[^"?\s]*)/.exec(command);
        if (!url) continue;
        const method = /-X\s+([A-Z]+)/.exec(command)?.[1] ?? 'GET';
        operations.add(`${method} ${url[1]!.replace(/\$[A-Z_]+|\$\([^)]*\)/g, '{}')}`);
      }
    }
    return operations;
  }

  it('has a curl example of every operation of the OpenAPI document, of /openapi.json and of /docs', async () => {
    const document = (await (await server.api('/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path.replace(/^\/api\/v1/, '')}`),
    );
    operations.push('GET /openapi.json', 'GET /docs');
    const documented = [...documentedOperations()];
    const covered = (operation: string) => {
      const [method, path] = operation.split(' ') as [string, string];
      const template = new RegExp(`^${method} ${path.replace(/\{[^}]+\}/g, '[^/]+').replace(/\./g, '\\.')}$`);
      return documented.some((example) => template.test(example));
    };
    expect(
      operations.filter((operation) => !covered(operation)),
      `documented: ${documented.join(', ')}`,
    ).toEqual([]);
  });
});
