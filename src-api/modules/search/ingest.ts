import { grownInt32 } from './bitsets';
import { noteTrustChange } from './impact-orders';
import {
  AUTHOR_FIELD,
  contentHashOf,
  DESCRIPTION_FIELD,
  FIELD_COUNT,
  NAME_FIELD,
  TAG_AUTHOR,
  TAG_CAPABILITY,
  TAG_CATEGORY,
  TAGLINE_FIELD,
  tagKey,
  TF_MAX,
  TF_SHIFT,
  typeCodeOf,
  type IndexableAgent,
  type IndexStore,
} from './index-store';
import { addNameEntry, noteTailPosting } from './accelerators';
import { clearBit, setBit } from './bitsets';
import { forEachIndexTerm, nameKeyOf, type TermVisitor } from './text';

/**
 * Ingestion: turns an agent into postings and per-slot data in the store.
 * New and changed agents get a new slot with "tail" postings (per-field
 * term frequencies); unlisting or changing one tombstones its old slot.
 */
export class Ingester {
  // Per term id, packed frequencies + 1 (0 = not in this agent); and one agent's analysis.
  private termFrequencyScratch = new Int32Array(1024);
  private readonly staged = {
    terms: [] as number[],
    fieldLengths: new Uint16Array(FIELD_COUNT),
    tags: [] as number[],
    nameKey: 0,
    // While staging: the field being read and its length so far.
    field: 0,
    fieldLength: 0,
  };

  constructor(private readonly store: IndexStore) {}

  /** Adds, updates or (when unlisted) removes one agent. */
  apply(agent: IndexableAgent): void {
    const store = this.store;
    const slot = store.slotById.get(agent.id);
    if (!agent.listed) {
      if (slot !== undefined) this.removeSlot(slot);
      return;
    }
    const contentHash = contentHashOf(agent);
    if (slot !== undefined && store.contentHashes[slot] === contentHash) {
      noteTrustChange(store, slot, agent.trustScore);
      const typeCode = typeCodeOf(agent.type);
      if (store.typeCodes[slot] !== typeCode) {
        store.removeLiveType(slot, store.typeCodes[slot]!);
        store.addLiveType(slot, typeCode);
        store.typeCodes[slot] = typeCode;
        store.typeEpoch++;
      }
      store.deprecated[slot] = agent.status === 'deprecated' ? 1 : 0;
      return;
    }
    if (slot !== undefined) this.removeSlot(slot);
    this.stage(agent);
    this.commitStaged(agent, contentHash);
  }

  /**
   * Analyses an agent into the staging scratch: distinct terms with packed
   * per-field frequencies, field lengths, tags and name key.
   */
  private stage(agent: IndexableAgent): void {
    const staged = this.staged;
    staged.terms.length = 0;
    staged.tags.length = 0;
    for (let field = 0; field < FIELD_COUNT; field++) {
      const text =
        field === NAME_FIELD
          ? agent.name
          : field === TAGLINE_FIELD
            ? agent.tagline
            : field === DESCRIPTION_FIELD
              ? agent.description
              : field === AUTHOR_FIELD
                ? agent.author
                : agent.capabilities.join(' \n ');
      staged.field = field;
      staged.fieldLength = 0;
      forEachIndexTerm(text, field === NAME_FIELD, this.stageTerm);
      staged.fieldLengths[field] = Math.min(staged.fieldLength, 0xffff);
    }
    this.stageTag(TAG_AUTHOR, agent.author);
    for (const category of agent.categories) this.stageTag(TAG_CATEGORY, category);
    for (const capability of agent.capabilities) this.stageTag(TAG_CAPABILITY, capability);
    staged.nameKey = nameKeyOf(agent.name);
  }

  /** One term of the field being staged (a bound arrow, made once: this runs for every word). */
  private readonly stageTerm: TermVisitor = (source, start, end, suffix) => {
    const staged = this.staged;
    staged.fieldLength++;
    const termId = this.store.vocabulary.internSlice(source, start, end, suffix);
    if (termId >= this.termFrequencyScratch.length) this.termFrequencyScratch = grownInt32(this.termFrequencyScratch, termId + 1);
    const current = this.termFrequencyScratch[termId]!;
    if (current === 0) staged.terms.push(termId);
    const packed = current === 0 ? 0 : current - 1;
    const shift = TF_SHIFT[staged.field]!;
    const max = TF_MAX[staged.field]!;
    this.termFrequencyScratch[termId] = (((packed >> shift) & max) < max ? packed + (1 << shift) : packed) + 1;
  };

  private stageTag(kind: number, value: string): void {
    const key = tagKey(value);
    if (!key) return;
    const tag = this.store.internTag(kind, key);
    if (!this.staged.tags.includes(tag)) this.staged.tags.push(tag);
  }

  /** Adds the staged analysis as a new slot for `agent`. */
  private commitStaged(agent: IndexableAgent, contentHash: number): void {
    const store = this.store;
    const staged = this.staged;
    const slot = store.slotCount++;
    store.ensureCapacity(store.slotCount);
    store.docIds[slot] = agent.id;
    store.alive[slot] = 1;
    store.trust[slot] = agent.trustScore;
    if (agent.trustScore < store.lowestTrust) store.lowestTrust = agent.trustScore;
    store.typeCodes[slot] = typeCodeOf(agent.type);
    store.deprecated[slot] = agent.status === 'deprecated' ? 1 : 0;
    store.nameKeys[slot] = staged.nameKey;
    store.contentHashes[slot] = contentHash;
    for (let field = 0; field < FIELD_COUNT; field++) {
      store.fieldLengths[slot * FIELD_COUNT + field] = staged.fieldLengths[field]!;
      store.fieldLengthSums[field] = store.fieldLengthSums[field]! + staged.fieldLengths[field]!;
    }

    if (store.documentFrequency.length < store.vocabulary.size)
      store.documentFrequency = grownInt32(store.documentFrequency, store.vocabulary.size);
    for (const termId of staged.terms) {
      store.tails.append(termId, slot, this.termFrequencyScratch[termId]! - 1);
      noteTailPosting(store, termId, slot);
      this.termFrequencyScratch[termId] = 0;
      store.documentFrequency[termId]!++;
    }

    const tagCount = staged.tags.length;
    if (store.tagPoolLength + tagCount > store.tagPool.length) {
      const grown = new Int32Array(Math.max(store.tagPool.length * 2, store.tagPoolLength + tagCount));
      grown.set(store.tagPool.subarray(0, store.tagPoolLength));
      store.tagPool = grown;
    }
    store.tagStarts[slot] = store.tagPoolLength;
    store.tagCounts[slot] = tagCount;
    for (const tag of staged.tags) {
      store.tagPool[store.tagPoolLength++] = tag;
      store.tagSlots[tag]!.push(slot);
    }

    store.slotById.set(agent.id, slot);
    store.liveCount++;
    setBit(store.aliveBits, slot);
    store.addLiveType(slot, store.typeCodes[slot]!);
    addNameEntry(store, slot);
  }

  private removeSlot(slot: number): void {
    const store = this.store;
    store.alive[slot] = 0;
    clearBit(store.aliveBits, slot);
    store.removeLiveType(slot, store.typeCodes[slot]!);
    store.slotById.delete(store.docIds[slot]!);
    for (let field = 0; field < FIELD_COUNT; field++) {
      store.fieldLengthSums[field] = store.fieldLengthSums[field]! - store.fieldLengths[slot * FIELD_COUNT + field]!;
    }
    store.liveCount--;
    store.deadCount++;
  }
}
