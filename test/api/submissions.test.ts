import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError, StaleVersionError, TooManyIdsError, ValidationError } from '../../src-api/errors';
import { REJECTION_REASON_TEMPLATES, rejectionReasonSchema } from '../../src-api/modules/submissions/submissions.schemas';
import { countRows } from '../helpers/store-rows';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';

let server: TestServer;
let seq = 0;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A minimal valid submission with a source no other test uses. */
function submissionBody(overrides: Record<string, unknown> = {}) {
  seq++;
  return {
    name: `Submitted Agent ${seq}`,
    tagline: 'Does useful things',
    source_url: `https://github.com/example/agent-${seq}`,
    ...overrides,
  };
}

async function submit(body: unknown = submissionBody()) {
  const response = await server.post('/submit', body);
  expect(response.status).toBe(201);
  return json(response);
}

const rowCount = (table: string) => countRows(server.services.store, table);

const writeCounts = async () => ({
  submissions: await rowCount('submissions'),
  agents: await rowCount('agents'),
  events: await rowCount('events'),
  audit: await rowCount('audit_log'),
});

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('POST /submit', () => {
  it('files a submission: 201, pending, every submitted field echoed except the contact address', async () => {
    const body = {
      name: 'Changelog Writer',
      tagline: 'Writes release notes from merged pull requests',
      source_url: 'https://github.com/example/changelog-writer',
      description: 'Reads the merged pull requests of a release and drafts the notes.',
      author: 'Example Labs',
      capabilities: ['summarization', 'git'],
      categories: ['developer-tools'],
      type: 'writing',
      contact_email: 'maintainer@example.com',
    };
    const response = await server.post('/submit', body);

    expect(response.status).toBe(201);
    const submission = await json(response);
    expect(submission).toEqual({
      id: expect.stringMatching(/^sub_[a-z0-9]+$/),
      status: 'pending',
      name: body.name,
      tagline: body.tagline,
      source_url: body.source_url,
      description: body.description,
      author: body.author,
      capabilities: body.capabilities,
      categories: body.categories,
      type: 'writing',
      created_at: expect.stringMatching(ISO_UTC),
      updated_at: submission.created_at,
    });
    expect(response.headers.get('location')).toBe(`/api/v1/submissions/${submission.id}`);
    // Kept for the moderators only.
    expect((await server.services.submissions.get(submission.id)).contact_email).toBe('maintainer@example.com');
  });

  it('fills the optional fields with the defaults of a listed agent', async () => {
    const body = submissionBody();
    const submission = await submit(body);
    expect(submission).toMatchObject({ ...body, description: '', author: '', capabilities: [], categories: [], type: 'other' });
    expect((await server.services.submissions.get(submission.id)).contact_email).toBeNull();
  });

  it('409s the source of a listed agent, however it is spelt, naming the agent, and writes nothing', async () => {
    const agent = await server.services.agents.edits.create(
      agentInput({ name: 'Listed Agent', source_url: 'https://github.com/example/listed' }),
      {
        emitEvents: false,
      },
    );
    const before = await writeCounts();
    for (const spelling of [
      'https://github.com/example/listed',
      'http://www.GitHub.com/example/listed/',
      'https://github.com/example/listed.git',
    ]) {
      const response = await server.post('/submit', submissionBody({ source_url: spelling }));
      expect(response.status).toBe(409);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      const problem = await json(response);
      expect(problem).toMatchObject({ status: 409, code: 'conflict' });
      expect(problem.detail).toContain(agent.id);
    }
    expect(await writeCounts()).toEqual(before);
  });

  it('409s the source of a pending submission, naming it, and writes nothing', async () => {
    const body = submissionBody();
    const first = await submit(body);
    const before = await writeCounts();

    const response = await server.post('/submit', { ...body, source_url: `${body.source_url}/`, name: 'Someone else' });

    expect(response.status).toBe(409);
    const problem = await json(response);
    expect(problem.code).toBe('conflict');
    expect(problem.detail).toContain(first.id);
    expect(await writeCounts()).toEqual(before);
  });

  it('accepts the source of a rejected submission again', async () => {
    const body = submissionBody();
    const first = await submit(body);
    await server.services.submissions.reject(first.id, 'Please describe it better', { actor: 'mod' });
    const again = await submit(body);
    expect(again.id).not.toBe(first.id);
  });

  it.each([
    ['no name', { name: undefined }, '/name'],
    ['no tagline', { tagline: undefined }, '/tagline'],
    ['an empty name', { name: '   ' }, '/name'],
    ['a name of 121 characters', { name: 'n'.repeat(121) }, '/name'],
    ['a relative source_url', { source_url: '/agents/mine' }, '/source_url'],
    ['an unknown type', { type: 'robot' }, '/type'],
    ['capabilities as a string', { capabilities: 'search' }, '/capabilities'],
    ['an invalid contact_email', { contact_email: 'not-an-email' }, '/contact_email'],
    ['an unknown field', { website: 'https://example.com' }, '/'],
  ])('400s %s and writes nothing', async (_name, overrides, pointer) => {
    const before = await writeCounts();
    const response = await server.post('/submit', submissionBody(overrides));
    expect(response.status).toBe(400);
    const problem = await json(response);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer);
    expect(await writeCounts()).toEqual(before);
  });
});

