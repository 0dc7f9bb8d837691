import { describe, expect, it } from 'vitest';
import { SearchIndex, type IndexableAgent } from '../../src-api/modules/search/search-index';
import { TAG_CAPABILITY, tagKey, type IndexStore } from '../../src-api/modules/search/index-store';
import { slotsOfType } from '../../src-api/modules/search/type-lists';
import { AGENT_TYPES } from '../../src-api/modules/agents/agents.schemas';
import { seededRandom } from '../../src-api/lib/seeded-random';

// A capability's agents split by type (the sparse path's candidates under a type filter): typed arrays filled
// after counting, extended as the list grows, made again when types change.
function agents(seed: number, count: number, prefix: string): IndexableAgent[] {
  const r = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}-${i.toString(36).padStart(5, '0')}`,
    name: `Split${prefix}${i}`,
    tagline: 'does things',
    description: 'an agent',
    author: 'someone',
    capabilities: r.next() < 0.3 ? ['vision'] : ['ocr'],
    categories: [],
    type: r.pick(AGENT_TYPES),
    trustScore: 10,
    listed: true,
    status: 'active',
  }));
}

describe('slotsOfType', () => {
  it("equals the capability's slots of each type, in list order, as the list grows, types change and after a compaction", () => {
    const index = new SearchIndex();
    for (const agent of agents(1, 5_000, 'a')) index.apply(agent);
    index.compact();
    const { store } = index as unknown as { store: IndexStore };
    const list = store.tagSlots[store.tagIdsByKind[TAG_CAPABILITY]!.get(tagKey('vision'))!]!;
    const expectSplit = (): void => {
      let total = 0;
      AGENT_TYPES.forEach((type, code) => {
        const split = slotsOfType(store, list, code);
        expect(split).toBeInstanceOf(Int32Array);
        expect([...split], type).toEqual(list.filter((slot) => store.typeCodes[slot] === code));
        total += split.length;
      });
      expect(total).toBe(list.length);
    };
    expectSplit();
    // New agents (the list grows: the split is extended), twice.
    for (const agent of agents(2, 700, 'b')) index.apply(agent);
    expectSplit();
    for (const agent of agents(3, 3_000, 'c')) index.apply(agent);
    expectSplit();
    // Types changed in place (the epoch moves: split again).
    const r = seededRandom(4);
    for (const agent of agents(1, 5_000, 'a'))
      if (agent.capabilities.includes('vision') && r.next() < 0.5) index.apply({ ...agent, type: r.pick(AGENT_TYPES) });
    expectSplit();
    index.compact();
    expectSplit();
  });
});
