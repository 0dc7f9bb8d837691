import { describe, expect, it } from 'vitest';
import { matchingStats } from '../../src-api/modules/search/matching-bits';
import { SearchIndex, type IndexableAgent } from '../../src-api/modules/search/search-index';
import { thresholdStats } from '../../src-api/modules/search/threshold';
import { WORD_UNIONS } from '../../src-api/modules/search/word-unions';
import { seededRandom } from '../../src-api/lib/seeded-random';

// Two words each in two forms, every form in over 512 descriptions (so each has a bitset), and a third word in one form.
const FORMS = [['agent', 'agents'], ['model', 'models'], ['data']];

function agent(i: number, description: string, name = `unit${i}`): IndexableAgent {
  return {
    id: `u-${i.toString(36).padStart(4, '0')}`,
    name,
    tagline: 'does things',
    description,
    author: 'author',
    capabilities: [],
    categories: [],
    type: 'other',
    trustScore: i % 3,
    listed: true,
    status: 'active',
  };
}

// A fifth of the names hold a form of a word too: three-word runs then split by the words in names (name-split.ts),
// whose per-word name bitsets are unions as well.
function corpus(size: number): IndexableAgent[] {
  const r = seededRandom(7);
  const form = () => {
    const forms = FORMS[r.int(FORMS.length)]!;
    return forms[r.int(forms.length)]!;
  };
  return Array.from({ length: size }, (_, i) =>
    agent(
      i,
      `${FORMS.flatMap((forms) => (r.int(2) === 0 ? [forms[r.int(forms.length)]!] : [])).join(' ')} filler`,
      r.int(5) === 0 ? `unit${i} ${form()} ${form()}` : `unit${i}`,
    ),
  );
}

const QUERIES = ['agent model', 'agents data model', 'models data', 'agent data', 'agents'];

describe("a query word's two forms read as one union bitset", () => {
  it('give the exhaustive scorer’s hits and total, and follow new, changed and unlisted agents', () => {
    const index = new SearchIndex();
    const agents = corpus(6_000);
    for (const a of agents) index.apply(a);
    index.compact();
    let split = 0;
    const expectExhaustive = () => {
      for (const q of QUERIES) {
        const pruned = index.search(q, 20, {}, 'pruned');
        if (thresholdStats.split) split++;
        expect(matchingStats.path, q).toBe(q.includes(' ') ? 'fused' : 'single word');
        expect(pruned, q).toEqual(index.search(q, 20, {}, 'exhaustive'));
      }
    };
    expectExhaustive();
    const before = index.search('agent model', 20).total;
    // A new agent with only the second forms (a tail posting in each form's bitset, after the unions were made).
    index.apply(agent(90_001, 'agents models'));
    expect(index.search('agent model', 20).total).toBe(before + 1);
    expectExhaustive();
    // An agent that had both words loses one; another is unlisted.
    const both = agents.filter((a) => /agents?\b/.test(a.description) && /models?\b/.test(a.description));
    index.apply({ ...both[0]!, description: 'data filler' });
    index.apply({ ...both[1]!, listed: false });
    expect(index.search('agent model', 20).total).toBe(before - 1);
    expectExhaustive();
    index.compact();
    expectExhaustive();
    expect(split).toBeGreaterThan(0);
  });

  it('match what the pass gives with each form read on its own', () => {
    const index = new SearchIndex();
    for (const a of corpus(6_000)) index.apply(a);
    index.compact();
    const withUnions = QUERIES.map((q) => index.search(q, 50));
    WORD_UNIONS.enabled = false;
    try {
      expect(QUERIES.map((q) => index.search(q, 50))).toEqual(withUnions);
    } finally {
      WORD_UNIONS.enabled = true;
    }
  });
});
