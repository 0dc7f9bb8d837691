import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src-api/db/open-store';
import { createServices } from '../../src-api/services';
import { agentInput, json, startTestServer, type TestServer } from '../helpers/test-server';
import { backgroundJobs } from '../helpers/serve-process';
import { untilSeen } from '../helpers/change-seen';

let server: TestServer;

interface Hit {
  id: string;
  name: string;
  type: string;
  trust_score: number;
  capabilities: string[];
  score: number;
}

const DIRECTORY = [
  {
    id: 'code-reviewer',
    name: 'Code Reviewer',
    tagline: 'Reviews pull requests',
    description: 'Reviews pull requests and suggests fixes for Python and TypeScript code bases, with a focus on correctness.',
    author: 'Acme Labs',
    capabilities: ['code-review', 'Python'],
    categories: ['developer-tools', 'quality'],
    type: 'coding',
    verified: true,
  },
  {
    id: 'reviewer-pro',
    name: 'Reviewer Pro',
    tagline: 'The code reviewer for code reviewer teams',
    description: 'code reviewer code reviewer code reviewer',
    author: 'Other Co',
    capabilities: ['code-review'],
    categories: ['developer-tools'],
    type: 'coding',
  },
  {
    id: 'kubernetes-deployer',
    name: 'Kubernetes Deployer',
    tagline: 'Ships containers to clusters',
    description: 'Deploys containers to Kubernetes clusters with Terraform-managed infrastructure and safe, automatic rollbacks.',
    author: 'ACME labs',
    capabilities: ['kubernetes', 'terraform'],
    categories: ['devops', 'Developer-Tools'],
    type: 'devops',
    verified: true,
  },
  {
    id: 'invoice-extractor',
    name: 'Invoice Extractor',
    tagline: 'Reads invoices',
    description: 'Extracts totals, dates and line items from scanned invoices using OCR.',
    author: 'Ledger Works',
    capabilities: ['ocr', 'pdf-parsing'],
    categories: ['finance'],
    type: 'data',
  },
  {
    id: 'paper-digest',
    name: 'Paper Digest',
    tagline: 'Summaries of research papers',
    description: 'Finds and condenses research papers.',
    author: 'Paper Trail',
    capabilities: ['summarization', 'web-search'],
    categories: ['research'],
    type: 'research',
  },
  {
    id: 'security-auditor',
    name: 'Security Auditor',
    tagline: 'Finds vulnerabilities',
    description: 'Scans Python services for vulnerabilities.',
    author: 'Redteam Collective',
    capabilities: ['vulnerability-scanning', 'python'],
    categories: ['security', 'quality'],
    type: 'security',
  },
  {
    id: 'python-tutor',
    name: 'Python Tutor',
    tagline: 'Teaches Python',
    description: 'Explains Python step by step.',
    author: 'Learnwell',
    capabilities: ['python', 'teaching'],
    categories: ['education'],
    type: 'education',
  },
];

beforeAll(async () => {
  server = await startTestServer();
  const { agents } = server.services;
  for (const { id, verified, ...fields } of DIRECTORY) {
    await agents.edits.create(agentInput(fields), { id, emitEvents: false });
    if (verified) await agents.edits.setVerified(id, true, { emitEvents: false });
  }
});
afterAll(() => server.close());

async function searchGet(params: Record<string, string>): Promise<{ query: string; agents: Hit[]; total: number }> {
  const response = await server.api(`/agents/search?${new URLSearchParams(params)}`);
  expect(response.status).toBe(200);
  return json(response);
}

async function searchPost(body: Record<string, unknown>): Promise<{ query: string; agents: Hit[]; total: number }> {
  const response = await server.post('/agents/search', body);
  expect(response.status).toBe(200);
  return json(response);
}

const ids = (hits: { id: string }[]) => hits.map((hit) => hit.id);
const top5 = async (q: string) => ids((await searchGet({ q, limit: '5' })).agents);

