import { grownInt32 } from './bitsets';
import type { IndexStore } from './index-store';

/** One candidate list split by type: its first `built` entries, as the types were at `epoch`. */
interface Split {
  epoch: number;
  built: number;
  /** Per type code, its slots: the first `counts[code]` entries of `slots[code]`, also as a view (`views[code]`). */
  slots: (Int32Array | undefined)[];
  counts: number[];
  views: (Int32Array | undefined)[];
}

/** Per candidate list (a tag's slots, `IndexStore.tagSlots`): its split, made on first use with a type filter. */
const splits = new WeakMap<number[], Split>();

/** Per type code, how many slots a split step adds (all zero between steps; type codes are bytes). */
const added = new Int32Array(256);

/**
 * The slots of `list` whose type was `typeCode` when they were split: a superset of those of that type now, so a
 * caller still tests the type (`IndexStore.typeBits`). A type filter passes one agent in several, so a scan of a
 * capability's agents with a type filter visits that share of them. A tag's list only grows (new slots pushed)
 * between compactions; an in-place type change or a compaction moves `IndexStore.typeEpoch` on, and the list is
 * split again.
 *
 * Typed arrays, filled after counting: at 1,000,000 agents a capability's list holds ~26,000 slots, and pushing
 * them onto growing arrays (garbage, copied by the young-generation GC as they survive) made each list's first
 * filtered query take several milliseconds.
 */
export function slotsOfType(store: IndexStore, list: number[], typeCode: number): Int32Array {
  let split = splits.get(list);
  if (split === undefined || split.epoch !== store.typeEpoch) {
    split = { epoch: store.typeEpoch, built: 0, slots: [], counts: [], views: [] };
    splits.set(list, split);
  }
  if (split.built < list.length) extend(store, list, split);
  return split.views[typeCode] ?? NONE;
}

/** Splits the entries of `list` past `split.built`. */
function extend(store: IndexStore, list: number[], split: Split): void {
  const { typeCodes } = store;
  const from = split.built;
  for (let i = from; i < list.length; i++) added[typeCodes[list[i]!]!]!++;
  const { slots, counts, views } = split;
  for (let code = 0; code < added.length; code++) {
    const count = added[code]!;
    if (count === 0) continue;
    const had = counts[code] ?? 0;
    const array = slots[code];
    // The first split exactly sized; a list that grows later (new agents) grows its parts by doubling.
    if (array === undefined) slots[code] = new Int32Array(count);
    else if (array.length < had + count) slots[code] = grownInt32(array, had + count);
  }
  for (let i = from; i < list.length; i++) {
    const slot = list[i]!;
    const code = typeCodes[slot]!;
    const at = counts[code] ?? 0;
    slots[code]![at] = slot;
    counts[code] = at + 1;
  }
  for (let code = 0; code < added.length; code++) {
    if (added[code] === 0) continue;
    added[code] = 0;
    views[code] = slots[code]!.subarray(0, counts[code]);
  }
  split.built = list.length;
}

const NONE = new Int32Array(0);
