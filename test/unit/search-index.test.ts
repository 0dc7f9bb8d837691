import { describe, expect, it } from 'vitest';
import { allowedEdits, SearchIndex, type IndexableAgent } from '../../src-api/modules/search/search-index';
import { EditDistancePattern } from '../../src-api/modules/search/edit-distance';
import { boundedEditDistance, indexTerms, parseQuery, tokenize } from '../../src-api/modules/search/text';
import { PREFIX_SCAN_LIMIT, Vocabulary } from '../../src-api/modules/search/vocabulary';
import { indexableAgent } from '../helpers/indexable-agent';

let sequence = 0;
function agent(overrides: Partial<IndexableAgent> = {}): IndexableAgent {
  sequence++;
  return indexableAgent(`agent-${sequence}`, `Agent ${sequence}`, overrides);
}

function indexOf(agents: IndexableAgent[], options?: ConstructorParameters<typeof SearchIndex>[0]): SearchIndex {
  const index = new SearchIndex(options);
  for (const each of agents) index.apply(each);
  return index;
}

const ids = (hits: { id: string }[]) => hits.map((hit) => hit.id);

describe('text', () => {
  it('tokenizes case- and accent-insensitively on anything but letters and digits', () => {
    expect(tokenize('Café-Bot v2: PDF_parsing!')).toEqual(['cafe', 'bot', 'v2', 'pdf', 'parsing']);
  });

  it('indexes the words as written, lowercased, stopwords dropped except in names', () => {
    // Indexing reads slices of the text without making strings; queries tokenize strings. They must agree.
    const text = 'The Libraries and APIs: agents, services, this is it Café-Bots ÜBER naïve résumés ' + 'x'.repeat(45);
    const viaQuery = tokenize(text).filter((token) => !['the', 'and', 'this', 'is', 'it'].includes(token));
    expect(indexTerms(text, false)).toEqual(viaQuery);
    expect(indexTerms('The Agents', true)).toEqual(['the', 'agents']);
    expect(indexTerms('Résumés of the agents', false)).toEqual(['resumes', 'agents']);
  });

  it('drops stopwords from a query unless nothing else is left', () => {
    expect(parseQuery('the code of the reviewer', 16).terms).toEqual(['code', 'reviewer']);
    expect(parseQuery('The', 16).terms).toEqual(['the']);
    expect(parseQuery('  ?! ', 16).terms).toEqual([]);
  });

  it('counts an adjacent swap as one edit and gives up past the bound', () => {
    expect(boundedEditDistance('agnet', 'agent', 2)).toBe(1);
    expect(boundedEditDistance('kubrenetis', 'kubernetes', 2)).toBe(2);
    expect(boundedEditDistance('kitten', 'sitting', 2)).toBe(3); // "over the bound" is reported as bound + 1
    expect(boundedEditDistance('same', 'same', 1)).toBe(0);
    expect(boundedEditDistance('a', 'abcd', 2)).toBe(3);
  });

  it('bounded edit distance (banded) equals the full optimal-string-alignment distance, capped at bound + 1, on random words', () => {
    const full = (a: string, b: string): number => {
      const d = Array.from({ length: a.length + 1 }, (_, i) =>
        Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
      );
      for (let i = 1; i <= a.length; i++) {
        for (let j = 1; j <= b.length; j++) {
          const cost = a[i - 1] === b[j - 1] ? 0 : 1;
          d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
          if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
        }
      }
      return d[a.length]![b.length]!;
    };
    let state = 12345;
    const next = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return (state >>> 8) % n;
    };
    const word = () => Array.from({ length: 1 + next(12) }, () => 'abcde'[next(5)]).join('');
    for (let i = 0; i < 3000; i++) {
      const a = word();
      // Often a near copy, so that small distances are common.
      const b = next(2) === 0 ? word() : a.slice(0, next(a.length + 1)) + word().slice(0, next(3)) + a.slice(next(a.length + 1));
      const max = next(4);
      const expected = Math.min(full(a, b), max + 1);
      expect(boundedEditDistance(a, b, max), `${a} / ${b} / ${max}`).toBe(expected);
    }
  });

  it('the bit-parallel distance of a typo lookup equals the banded one, for words up to 40 letters and any characters', () => {
    let state = 777;
    const next = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return (state >>> 8) % n;
    };
    // Few letters (many near words), one beyond ASCII; lengths past 31 take the fallback.
    const word = (length: number) => Array.from({ length }, () => 'abcé'[next(4)]).join('');
    for (let i = 0; i < 5000; i++) {
      const a = word(next(41));
      const b = next(2) === 0 ? word(next(41)) : a.slice(0, next(a.length + 1)) + word(next(3)) + a.slice(next(a.length + 1));
      const max = next(5);
      const expected = boundedEditDistance(a, b, max);
      const codes = (text: string) => Uint16Array.from(text, (c) => c.charCodeAt(0));
      expect(new EditDistancePattern(a).distance(codes(b), 0, b.length, max), `${a} / ${b} / ${max}`).toBe(expected);
      // As a typo lookup reads it: the word's code units amid others' (a letter's terms, one after another).
      const before = word(next(5));
      const chars = codes(before + b + word(next(5)));
      expect(new EditDistancePattern(a).distance(chars, before.length, b.length, max), `${a} / ${b} at ${before.length}`).toBe(expected);
    }
  });

  it('allows one edit from 4 letters and two when the longer word has 8', () => {
    expect(allowedEdits(3, 4)).toBe(0);
    expect(allowedEdits(4, 5)).toBe(1);
    expect(allowedEdits(7, 7)).toBe(1);
    expect(allowedEdits(7, 9)).toBe(2);
    expect(allowedEdits(8, 8)).toBe(2);
  });
});

