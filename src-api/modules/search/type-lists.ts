import type { IndexStore } from './index-store';

/** One candidate list split by type: its first `built` entries, as the types were at `epoch`. */
interface Split {
  epoch: number;
  built: number;
  byType: (number[] | undefined)[];
}

/** Per candidate list (a tag's slots, `IndexStore.tagSlots`): its split, made on first use with a type filter. */
const splits = new WeakMap<number[], Split>();

/**
 * The slots of `list` whose type was `typeCode` when they were split: a superset of those of that type now, so a
 * caller still tests the type (`IndexStore.typeBits`). A type filter passes one agent in several, so a scan of a
 * capability's agents with a type filter visits that share of them. A tag's list only grows (new slots pushed)
 * between compactions; an in-place type change or a compaction moves `IndexStore.typeEpoch` on, and the list is
 * split again.
 */
export function slotsOfType(store: IndexStore, list: number[], typeCode: number): number[] {
  let split = splits.get(list);
  if (split === undefined || split.epoch !== store.typeEpoch) {
    split = { epoch: store.typeEpoch, built: 0, byType: [] };
    splits.set(list, split);
  }
  if (split.built < list.length) {
    const { typeCodes } = store;
    const { byType } = split;
    for (let i = split.built; i < list.length; i++) {
      const slot = list[i]!;
      (byType[typeCodes[slot]!] ??= []).push(slot);
    }
    split.built = list.length;
  }
  return split.byType[typeCode] ?? NONE;
}

const NONE: number[] = [];