describe('GET /submissions/{id}', () => {
  it('answers the pending submission as it was filed, without the contact address', async () => {
    const created = await submit(submissionBody({ contact_email: 'private@example.com' }));
    const response = await server.api(`/submissions/${created.id}`);
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toEqual(created);
    expect(JSON.stringify(body)).not.toContain('private@example.com');
  });

  it('shows the listed agent once approved', async () => {
    const created = await submit(submissionBody({ contact_email: 'private@example.com' }));
    const approved = await server.services.submissions.approve(created.id, { actor: 'moderator@example.com' });

    const body = await json(await server.api(`/submissions/${created.id}`));
    expect(body).toEqual({
      ...created,
      status: 'approved',
      agent_id: approved.agent_id,
      updated_at: expect.stringMatching(ISO_UTC),
      decided_at: expect.stringMatching(ISO_UTC),
    });
    expect(JSON.stringify(body)).not.toMatch(/private@example\.com|moderator@example\.com/);
  });

  it("shows the moderator's reason once rejected", async () => {
    const created = await submit();
    await server.services.submissions.reject(created.id, '  Not an agent.  ', { actor: 'mod' });

    const body = await json(await server.api(`/submissions/${created.id}`));
    expect(body).toMatchObject({ id: created.id, status: 'rejected', reason: 'Not an agent.', decided_at: expect.stringMatching(ISO_UTC) });
    expect(body).not.toHaveProperty('agent_id');
  });

  it('404s an unknown id and 400s a malformed one', async () => {
    const unknown = await server.api('/submissions/sub_missing');
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).code).toBe('not_found');
    expect((await server.api('/submissions/a%20b')).status).toBe(400);
  });
});

