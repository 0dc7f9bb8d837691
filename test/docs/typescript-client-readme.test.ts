import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  defineStepTests,
  exampleEnv,
  expectAccounted,
  makeScratchDir,
  plan,
  readFences,
  removeScratchDir,
  runTypeScriptSession,
  startClientExampleServer,
  substitute,
  type ClientExampleServer,
  type Plan,
  type SessionResult,
} from './markdown-examples';

/**
 * clients/typescript/README.md: the TypeScript blocks not marked norun run as
 * one ES module with `node --import tsx` (no bundler needed), with
 * `@agent-directory/client` resolving to clients/typescript/src as if the
 * package were installed, against a live demo server that also lists the
 * agents the examples name (agt_123, …) and publishes claim tokens for them.
 * A statement ending in `// true` or `// false` is checked to be that value.
 */

const DOC = 'clients/typescript/README.md';
/** The in-repository import path, the tarball install, the long-running receiver, the schema regeneration. */
const EXPECTED_NORUN = 4;

const fences = readFences(DOC);
const planned = plan(fences);

let example: ClientExampleServer;
let scratch: string | undefined;
let session: SessionResult;
let live: Plan;

beforeAll(async () => {
  example = await startClientExampleServer();
  scratch = makeScratchDir('typescript-readme');
  live = plan(substitute(fences, [['http://127.0.0.1:8787', example.server.origin]]));
  session = await runTypeScriptSession(live.steps, { cwd: scratch, env: exampleEnv(), timeoutMs: 120_000 });
}, 180_000);

afterAll(async () => {
  await example?.close();
  removeScratchDir(scratch);
});

describe(`${DOC}: every example runs`, () => {
  it('accounts for every code block: run (TypeScript) or marked norun', () => {
    expectAccounted(DOC, planned, EXPECTED_NORUN);
    expect(planned.steps.map((step) => step.fence.lang).every((lang) => lang === 'ts')).toBe(true);
  });

  it('checks the `// true` and `// false` claims of the known-answer vector', () => {
    const claims = planned.steps.flatMap((step) => step.code.split('\n')).filter((line) => /;\s*\/\/\s*(true|false)\b/.test(line));
    expect(claims.length).toBeGreaterThanOrEqual(2);
  });

  defineStepTests(planned, () => ({ session, live }));
});