describe('GET /agents/search', () => {
  it('answers on the static route, not as the agent "search"', async () => {
    const body = await searchGet({ q: 'reviewer' });
    expect(Object.keys(body).sort()).toEqual(['agents', 'limit', 'page', 'query', 'total']);
    expect(body.query).toBe('reviewer');
    expect(body.agents[0]).toMatchObject({ id: expect.any(String), score: expect.any(Number), rating: { average: null, count: 0 } });
  });

  it('ranks an exact name first, above agents that repeat its words', async () => {
    const body = await searchGet({ q: 'Code Reviewer' });
    expect(body.agents[0]!.id).toBe('code-reviewer');
    expect(ids(body.agents)).toContain('reviewer-pro');
    const scores = body.agents.map((hit) => hit.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('tolerates one and two typos in names and capabilities', async () => {
    expect(await top5('kubernetis')).toContain('kubernetes-deployer'); // one substitution
    expect(await top5('kubrenetis')).toContain('kubernetes-deployer'); // a swap and a substitution
    expect(await top5('invocie')).toContain('invoice-extractor'); // adjacent swap
    expect(await top5('sumarizaton')).toContain('paper-digest'); // two deletions in a capability
    expect(await top5('vulnerabilty')).toContain('security-auditor');
  });

  it('completes prefixes', async () => {
    expect((await top5('kuber'))[0]).toBe('kubernetes-deployer');
    expect((await top5('summar'))[0]).toBe('paper-digest');
  });

  it('matches other forms of a word', async () => {
    expect(await top5('deployment')).toContain('kubernetes-deployer'); // "Deploys containers"
    expect(await top5('deploying')).toContain('kubernetes-deployer');
    expect(await top5('extraction')).toContain('invoice-extractor');
  });

  it('searches authors, case-insensitively', async () => {
    expect((await top5('ledger works'))[0]).toBe('invoice-extractor');
    const acme = await searchGet({ q: 'acme' });
    expect(ids(acme.agents).sort()).toEqual(['code-reviewer', 'kubernetes-deployer']);
    expect(acme.total).toBe(2);
  });

  it('returns only agents matching every word when there are some, best match first', async () => {
    const both = await searchGet({ q: 'python security' });
    expect(ids(both.agents)).toEqual(['security-auditor']);
    expect(both.total).toBe(1);
    expect((await top5('python teaching explains'))[0]).toBe('python-tutor');
  });

  it('falls back to agents matching any word, those matching more first', async () => {
    const body = await searchGet({ q: 'python zzqxjw' });
    expect(ids(body.agents)).toEqual(expect.arrayContaining(['code-reviewer', 'security-auditor', 'python-tutor']));
    expect(body.total).toBe(body.agents.length);
    const partial = await searchGet({ q: 'python tutor zzqxjw' });
    expect(partial.agents[0]!.id).toBe('python-tutor'); // two of three words
    expect(Math.floor(partial.agents[0]!.score)).toBe(2);
    expect(Math.floor(partial.agents.at(-1)!.score)).toBe(1);
  });

  it('lists every agent by trust score when there is no query, and counts all matches in total', async () => {
    const all = await searchGet({});
    expect(all.query).toBe('');
    expect(all.total).toBe(DIRECTORY.length);
    const trust = all.agents.map((hit) => hit.trust_score);
    expect(trust).toEqual([...trust].sort((a, b) => b - a));
    expect(all.agents.every((hit) => hit.score === 0)).toBe(true);
    const page = await searchGet({ limit: '2' });
    expect(page.agents).toHaveLength(2);
    expect(page.total).toBe(DIRECTORY.length);
    expect(ids(page.agents)).toEqual(ids(all.agents).slice(0, 2));
  });
});

describe('filters, GET and POST alike', () => {
  const filterCases: { type?: string; min_trust?: number; capabilities?: string[] }[] = [
    { type: 'coding' },
    { min_trust: 30 },
    { capabilities: ['python'] },
    { capabilities: ['PYTHON', 'Code-Review'] },
    { type: 'security', capabilities: ['python'] },
    { type: 'coding', min_trust: 30, capabilities: ['code-review'] },
    { capabilities: ['no-such-capability'] },
  ];

  const passes = (hit: Hit, filter: (typeof filterCases)[number]) =>
    (!filter.type || hit.type === filter.type) &&
    (filter.min_trust === undefined || hit.trust_score >= filter.min_trust) &&
    (filter.capabilities ?? []).every((wanted) => hit.capabilities.some((own) => own.toLowerCase() === wanted.toLowerCase()));

  const asGet = (q: string, filter: (typeof filterCases)[number]) => {
    const params: Record<string, string> = { q, limit: '100' };
    if (filter.type) params.type = filter.type;
    if (filter.min_trust !== undefined) params.min_trust = String(filter.min_trust);
    if (filter.capabilities) params.capabilities = filter.capabilities.join(',');
    return searchGet(params);
  };

  it.each(filterCases)('returns exactly the matching agents that pass %o', async (filter) => {
    for (const q of ['', 'python', 'code']) {
      // The unfiltered result, filtered here, is what the server must return (single-word queries: no fallback).
      const unfiltered = await searchGet({ q, limit: '100' });
      const expected = unfiltered.agents.filter((hit) => passes(hit, filter));
      const viaGet = await asGet(q, filter);
      const viaPost = await searchPost({ query: q, limit: 100, ...filter });
      for (const result of [viaGet, viaPost]) {
        expect(ids(result.agents).sort()).toEqual(ids(expected).sort());
        expect(result.total).toBe(expected.length);
        expect(result.agents.every((hit) => passes(hit, filter))).toBe(true);
      }
      expect(ids(viaPost.agents)).toEqual(ids(viaGet.agents));
    }
  });

  it('has agents on both sides of min_trust, so the filter is really tested', async () => {
    const all = (await searchGet({})).agents;
    expect(all.some((hit) => hit.trust_score >= 30)).toBe(true);
    expect(all.some((hit) => hit.trust_score < 30)).toBe(true);
  });

  it('accepts repeated capabilities parameters', async () => {
    const body = await searchGet(Object.fromEntries([['capabilities', 'python']]));
    const repeated = await server.api('/agents/search?capabilities=python&capabilities=code-review');
    expect(ids((await json(repeated)).agents)).toEqual(['code-reviewer']);
    expect(body.total).toBe(3);
  });
});

describe('POST /agents/search', () => {
  it('takes every field and echoes the query', async () => {
    const body = await searchPost({ query: '  kubernetes ', limit: 1, type: 'devops', min_trust: 0, capabilities: ['terraform'] });
    expect(body).toMatchObject({ query: 'kubernetes', total: 1 });
    expect(ids(body.agents)).toEqual(['kubernetes-deployer']);
  });

  it('lists everything for an empty body object', async () => {
    expect((await searchPost({})).total).toBe(DIRECTORY.length);
  });
});

describe('paging, GET and POST alike', () => {
  it('pages through every match with page, limit, total and a Link header', async () => {
    const all = await searchGet({ q: 'code', limit: '100' });
    expect(all.total).toBeGreaterThanOrEqual(2);
    const seen: string[] = [];
    for (let page = 1; page <= all.total; page++) {
      const response = await server.api(`/agents/search?q=code&limit=1&page=${page}`);
      const body = (await response.json()) as { agents: Hit[]; page: number; limit: number; total: number };
      expect(body).toMatchObject({ page, limit: 1, total: all.total });
      seen.push(...ids(body.agents));
      const link = response.headers.get('link') ?? '';
      expect(link.includes('rel="next"')).toBe(page < all.total);
      expect(link.includes('rel="prev"')).toBe(page > 1);
      if (page < all.total) expect(link).toContain(`page=${page + 1}`);
    }
    expect(seen).toEqual(ids(all.agents));
    const beyond = await searchGet({ q: 'code', limit: '1', page: String(all.total + 1) });
    expect(beyond.agents).toEqual([]);
  });

  it('pages a POST search the same way, its links being the same search as a GET', async () => {
    const first = await server.post('/agents/search', { q: 'code', limit: 1, page: 1, type: 'coding' });
    const second = await server.post('/agents/search', { query: 'code', limit: 1, page: 2, type: 'coding' });
    const [a, b] = [(await first.json()) as { agents: Hit[]; total: number }, (await second.json()) as { agents: Hit[]; page: number }];
    expect(a.total).toBeGreaterThanOrEqual(2);
    expect(b.page).toBe(2);
    expect(a.agents[0]!.id).not.toBe(b.agents[0]!.id);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
    expect(next).toContain('q=code');
    expect(next).toContain('type=coding');
    const followed = (await (await fetch(new URL(next!, server.apiBaseUrl))).json()) as { agents: Hit[] };
    expect(ids(followed.agents)).toEqual(ids(b.agents));
  });

  it('rejects pages past the depth limit and two different texts in one POST', async () => {
    expect((await server.api('/agents/search?q=code&limit=100&page=101')).status).toBe(400);
    expect((await server.api('/agents/search?q=code&page=0')).status).toBe(400);
    expect((await server.post('/agents/search', { query: 'a', q: 'b' })).status).toBe(400);
  });
});

describe('validation', () => {
  const expectValidationError = async (response: Response, pointer?: string) => {
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    const body = await json(response);
    expect(body.code).toBe('validation_failed');
    if (pointer) expect(body.errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer);
  };

  it('rejects unknown fields and wrong types in the POST body', async () => {
    await expectValidationError(await server.post('/agents/search', { query: 'x', sort: 'name' }));
    await expectValidationError(await server.post('/agents/search', { query: 42 }), '/query');
    await expectValidationError(await server.post('/agents/search', { min_trust: '50' }), '/min_trust');
    await expectValidationError(await server.post('/agents/search', { capabilities: 'python' }), '/capabilities');
    await expectValidationError(await server.post('/agents/search', { limit: 2.5 }), '/limit');
    await expectValidationError(await server.post('/agents/search', []));
  });

  it('rejects a min_trust outside 0–100 or not a number', async () => {
    for (const value of ['150', '-1', 'abc']) await expectValidationError(await server.api(`/agents/search?min_trust=${value}`));
    await expectValidationError(await server.post('/agents/search', { min_trust: 101 }), '/min_trust');
  });

  it('rejects an unknown type and a limit outside 1–100', async () => {
    await expectValidationError(await server.api('/agents/search?type=robot'));
    await expectValidationError(await server.post('/agents/search', { type: 'robot' }), '/type');
    for (const limit of ['0', '101', 'ten']) await expectValidationError(await server.api(`/agents/search?limit=${limit}`));
    await expectValidationError(await server.post('/agents/search', { limit: 101 }), '/limit');
  });

  it('answers a non-JSON body with 415', async () => {
    const response = await server.api('/agents/search', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'q=x' });
    expect(response.status).toBe(415);
  });
});

describe('GET /agents/{id}/connections', () => {
  it('lists related agents with their reasons, best first, never the agent itself', async () => {
    const response = await server.api('/agents/code-reviewer/connections');
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.agent_id).toBe('code-reviewer');
    const summary = body.connections.map(
      (c: { agent: { id: string }; score: number; shared_categories: string[]; shared_capabilities: string[]; same_author: boolean }) => [
        c.agent.id,
        c.score,
        c.shared_categories,
        c.shared_capabilities,
        c.same_author,
      ],
    );
    expect(summary).toEqual([
      ['kubernetes-deployer', 7, ['developer-tools'], [], true], // same author (case-insensitive) + a category
      ['reviewer-pro', 4, ['developer-tools'], ['code-review'], false], // ties with the next: same trust, smaller id first
      ['security-auditor', 4, ['quality'], ['Python'], false],
      ['python-tutor', 1, [], ['Python'], false],
    ]);
    expect(body.connections[0].agent).toMatchObject({ name: 'Kubernetes Deployer', rating: { count: 0 } });
  });

  it('honours limit and validates it', async () => {
    const body = await json(await server.api('/agents/code-reviewer/connections?limit=2'));
    expect(body.connections.map((c: { agent: { id: string } }) => c.agent.id)).toEqual(['kubernetes-deployer', 'reviewer-pro']);
    expect((await server.api('/agents/code-reviewer/connections?limit=51')).status).toBe(400);
  });

  it('404s an unknown agent', async () => {
    const response = await server.api('/agents/no-such-agent/connections');
    expect(response.status).toBe(404);
    expect((await json(response)).code).toBe('not_found');
  });
});

describe('settling after start-up', () => {
  it('/metrics counts the background jobs down to 0; /health then has every listed agent indexed, in the contract shape', async () => {
    // Polls (a busy machine can take a while): the warm-ups run in slices between requests.
    await expect.poll(() => backgroundJobs(server.origin), { timeout: 60_000, interval: 50 }).toBe(0);
    const body = await json(await server.api('/health'));
    expect(Object.keys(body).sort()).toEqual(['agents_indexed', 'status', 'version']);
    expect(body.agents_indexed).toBe(await server.services.agents.listedCount());
  });
});

describe('freshness', () => {
  it('follows creates, updates and unlisting in this process on the very next request', async () => {
    const { agents } = server.services;
    const before = (await json(await server.api('/health'))).agents_indexed;
    const created = await agents.edits.create(agentInput({ name: 'Zorblax Planner', capabilities: ['python'], categories: ['quality'] }), {
      emitEvents: false,
    });
    expect(await top5('zorblax')).toEqual([created.id]);
    expect((await json(await server.api('/health'))).agents_indexed).toBe(before + 1);

    await agents.edits.update(
      created.id,
      { name: 'Quixotic Planner', tagline: 'Plans things', description: 'Plans quixotic things.' },
      { emitEvents: false },
    );
    expect(await top5('zorblax')).toEqual([]);
    expect(await top5('quixotic')).toEqual([created.id]);

    await agents.edits.setListed(created.id, false, { emitEvents: false });
    expect(await top5('quixotic')).toEqual([]);
    expect((await server.api(`/agents/${created.id}/connections`)).status).toBe(404);
    const reviewerConnections = await json(await server.api('/agents/code-reviewer/connections?limit=50'));
    expect(reviewerConnections.connections.map((c: { agent: { id: string } }) => c.agent.id)).not.toContain(created.id);
    expect((await json(await server.api('/health'))).agents_indexed).toBe(before);

    await agents.edits.setListed(created.id, true, { emitEvents: false });
    expect(await top5('quixotic')).toEqual([created.id]);
    await agents.edits.setListed(created.id, false, { emitEvents: false });
  });

  it('follows writes from another process on the same database (a CLI import) once it has seen them', async () => {
    // A second connection (SQLite) or pool (PostgreSQL) and service set: what `cli import` opens while the server runs.
    // Another process's write reaches the server when its change cursor moves: on SQLite on the next
    // read, on PostgreSQL when the commit's notification arrives (contract §8: within a second).
    const opened = await openStore(server.services.config);
    try {
      const other = createServices({ store: opened.store, config: server.services.config });
      const seen = async () => untilSeen(server.services.agents.latestChangeSeqAsync, await other.agents.latestChangeSeqAsync());
      const created = await other.agents.edits.create(agentInput({ name: 'Vexillum Importer', type: 'data', capabilities: ['csv'] }), {
        emitEvents: false,
      });
      await seen();
      expect(await top5('vexillum')).toEqual([created.id]);
      expect(ids((await searchPost({ query: 'vexilum', type: 'data', capabilities: ['CSV'] })).agents)).toEqual([created.id]);

      await other.agents.edits.update(created.id, { tagline: 'Loads spreadsheets nightly' }, { emitEvents: false });
      await seen();
      expect(await top5('spreadsheets')).toEqual([created.id]);

      await other.agents.edits.setListed(created.id, false, { emitEvents: false });
      await seen();
      expect(await top5('vexillum')).toEqual([]);
    } finally {
      await opened.close();
    }
  });
});

describe('OpenAPI', () => {
  it('documents the search and connections routes', async () => {
    const document = await json(await server.api('/openapi.json'));
    const paths = Object.keys(document.paths);
    expect(paths.some((path) => path.endsWith('/agents/search'))).toBe(true);
    expect(paths.some((path) => path.endsWith('/agents/{id}/connections'))).toBe(true);
    const search = document.paths[paths.find((path) => path.endsWith('/agents/search'))!];
    expect(Object.keys(search).sort()).toEqual(['get', 'post']);
    expect(search.get.description).toContain('min_trust');
  });
});