describe('approving', () => {
  it('lists the agent, records agent.registered, and audits, in one go', async () => {
    const body = submissionBody({
      description: 'A fine agent.',
      author: 'Ann',
      capabilities: ['search'],
      categories: ['research'],
      type: 'research',
    });
    const created = await submit(body);

    const approved = await server.services.submissions.approve(created.id, { actor: 'moderator@example.com', expectedVersion: 1 });

    expect(approved).toMatchObject({
      id: created.id,
      status: 'approved',
      agent_id: expect.any(String),
      decided_by: 'moderator@example.com',
      decided_at: expect.stringMatching(ISO_UTC),
      version: 2,
    });
    const agentId = approved.agent_id!;
    const profile = await json(await server.api(`/agents/${agentId}`));
    expect(profile).toMatchObject({ ...body, verified: false, rating: { average: null, count: 0 } });

    const registered = (await server.services.events.listRecent(1000)).filter(
      (event) => event.type === 'agent.registered' && event.data.agent_id === agentId,
    );
    expect(registered).toHaveLength(1);
    expect(registered[0]!.data).toEqual({ agent_id: agentId, name: body.name, source_url: body.source_url });

    const submissionAudit = (await server.services.audit.list({ page: 1, limit: 10, entityType: 'submission', entityId: created.id }))
      .items;
    expect(submissionAudit).toHaveLength(1);
    expect(submissionAudit[0]).toMatchObject({
      actor: 'moderator@example.com',
      action: 'submission.approve',
      before: expect.objectContaining({ status: 'pending', version: 1 }),
      after: expect.objectContaining({ status: 'approved', agent_id: agentId, version: 2 }),
    });
    const agentAudit = (await server.services.audit.list({ page: 1, limit: 10, entityType: 'agent', entityId: agentId })).items;
    expect(agentAudit.map((entry) => [entry.actor, entry.action])).toEqual([['moderator@example.com', 'agent.create']]);
  });

  it('conflicts when the submission is no longer pending', async () => {
    const created = await submit();
    await server.services.submissions.approve(created.id, { actor: 'mod' });
    const before = await writeCounts();

    await expect(server.services.submissions.approve(created.id, { actor: 'mod' })).rejects.toThrow(ConflictError);
    await expect(server.services.submissions.reject(created.id, 'Too late', { actor: 'mod' })).rejects.toThrow(ConflictError);
    expect(await writeCounts()).toEqual(before);
  });

  it('refuses a stale version and writes nothing', async () => {
    const created = await submit();
    const before = await writeCounts();

    await expect(server.services.submissions.approve(created.id, { actor: 'mod', expectedVersion: 7 })).rejects.toThrow(StaleVersionError);
    await expect(server.services.submissions.reject(created.id, 'No', { actor: 'mod', expectedVersion: 0 })).rejects.toThrow(
      StaleVersionError,
    );

    expect(await writeCounts()).toEqual(before);
    expect(await server.services.submissions.get(created.id)).toMatchObject({ status: 'pending', version: 1 });
  });

  it('conflicts, naming the agent, when the source got listed meanwhile, and rolls everything back', async () => {
    const body = submissionBody();
    const created = await submit(body);
    const agent = await server.services.agents.edits.create(agentInput({ name: 'Imported meanwhile', source_url: body.source_url }), {
      emitEvents: false,
    });
    const before = await writeCounts();

    let thrown: unknown;
    try {
      await server.services.submissions.approve(created.id, { actor: 'mod' });
    } catch (error) {
      thrown = error;
    }

    expect(thrown).toBeInstanceOf(ConflictError);
    expect((thrown as ConflictError).detail).toContain(agent.id);
    expect(await writeCounts()).toEqual(before);
    expect((await server.services.submissions.get(created.id)).status).toBe('pending');
  });

  it('throws NotFoundError for an unknown submission', async () => {
    await expect(server.services.submissions.approve('sub_missing', { actor: 'mod' })).rejects.toThrow(NotFoundError);
  });
});

describe('rejecting', () => {
  it('marks it rejected with the reason and audits it, without an event or an agent', async () => {
    const created = await submit();
    const before = await writeCounts();

    const rejected = await server.services.submissions.reject(created.id, REJECTION_REASON_TEMPLATES[0].reason, {
      actor: 'mod',
      expectedVersion: 1,
    });

    expect(rejected).toMatchObject({ status: 'rejected', reason: REJECTION_REASON_TEMPLATES[0].reason, decided_by: 'mod', version: 2 });
    expect(rejected).not.toHaveProperty('agent_id');
    expect(await writeCounts()).toEqual({ ...before, audit: before.audit + 1 });
    const [entry] = (await server.services.audit.list({ page: 1, limit: 10, entityType: 'submission', entityId: created.id })).items;
    expect(entry).toMatchObject({
      actor: 'mod',
      action: 'submission.reject',
      before: expect.objectContaining({ status: 'pending' }),
      after: expect.objectContaining({ status: 'rejected', reason: REJECTION_REASON_TEMPLATES[0].reason }),
    });
  });

  it('requires a reason of 1 to 1,000 characters', async () => {
    const created = await submit();
    const before = await writeCounts();
    for (const reason of ['', '   ', 'r'.repeat(1001)]) {
      await expect(server.services.submissions.reject(created.id, reason, { actor: 'mod' })).rejects.toThrow(ValidationError);
    }
    expect(await writeCounts()).toEqual(before);
    expect((await server.services.submissions.reject(created.id, 'r'.repeat(1000), { actor: 'mod' })).status).toBe('rejected');
  });

  it('offers reason templates that are valid reasons', () => {
    expect(REJECTION_REASON_TEMPLATES.map((template) => template.id)).toEqual(
      expect.arrayContaining(['duplicate', 'source_unreachable', 'not_an_agent', 'insufficient_description', 'spam']),
    );
    for (const template of REJECTION_REASON_TEMPLATES) {
      expect(template.label.length).toBeGreaterThan(0);
      expect(rejectionReasonSchema.safeParse(template.reason).success).toBe(true);
    }
  });
});