describe('Vocabulary', () => {
  const vocabulary = new Vocabulary();
  for (const term of ['agent', 'agents', 'agentic', 'magnet', 'kubernetes', 'kube', 'summarization', 'python']) vocabulary.intern(term);

  it('finds prefixes in sorted and not-yet-merged terms alike', () => {
    const withPrefix = (prefix: string) => {
      const found: string[] = [];
      vocabulary.forEachWithPrefix(prefix, (termId) => found.push(vocabulary.term(termId)));
      return found.sort();
    };
    expect(withPrefix('agen')).toEqual(['agent', 'agentic', 'agents']);
    vocabulary.mergePending();
    expect(withPrefix('kube')).toEqual(['kube', 'kubernetes']);
    vocabulary.intern('agenda');
    expect(withPrefix('agen')).toEqual(['agenda', 'agent', 'agentic', 'agents']);
  });

  it('visits the terms with a prefix in sorted order, the first PREFIX_SCAN_LIMIT of them, as a scan of the sorted terms', () => {
    // Random words over a small alphabet (long runs share each prefix), more under "a" than the limit, some pending.
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const big = new Vocabulary();
    const words = new Set<string>();
    while (words.size < PREFIX_SCAN_LIMIT + 5_000) {
      let word = random() < 0.9 ? 'a' : 'bc'[Math.floor(random() * 2)]!;
      const length = 1 + Math.floor(random() * 7);
      for (let i = 0; i < length; i++) word += 'abcé'[Math.floor(random() * 4)];
      words.add(word);
    }
    for (const word of words) big.intern(word);
    big.mergePending();
    const pending = ['abba', 'bcc', 'cé', 'ééé'].filter((word) => !words.has(word));
    for (const word of pending) big.intern(word);
    const sorted = [...words].sort();
    for (const prefix of ['', 'a', 'ab', 'abc', 'aé', 'b', 'bcc', 'c', 'cé', 'caaa', 'd', 'é', 'aaaaaaaaaa']) {
      const visited: string[] = [];
      big.forEachWithPrefix(prefix, (termId) => visited.push(big.term(termId)));
      // The terms not merged yet come after, in the order added.
      const expected = [
        ...sorted.filter((word) => word.startsWith(prefix)).slice(0, PREFIX_SCAN_LIMIT),
        ...pending.filter((word) => word.startsWith(prefix)),
      ];
      expect(visited, prefix).toEqual(expected);
    }
  });

  it('finds words within the allowed edits, nearest first when ranked, and nothing further', () => {
    const near = (word: string) =>
      vocabulary.fuzzyMatches(word, allowedEdits).map(({ termId, distance }) => [vocabulary.term(termId), distance]);
    expect(near('agnet')).toEqual(expect.arrayContaining([['agent', 1]]));
    expect(near('agnt').map(([term]) => term)).toEqual(['agent']); // "magnet" is two edits away; a 5-letter word gets one
    expect(near('kuberntis')).toEqual([['kubernetes', 2]]);
    expect(near('sumarizaton')).toEqual([['summarization', 2]]);
    expect(near('pythn')).toEqual([['python', 1]]);
    expect(near('pyt')).toEqual([]); // too short for typos
    expect(near('zzzzzz')).toEqual([]);
  });
});

