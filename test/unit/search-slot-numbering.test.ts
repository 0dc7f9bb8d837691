import { describe, expect, it } from 'vitest';
import { SearchIndex, type IndexableAgent } from '../../src-api/modules/search/search-index';
import { seededRandom } from '../../src-api/lib/seeded-random';

// The profile cache trusts a hit's (slot, slotNumbering) to stand for its id without reading the id
// (TextArena.visitBytesAt): no two ids may ever come back under the same pair.
const WORDS = ['agent', 'data', 'model', 'secure', 'report'];

function agentOf(i: number, r: ReturnType<typeof seededRandom>): IndexableAgent {
  return {
    id: `n-${i.toString(36).padStart(3, '0')}`,
    name: `unit ${WORDS[r.int(WORDS.length)]}`,
    tagline: 'does things',
    description: WORDS.filter(() => r.int(2) === 0).join(' ') || 'agent',
    author: 'author',
    capabilities: [],
    categories: [],
    type: 'other',
    trustScore: r.int(50),
    listed: true,
    status: 'active',
  };
}

describe("the index's slot numbering", () => {
  it('under one numbering, a slot stands for one id, through new, edited, unlisted and relisted agents and compactions', () => {
    const r = seededRandom(3);
    const index = new SearchIndex();
    const agents = Array.from({ length: 400 }, (_, i) => agentOf(i, r));
    for (const agent of agents) index.apply(agent);
    index.compact();
    const idOf = new Map<string, string>();
    const numberings = new Set<number>();
    let pairs = 0;
    const check = () => {
      for (const q of ['agent', 'data model', 'secure report agent', 'unit']) {
        for (const hit of index.search(q, 400).hits) {
          const pair = `${index.slotNumbering}:${hit.slot}`;
          const known = idOf.get(pair);
          if (known === undefined) {
            idOf.set(pair, hit.id);
            pairs++;
          } else expect(hit.id, pair).toBe(known);
        }
      }
      numberings.add(index.slotNumbering);
    };
    check();
    for (let step = 0; step < 300; step++) {
      const i = r.int(agents.length + 20);
      const roll = r.int(10);
      if (i >= agents.length) agents.push(agentOf(agents.length, r));
      else if (roll < 4) agents[i] = { ...agentOf(i, r), id: agents[i]!.id };
      else if (roll < 6) agents[i] = { ...agents[i]!, listed: !agents[i]!.listed };
      else agents[i] = { ...agents[i]!, trustScore: r.int(50) };
      index.apply(agents[i] ?? agents[agents.length - 1]!);
      if (step % 50 === 49) index.compact();
      else index.maybeCompact();
      check();
    }
    // Compactions renumbered the slots (each a new numbering), and the pairs were checked many times over.
    expect(numberings.size).toBeGreaterThanOrEqual(7);
    expect(pairs).toBeGreaterThan(1_000);
  });
});
