import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src-api/modules/events/events.table';
import {
  generateWebhookSecret,
  NODE_VERIFY_SNIPPET,
  PYTHON_VERIFY_SNIPPET,
  sampleEvent,
  signStandardWebhook,
  signWebhookBody,
  webhookBody,
} from '../../src-api/modules/webhooks/webhooks.payload';
import { agentInput, startTestServer, type TestServer } from '../helpers/test-server';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver';
import {
  defineStepTests,
  exampleEnv,
  expectAccounted,
  freePort,
  makeScratchDir,
  matchHttp,
  matchJson,
  parseLooseJson,
  plan,
  readFences,
  REPO_ROOT,
  removeScratchDir,
  run,
  runBashSession,
  substitute,
  where,
  type Fence,
  type Plan,
  type SessionResult,
} from './markdown-examples';

/**
 * docs/webhooks.md, against a live server and real deliveries:
 * - the walk-through ("Try it on your machine") runs in one bash session: the
 *   CLI adds an endpoint, the doc's receiver.py (Python client) receives a test
 *   send and a real review.created, openssl and the TypeScript client check the
 *   saved delivery;
 * - the payload example of each event kind and the example request are compared
 *   with real deliveries of that kind, caused as the examples describe them;
 * - the Node and Python verification snippets (the console's, verbatim) run on
 *   every real delivery and must say true, and false for tampered ones;
 * - the known-answer vector is recomputed.
 */

const DOC = 'docs/webhooks.md';
const EXPECTED_NORUN = 2;

const fences = readFences(DOC);
const planned = plan(fences);
/** The payload examples: JSON blocks with an "event" field, not attached to a command. */
const payloadExamples = planned.other.filter((fence) => fence.lang === 'json' && /"event"\s*:/.test(fence.code));
const requestExamples = planned.other.filter((fence) => fence.lang === 'http');

function exampleOf(kind: string): { fence: Fence; value: { data: Record<string, unknown> } } {
  for (const fence of payloadExamples) {
    const value = parseLooseJson(fence.code) as { event: string; data: Record<string, unknown> };
    if (value.event === kind) return { fence, value };
  }
  throw new Error(`${DOC} has no payload example of ${kind}`);
}

let server: TestServer;
let scratch: string | undefined;

afterAll(async () => {
  await server?.close();
  removeScratchDir(scratch);
});

beforeAll(async () => {
  server = await startTestServer({ demoData: true, allowPrivateUrls: true, webhooks: { retryDelaysMs: [200, 500], jitter: 0 } });
  scratch = makeScratchDir('webhooks');
});

describe(`${DOC}: code blocks`, () => {
  it('accounts for every code block', () => {
    // "other" blocks are the payload and request examples, checked against real deliveries below.
    expectAccounted(DOC, planned, EXPECTED_NORUN, { allowOther: true });
    expect(planned.other.filter((fence) => !payloadExamples.includes(fence) && !requestExamples.includes(fence)).map(where)).toEqual([]);
    expect(planned.verifiers.map((fence) => fence.lang).sort()).toEqual(['js', 'python']);
    expect(planned.files.map((fence) => fence.attrs.get('file')).sort()).toEqual(['check-delivery.ts', 'receiver.py']);
  });
});

describe(`${DOC}: try it on your machine`, () => {
  let session: SessionResult;
  let live: Plan;

  beforeAll(async () => {
    const receiverPort = await freePort();
    live = plan(
      substitute(fences, [
        ['http://127.0.0.1:8787', server.origin],
        ['RECEIVER_PORT=9000', `RECEIVER_PORT=${receiverPort}`],
        ['127.0.0.1:9000', `127.0.0.1:${receiverPort}`],
      ]),
    );
    for (const fence of live.files) fs.writeFileSync(path.join(scratch!, fence.attrs.get('file')!), `${fence.code}\n`);
    session = await runBashSession(live.steps, {
      cwd: scratch!,
      // The doc's CLI commands use the default data dir of the server they talk to: here, the test server's.
      env: exampleEnv({ AGENTDIR_DATA_DIR: server.dataDir, PYTHONPATH: path.join(REPO_ROOT, 'clients', 'python', 'src') }),
      timeoutMs: 180_000,
    });
  }, 240_000);

  defineStepTests(planned, () => ({ session, live }));
});