describe('bulk decisions', () => {
  it('approves each pending id and reports the others by error code', async () => {
    const first = await submit();
    const second = await submit();
    const decided = await submit();
    await server.services.submissions.reject(decided.id, 'Spam', { actor: 'mod' });

    const results = await server.services.submissions.bulkApprove([first.id, second.id, decided.id, 'sub_missing', first.id], 'mod');

    expect(results).toEqual([
      { id: first.id, ok: true, status: 'approved', agent_id: expect.any(String) },
      { id: second.id, ok: true, status: 'approved', agent_id: expect.any(String) },
      { id: decided.id, ok: false, code: 'conflict', detail: expect.stringContaining('rejected') },
      { id: 'sub_missing', ok: false, code: 'not_found', detail: expect.any(String) },
    ]);
    const agentIds = results.flatMap((result) => (result.ok && result.agent_id ? [result.agent_id] : []));
    expect(agentIds).toHaveLength(2);
    for (const agentId of agentIds) expect((await server.api(`/agents/${agentId}`)).status).toBe(200);
  });

  it('rejects each pending id with one reason', async () => {
    const first = await submit();
    const approved = await submit();
    await server.services.submissions.approve(approved.id, { actor: 'mod' });

    const results = await server.services.submissions.bulkReject([first.id, approved.id], 'Spam', 'mod');

    expect(results).toEqual([
      { id: first.id, ok: true, status: 'rejected' },
      { id: approved.id, ok: false, code: 'conflict', detail: expect.any(String) },
    ]);
    expect(await server.services.submissions.get(first.id)).toMatchObject({ status: 'rejected', reason: 'Spam' });
  });

  it('refuses an empty reason or too many ids before touching anything', async () => {
    const created = await submit();
    const before = await writeCounts();
    await expect(server.services.submissions.bulkReject([created.id], ' ', 'mod')).rejects.toThrow(ValidationError);
    const tooMany = Array.from({ length: 101 }, (_, i) => `sub_${i}`);
    await expect(server.services.submissions.bulkApprove(tooMany, 'mod')).rejects.toThrow(TooManyIdsError);
    expect(await writeCounts()).toEqual(before);
  });
});

describe('the moderation queue', () => {
  it('lists newest first, filters by status and by text, and counts pending', async () => {
    const marker = `queue-${Date.now()}`;
    const older = await submit(submissionBody({ name: `Alpha ${marker}` }));
    const newer = await submit(submissionBody({ tagline: `Tagline with ${marker.toUpperCase()} in it` }));
    const bySource = await submit(submissionBody({ source_url: `https://example.org/${marker}` }));
    await server.services.submissions.reject(older.id, 'Spam', { actor: 'mod' });
    const { submissions } = server.services;

    const all = await submissions.list({ page: 1, limit: 20, q: marker });
    expect(all.items.map((s) => s.id)).toEqual([bySource.id, newer.id, older.id]);
    expect(all.total).toBe(3);
    expect(all.items[0]).toHaveProperty('contact_email');

    const pending = await submissions.list({ page: 1, limit: 20, q: marker, status: 'pending' });
    expect(pending.items.map((s) => s.id)).toEqual([bySource.id, newer.id]);

    const secondPage = await submissions.list({ page: 2, limit: 2, q: marker });
    expect(secondPage).toMatchObject({ page: 2, limit: 2, total: 3 });
    expect(secondPage.items.map((s) => s.id)).toEqual([older.id]);

    expect(await submissions.countPending()).toBe((await submissions.list({ page: 1, limit: 1, status: 'pending' })).total);
  });

  it('treats % and _ in the search text literally', async () => {
    const marker = `pct-${Date.now()}`;
    const literal = await submit(submissionBody({ name: `100% ${marker}` }));
    await submit(submissionBody({ name: `1000 ${marker}` }));
    expect((await server.services.submissions.list({ page: 1, limit: 20, q: `100% ${marker}` })).items.map((s) => s.id)).toEqual([
      literal.id,
    ]);
    expect((await server.services.submissions.list({ page: 1, limit: 20, q: `10_ ${marker}` })).total).toBe(0);
  });
});
