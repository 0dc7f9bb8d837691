import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  defineStepTests,
  exampleEnv,
  expectAccounted,
  makeScratchDir,
  plan,
  readFences,
  removeScratchDir,
  REPO_ROOT,
  runPythonSession,
  startClientExampleServer,
  substitute,
  type ClientExampleServer,
  type Plan,
  type SessionResult,
} from './markdown-examples';

/**
 * clients/python/README.md: every Python block that is not marked norun runs,
 * in order, in one interpreter (as a reader pasting them would), with
 * PYTHONPATH=clients/python/src, against a live demo server that also lists the
 * agents the examples name (agt_123, …) and publishes claim tokens for them.
 */

const DOC = 'clients/python/README.md';
/** The installs, the test-suite command, and two fragments (each says why in its norun comment). */
const EXPECTED_NORUN = 5;

const fences = readFences(DOC);
const planned = plan(fences);

let example: ClientExampleServer;
let scratch: string | undefined;
let session: SessionResult;
let live: Plan;

beforeAll(async () => {
  example = await startClientExampleServer();
  scratch = makeScratchDir('python-readme');
  live = plan(substitute(fences, [['http://127.0.0.1:8787', example.server.origin]]));
  session = await runPythonSession(live.steps, {
    cwd: scratch,
    env: exampleEnv({ PYTHONPATH: path.join(REPO_ROOT, 'clients', 'python', 'src') }),
    timeoutMs: 120_000,
  });
}, 180_000);

afterAll(async () => {
  await example?.close();
  removeScratchDir(scratch);
});

describe(`${DOC}: every example runs`, () => {
  it('accounts for every code block: run (Python) or marked norun', () => {
    expectAccounted(DOC, planned, EXPECTED_NORUN);
    expect(planned.steps.map((step) => step.fence.lang).every((lang) => lang === 'python')).toBe(true);
  });

  defineStepTests(planned, () => ({ session, live }));

  it('the examples did what their comments say', () => {
    const output = session.steps.map((step) => step.output ?? '').join('\n');
    expect(output).toContain("['agt_1', 'agt_2'] ['nope']"); // client.bulk([...]): found and missing, in request order
    expect(output).toMatch(/^verified$/m); // client.get_claim(claim.id).status after verify_claim
    expect(output).toContain('validation_failed'); // the Errors example: add_review with a rating of 7
  });
});