describe('SearchIndex text search', () => {
  const reviewer = agent({
    id: 'code-reviewer',
    name: 'Code Reviewer',
    description: 'Reviews pull requests.',
    capabilities: ['code-review'],
  });
  const noisy = agent({
    id: 'reviewer-pro',
    name: 'Reviewer Pro',
    tagline: 'The code reviewer code reviewer for code',
    description: 'code reviewer code reviewer code reviewer',
    capabilities: ['code-review', 'code'],
  });
  const kube = agent({
    id: 'kube',
    name: 'Kubernetes Deployer',
    description: 'Ships containers.',
    author: 'Acme Labs',
    capabilities: ['kubernetes', 'terraform'],
  });
  const summarizer = agent({ id: 'summarizer', name: 'Paper Digest', description: 'Reads papers.', capabilities: ['summarization'] });
  const acme = agent({ id: 'acme-helper', name: 'Helper', description: 'Helps with code.', author: 'ACME labs' });
  const all = [reviewer, noisy, kube, summarizer, acme];

  it('ranks an exact name first, above agents that repeat its words', () => {
    const { hits } = indexOf(all).search('code reviewer', 10);
    expect(hits[0]!.id).toBe('code-reviewer');
    expect(ids(hits)).toContain('reviewer-pro');
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it('weights the name above the description', () => {
    const index = indexOf([
      agent({ id: 'in-name', name: 'Invoice Agent', description: 'Handles paperwork.' }),
      agent({ id: 'in-description', name: 'Paper Agent', description: 'Handles invoice paperwork.' }),
    ]);
    expect(ids(index.search('invoice', 10).hits)).toEqual(['in-name', 'in-description']);
  });

  it('tolerates one and two typos, and prefers exact words to near ones', () => {
    const index = indexOf(all);
    expect(ids(index.search('kubernetis', 5).hits)).toContain('kube');
    expect(ids(index.search('kubrenetis', 5).hits)).toContain('kube');
    expect(ids(index.search('sumarizaton', 5).hits)).toContain('summarizer');
    const exactFirst = indexOf([agent({ id: 'typo', name: 'Reveiwer' }), agent({ id: 'right', name: 'Reviewer' })]).search('reviewer', 5);
    expect(ids(exactFirst.hits)).toEqual(['right', 'typo']);
  });

  it('completes prefixes', () => {
    const index = indexOf(all);
    expect(ids(index.search('kuber', 5).hits)).toEqual(['kube']);
    expect(ids(index.search('summar', 5).hits)).toEqual(['summarizer']);
  });

  it('searches authors', () => {
    expect(ids(indexOf(all).search('acme labs', 5).hits).sort()).toEqual(['acme-helper', 'kube']);
  });

  it('requires every word when some agent has them all, else ranks by words matched', () => {
    const index = indexOf(all);
    const both = index.search('kubernetes terraform', 10);
    expect(ids(both.hits)).toEqual(['kube']);
    expect(both.total).toBe(1);
    const some = index.search('kubernetes digest', 10);
    expect(ids(some.hits).sort()).toEqual(['kube', 'summarizer']);
    expect(some.total).toBe(2);
    const ranked = indexOf([
      agent({ id: 'one', name: 'Alpha' }),
      agent({ id: 'two', name: 'Alpha Beta' }),
      agent({ id: 'none', name: 'Delta' }),
    ]).search('alpha beta gamma', 10);
    expect(ids(ranked.hits)).toEqual(['two', 'one']);
    expect(Math.floor(ranked.hits[0]!.score)).toBe(2);
    expect(Math.floor(ranked.hits[1]!.score)).toBe(1);
  });

  it('counts every match in total and returns at most limit', () => {
    const many = Array.from({ length: 30 }, (_, i) => agent({ id: `bot-${i}`, name: `Bot ${i}`, trustScore: i }));
    const result = indexOf(many).search('bot', 5);
    expect(result.total).toBe(30);
    expect(result.hits).toHaveLength(5);
  });

  it('breaks score ties by trust score, then id', () => {
    const result = indexOf([
      agent({ id: 'b', name: 'Twin', trustScore: 5 }),
      agent({ id: 'a', name: 'Twin', trustScore: 5 }),
      agent({ id: 'c', name: 'Twin', trustScore: 50 }),
    ]).search('twin', 10);
    expect(ids(result.hits)).toEqual(['c', 'a', 'b']);
  });
});

describe('SearchIndex filters and browsing', () => {
  const types = ['coding', 'data', 'research'];
  const capabilityPool = ['Python', 'sql', 'OCR', 'web-search'];
  const agents = Array.from({ length: 120 }, (_, i) =>
    agent({
      id: `f-${i}`,
      name: `Filter ${i % 2 === 0 ? 'Alpha' : 'Beta'} ${i}`,
      type: types[i % 3]!,
      trustScore: (i * 37) % 101,
      capabilities: capabilityPool.filter((_, c) => (i >> c) & 1),
    }),
  );
  const index = indexOf(agents);
  const cases = [
    { type: 'coding' },
    { minTrust: 50 },
    { capabilities: ['python'] },
    { capabilities: ['PYTHON', 'ocr'] },
    { type: 'data', minTrust: 20, capabilities: ['sql'] },
    { capabilities: ['no-such-capability'] },
    {},
  ];

  const passes = (a: IndexableAgent, filter: { type?: string; minTrust?: number; capabilities?: string[] }) =>
    (!filter.type || a.type === filter.type) &&
    (filter.minTrust === undefined || a.trustScore >= filter.minTrust) &&
    (filter.capabilities ?? []).every((c) => a.capabilities.some((own) => own.toLowerCase() === c.toLowerCase()));

  it.each(cases)('browses exactly the agents passing %o, by trust score', (filter) => {
    const expected = agents.filter((a) => passes(a, filter)).sort((a, b) => b.trustScore - a.trustScore || (a.id < b.id ? -1 : 1));
    const result = index.search('', 100, filter);
    expect(result.total).toBe(expected.length);
    expect(ids(result.hits)).toEqual(expected.slice(0, 100).map((a) => a.id));
    expect(result.hits.every((hit) => hit.score === 0)).toBe(true);
  });

  it.each(cases)('applies %o exactly to a text query too', (filter) => {
    const expected = agents.filter((a) => a.name.includes('Alpha') && passes(a, filter));
    const result = index.search('alpha', 100, filter);
    expect(result.total).toBe(expected.length);
    expect(ids(result.hits).sort()).toEqual(expected.map((a) => a.id).sort());
  });
});

describe('SearchIndex updates', () => {
  it('reindexes changed text, updates trust in place, and forgets unlisted agents', () => {
    const index = indexOf([agent({ id: 'x', name: 'Original Name', trustScore: 1 }), agent({ id: 'y', name: 'Other', trustScore: 2 })]);
    expect(index.search('', 1).hits[0]!.id).toBe('y');
    index.apply(agent({ id: 'x', name: 'Original Name', trustScore: 90 }));
    expect(index.search('', 1).hits[0]!.id).toBe('x');
    expect(index.search('', 5, { minTrust: 50 }).total).toBe(1);
    expect(index.search('original', 5).total).toBe(1);

    index.apply(agent({ id: 'x', name: 'Renamed Thing', trustScore: 90 }));
    expect(index.search('original', 5).total).toBe(0);
    expect(ids(index.search('renamed', 5).hits)).toEqual(['x']);

    index.apply(agent({ id: 'x', name: 'Renamed Thing', listed: false }));
    expect(index.search('renamed', 5).total).toBe(0);
    expect(index.size).toBe(1);
    expect(index.has('x')).toBe(false);
    expect(index.connections('x', 5)).toBeUndefined();

    index.apply(agent({ id: 'x', name: 'Renamed Thing' }));
    expect(ids(index.search('renamed', 5).hits)).toEqual(['x']);
    expect(index.size).toBe(2);
  });

  it('returns the same results before and after compaction', () => {
    // Scores move a little (tombstones leave the idf statistics), the matches and their count do not.
    const agents = Array.from({ length: 300 }, (_, i) =>
      agent({
        id: `c-${i}`,
        name: `${['Data', 'Code', 'Cloud'][i % 3]} Helper ${i}`,
        description: `Handles ${['invoices', 'tickets', 'logs', 'papers'][i % 4]} for teams number ${i}.`,
        capabilities: [['python', 'sql', 'ocr'][i % 3]!],
        categories: [['finance', 'devops'][i % 2]!],
        author: `Author ${i % 7}`,
        trustScore: i % 50,
      }),
    );
    const index = indexOf(agents);
    // Churn: change a third, unlist a tenth.
    for (let i = 0; i < 300; i += 3) index.apply({ ...agents[i]!, description: `Rewritten ${i} about invoices and logs.` });
    for (let i = 0; i < 300; i += 10) index.apply({ ...agents[i]!, listed: false });
    const queries = ['data', 'invoices logs', 'helpr', 'clo', 'author 3', 'rewritten', ''];
    const matches = (result: { hits: { id: string }[]; total: number }) => ({ ids: ids(result.hits).sort(), total: result.total });
    const filters = [{ minTrust: 5 }, { capabilities: ['SQL'] }];
    const run = () => filters.flatMap((filter) => queries.map((q) => matches(index.search(q, 500, filter))));
    const before = run();
    const connectionsBefore = index.connections('c-1', 20);
    index.compact();
    expect(run()).toEqual(before);
    expect(index.connections('c-1', 20)).toEqual(connectionsBefore);
    expect(index.size).toBe(270);
    expect(before.slice(0, queries.length).every(({ total }) => total > 0)).toBe(true);
  });

  it('searches compacted and newly added agents together', () => {
    const index = indexOf(Array.from({ length: 40 }, (_, i) => agent({ id: `old-${i}`, name: `Mixer ${i}`, capabilities: ['sql'] })));
    index.compact();
    for (let i = 0; i < 10; i++) index.apply(agent({ id: `new-${i}`, name: `Mixer New ${i}`, capabilities: ['SQL'] }));
    index.apply(agent({ id: 'old-3', name: 'Renamed', capabilities: ['sql'] }));
    const before = index.search('mixer', 100, { capabilities: ['sql'] });
    expect(before.total).toBe(49);
    expect(ids(index.search('mixer new', 100).hits).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `new-${i}`).sort());
    index.compact();
    expect(ids(index.search('mixer', 100, { capabilities: ['sql'] }).hits).sort()).toEqual(ids(before.hits).sort());
  });

  it('scores the same after a compaction without tombstones (up to the 16-bit impacts)', () => {
    const agents = Array.from({ length: 50 }, (_, i) =>
      agent({ id: `s-${i}`, name: `Scorer ${i % 5}`, description: 'scorer '.repeat(1 + (i % 4)) }),
    );
    const index = indexOf(agents);
    const before = index.search('scorer', 50).hits;
    index.compact();
    const after = index.search('scorer', 50).hits;
    expect(ids(after)).toEqual(ids(before));
    after.forEach((hit, i) => expect(hit.score).toBeCloseTo(before[i]!.score, 3));
  });
});

describe('SearchIndex connections', () => {
  const source = agent({
    id: 'source',
    author: 'Acme Labs',
    categories: ['Developer-Tools', 'quality'],
    capabilities: ['python', 'code-review'],
  });
  const sameAuthorAndCategory = agent({ id: 'sibling', author: 'acme labs', categories: ['developer-tools'], capabilities: ['go'] });
  const categoryAndCapability = agent({ id: 'cousin', author: 'Other', categories: ['quality'], capabilities: ['Python'] });
  const capabilityOnly = agent({ id: 'stranger', author: 'Else', categories: ['misc'], capabilities: ['python'] });
  const nothingShared = agent({ id: 'unrelated', author: 'Nobody', categories: ['misc'], capabilities: ['rust'] });

  it('scores 3 per category, 4 for the author and 1 per capability, best first, never itself', () => {
    const index = indexOf([source, sameAuthorAndCategory, categoryAndCapability, capabilityOnly, nothingShared]);
    expect(index.connections('source', 10)!.map(({ id, score }) => [id, score])).toEqual([
      ['sibling', 7],
      ['cousin', 4],
      ['stranger', 1],
    ]);
    expect(index.connections('source', 1)!.map(({ id }) => id)).toEqual(['sibling']);
    expect(index.connections('nobody', 10)).toBeUndefined();
  });

  it('leaves out unlisted agents', () => {
    const index = indexOf([source, sameAuthorAndCategory, categoryAndCapability]);
    index.apply({ ...sameAuthorAndCategory, listed: false });
    expect(index.connections('source', 10)!.map(({ id }) => id)).toEqual(['cousin']);
  });

  it('keeps scores exact when very common tags are sampled instead of read in full', () => {
    const crowd = Array.from({ length: 400 }, (_, i) =>
      agent({
        id: `crowd-${String(i).padStart(3, '0')}`,
        categories: ['quality'],
        capabilities: i % 50 === 0 ? ['code-review'] : [],
        trustScore: i % 10,
      }),
    );
    const agents = [source, sameAuthorAndCategory, categoryAndCapability, capabilityOnly, ...crowd];
    const full = indexOf(agents).connections('source', 20)!;
    const sampled = indexOf(agents, { connectionScanBudget: 20, connectionSamplePerList: 40 }).connections('source', 20)!;
    const exactScore = (id: string) =>
      full.find((hit) => hit.id === id)?.score ??
      indexOf(agents)
        .connections('source', 500)!
        .find((h) => h.id === id)!.score;
    for (const hit of sampled) expect(hit.score).toBe(exactScore(hit.id));
    // The strongest (found through rare tags) are never lost to sampling.
    expect(sampled.slice(0, 2).map(({ id }) => id)).toEqual(full.slice(0, 2).map(({ id }) => id));
  });
});