describe(`${DOC}: examples against real deliveries`, () => {
  let receiver: WebhookReceiver;
  let site: http.Server;
  let secret: string;
  const tokens: string[] = [];

  /** Real (not test) deliveries of one kind. */
  const deliveriesOf = (kind: string) => receiver.received.filter((hit) => !hit.isTest && hit.body?.event === kind);

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    const endpoint = await server.services.webhooks.add({ url: receiver.url, events: [] }, { actor: 'docs-test' });
    receiver.secret = secret = endpoint.secret;

    // The owner's web site, for the claim: serves the tokens of the claims made in this test.
    site = http.createServer((request, response) => {
      const found = request.url === '/.well-known/agent-directory-claim.txt';
      response.writeHead(found ? 200 : 404, { 'content-type': 'text/plain' }).end(found ? tokens.join('\n') : 'not found');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

    // Cause each event as its example describes it, with the example's values.
    const services = server.services;
    const registered = exampleOf('agent.registered').value.data as { name: string; source_url: string };
    const submission = await services.submissions.submit(agentInput({ name: registered.name, source_url: registered.source_url }));
    const agentId = (await services.submissions.approve(submission.id, { actor: 'docs-test' })).agent_id!;

    const changed = exampleOf('agent.updated').value.data.changed_fields as string[];
    const patchValues: Record<string, unknown> = {
      name: registered.name,
      tagline: 'Reviews every pull request before your reviewers do',
      description: 'Reads the diff, runs the tests and comments on the pull request.',
      author: 'Example Labs',
      capabilities: ['code-review', 'testing'],
      categories: ['developer-tools'],
      type: 'coding',
    };
    await services.agents.edits.update(agentId, Object.fromEntries(changed.map((field) => [field, patchValues[field]])), {
      actor: 'docs-test',
    });

    const review = exampleOf('review.created').value.data as { rating: number; comment: string; reviewer_name: string };
    await services.reviews.create(agentId, { rating: review.rating, comment: review.comment, reviewer_name: review.reviewer_name });

    // The claim needs a source the test controls: a namesake agent listed on the local site (no event for its listing).
    const claimed = exampleOf('claim.approved').value.data as { claimant_name: string };
    const owned = await services.agents.edits.create(agentInput({ name: registered.name, source_url: `${siteOrigin}/lint-buddy` }), {
      emitEvents: false,
    });
    const claim = await services.claims.create({
      agent_id: owned.id,
      claimant_name: claimed.claimant_name,
      claimant_email: 'owner@example.com',
    });
    tokens.push(claim.verification.token);
    await services.claims.verify(claim.id);

    await receiver.waitFor(
      () => EVENT_TYPES.every((kind) => deliveriesOf(kind).length > 0),
      10_000,
      `a delivery of each kind (${EVENT_TYPES.join(', ')})`,
    );
  });

  afterAll(async () => {
    await receiver?.close();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
  });

  it('documents every event kind', () => {
    const documented = payloadExamples.map((fence) => (parseLooseJson(fence.code) as { event: string }).event);
    expect(documented.sort()).toEqual([...EVENT_TYPES].sort());
  });

  for (const fence of payloadExamples) {
    it(`${where(fence)}: the ${(parseLooseJson(fence.code) as { event: string }).event} example matches a real delivery`, () => {
      const example = parseLooseJson(fence.code) as { event: string };
      const hits = deliveriesOf(example.event);
      expect(hits.length, `no real ${example.event} delivery arrived`).toBeGreaterThan(0);
      const attempts = hits.map((hit) => matchJson(example, hit.body));
      expect(
        attempts.some((problems) => problems.length === 0),
        `no ${example.event} delivery matches ${where(fence)}:\n${attempts.map((problems, i) => `${hits[i]!.rawBody.toString()}\n  ${problems.join('\n  ')}`).join('\n')}`,
      ).toBe(true);
      expect(hits.every((hit) => hit.signatureValid && hit.standardValid)).toBe(true);
    });
  }

  for (const fence of requestExamples) {
    it(`${where(fence)}: the example request matches a real delivery`, () => {
      const kind = /^X-Service-Event:\s*(\S+)/im.exec(fence.code)?.[1];
      expect(kind, 'the example request names its kind in X-Service-Event').toBeTruthy();
      const asText = (hit: ReceivedWebhook) =>
        `${hit.method} ${hit.path} HTTP/1.1\n${Object.entries(hit.headers)
          .map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') : value}`)
          .join('\n')}\n\n${hit.rawBody.toString('utf8')}`;
      const hits = deliveriesOf(kind!);
      const attempts = hits.map((hit) => matchHttp(fence.code, asText(hit)));
      expect(
        attempts.some((problems) => problems.length === 0),
        attempts.map((problems) => problems.join('\n')).join('\n---\n'),
      ).toBe(true);
    });
  }

  /** Every real delivery (true), and variations that must fail: tampered, wrong secret, unsigned, replayed. */
  function cases(): { body: string; headers: Record<string, string>; secret: string; expected: boolean }[] {
    const real = receiver.received.filter((hit) => !hit.isTest);
    const base64 = (buffer: Buffer) => buffer.toString('base64');
    const headersOf = (hit: ReceivedWebhook) => ({
      'webhook-id': String(hit.headers['webhook-id']),
      'webhook-timestamp': String(hit.headers['webhook-timestamp']),
      'webhook-signature': String(hit.headers['webhook-signature']),
    });
    const first = real[0]!;
    const replayedAt = Number(headersOf(first)['webhook-timestamp']) - 600;
    return [
      ...real.map((hit) => ({ body: base64(hit.rawBody), headers: headersOf(hit), secret, expected: true })),
      {
        body: base64(Buffer.from(first.rawBody.toString().replace('"event"', '"event" '))),
        headers: headersOf(first),
        secret,
        expected: false,
      },
      { body: base64(first.rawBody), headers: headersOf(first), secret: generateWebhookSecret(), expected: false },
      { body: base64(first.rawBody), headers: { ...headersOf(first), 'webhook-signature': '' }, secret, expected: false },
      { body: base64(first.rawBody), headers: { ...headersOf(first), 'webhook-signature': 'v1,deadbeef' }, secret, expected: false },
      {
        body: base64(first.rawBody),
        headers: {
          ...headersOf(first),
          'webhook-timestamp': String(replayedAt),
          'webhook-signature': signStandardWebhook(secret, first.eventId!, replayedAt, first.rawBody),
        },
        secret,
        expected: false,
      },
    ];
  }

  const verifier = (lang: string) => planned.verifiers.find((fence) => fence.lang === lang)!;

  it('the verification snippets are the ones the console shows', () => {
    expect(verifier('js').code.trim()).toBe(NODE_VERIFY_SNIPPET.trim());
    expect(verifier('python').code.trim()).toBe(PYTHON_VERIFY_SNIPPET.trim());
  });

  it(`the Node snippet (node) accepts every real delivery and refuses tampered ones`, async () => {
    const dir = fs.mkdtempSync(path.join(scratch!, 'node-'));
    fs.writeFileSync(path.join(dir, 'verify.mjs'), verifier('js').code);
    fs.writeFileSync(path.join(dir, 'cases.json'), JSON.stringify(cases()));
    fs.writeFileSync(
      path.join(dir, 'harness.mjs'),
      `import fs from 'node:fs';
import { verifyWebhook } from './verify.mjs';
const cases = JSON.parse(fs.readFileSync('cases.json', 'utf8'));
console.log(JSON.stringify(cases.map((c) => verifyWebhook(Buffer.from(c.body, 'base64'), c.headers, c.secret))));
`,
    );
    const result = await run(process.execPath, ['harness.mjs'], { cwd: dir, env: process.env, timeoutMs: 30_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(cases().map((c) => c.expected));
  });

  it(`the Python snippet (python3) accepts every real delivery and refuses tampered ones`, async () => {
    const dir = fs.mkdtempSync(path.join(scratch!, 'python-'));
    fs.writeFileSync(path.join(dir, 'cases.json'), JSON.stringify(cases()));
    const harness = `${verifier('python').code}

import base64, json
cases = json.load(open("cases.json"))
print(json.dumps([verify_webhook(base64.b64decode(c["body"]), c["headers"], c["secret"]) for c in cases]))
`;
    const result = await run('python3', ['-c', harness], { cwd: dir, env: process.env, timeoutMs: 30_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(cases().map((c) => c.expected));
  });
});

describe(`${DOC}: known-answer vector`, () => {
  const text = fs.readFileSync(path.join(REPO_ROOT, DOC), 'utf8');
  const step = planned.steps.find((s) => s.code.includes('VECTOR_SECRET='))!;
  const secret = /VECTOR_SECRET='([^']+)'/.exec(step?.code ?? '')?.[1] ?? '';
  const body = /VECTOR_BODY='([^']+)'/.exec(step?.code ?? '')?.[1] ?? '';
  const [hex = '', standard = ''] = (step?.expected?.code.trim() ?? '').split('\n');
  const standardTimestamp = Number(/evt_sample_agent_registered\.(\d+)\./.exec(step?.code ?? '')?.[1]);

  it('is the agent.registered test send, signed as the server signs it', () => {
    expect(step, 'the vector block (VECTOR_SECRET=…)').toBeDefined();
    expect(body).toBe(webhookBody(sampleEvent('agent.registered')));
    expect(signWebhookBody(secret, body)).toBe(`sha256=${hex}`);
    expect(createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(body, 'utf8')).digest('hex')).toBe(hex);
    // webhook-signature, as the server and the official package compute it.
    expect(signStandardWebhook(secret, 'evt_sample_agent_registered', standardTimestamp, body)).toBe(standard);
    expect(new Webhook(secret).sign('evt_sample_agent_registered', new Date(standardTimestamp * 1000), body)).toBe(standard);
    // The secret is whsec_ + base64 (no padding) of the bytes 0x00…0x1f, as the text says.
    expect(secret).toBe(
      `whsec_${Buffer.from(Array.from({ length: 32 }, (_, i) => i))
        .toString('base64')
        .replace(/=+$/, '')}`,
    );
  });

  it('the prose states the same vector as the example, and so does the module README', () => {
    const moduleReadme = fs.readFileSync(path.join(REPO_ROOT, 'src-api/modules/webhooks/README.md'), 'utf8');
    for (const document of [text, moduleReadme]) {
      expect(document).toContain(`\`${secret}\``);
      expect(document).toContain(`\`${body}\``);
      expect(document).toContain(`\`sha256=${hex}\``);
      expect(document).toContain(`\`${standard}\``);
      expect(document).toContain(`\`${standardTimestamp}\``);
    }
  });

  it('the module README sends receivers here', () => {
    const moduleReadme = fs.readFileSync(path.join(REPO_ROOT, 'src-api/modules/webhooks/README.md'), 'utf8');
    expect(moduleReadme).toMatch(/\]\((\.\.\/)+docs\/webhooks\.md/);
  });
});
