import { AGENT_TYPES } from '../agents/agents.schemas';
import { clearBit, hasBit, setBit } from './bitsets';
import { hashString } from './text';
import { TailLog } from './tail-log';
import { Vocabulary } from './vocabulary';

/**
 * The storage of the in-memory search index: every array the other parts
 * (ingestion, compaction, scoring, connections) read and write. Per-agent
 * data lives in typed arrays indexed by an internal "slot".
 *
 * - Inverted index term → postings (slot, impact). Postings live in one
 *   compressed array for all terms ("base", CSR layout, slots ascending) plus
 *   a log of "tail" postings for agents added since the last compaction
 *   (TailLog). A tail posting keeps per-field term frequencies; compaction
 *   turns them into a precomputed impact (the BM25F-style term-frequency part
 *   of the score, quantised to 16 bits), so a query does one multiply per posting.
 * - Changing an agent's text, or unlisting it, tombstones its slot; a changed
 *   agent gets a new slot (always above every base slot). Compaction drops
 *   tombstones and renumbers slots. Changes that leave the indexed text alone
 *   (trust score, rating, type) are applied in place.
 * - Tag lists (author, category, capability → slots) for the capability
 *   filter and for connections, and each slot's own tags in one pooled array.
 */

/** The fields of an agent the index reads; `AgentRow` has them all. */
export interface IndexableAgent {
  id: string;
  name: string;
  tagline: string;
  description: string;
  author: string;
  capabilities: string[];
  categories: string[];
  type: string;
  trustScore: number;
  listed: boolean;
  /** `deprecated` agents stay findable but are demoted (DEPRECATED_FACTOR). */
  status?: string;
}

/** Search scores of deprecated agents are multiplied by this: they rank below active agents that match as well. */
export const DEPRECATED_FACTOR = 0.5;

// Fields of the text index, in this order: name, tagline, description, capabilities, author.
export const NAME_FIELD = 0;
export const TAGLINE_FIELD = 1;
export const DESCRIPTION_FIELD = 2;
export const CAPABILITIES_FIELD = 3;
export const AUTHOR_FIELD = 4;
export const FIELD_COUNT = 5;
/**
 * Name highest, then capabilities, then tagline, then description and author: a word in the
 * author's name ("Kestrel Security") says less about what an agent does than the same word in
 * its name, tagline or capabilities.
 */
export const FIELD_WEIGHTS = [5, 2, 1, 3, 0.5] as const;
const FIELD_WEIGHT_SUM = FIELD_WEIGHTS.reduce((sum, weight) => sum + weight, 0);
/** How much a field's length dampens its term frequency (BM25 b). Short fields barely. */
const FIELD_LENGTH_NORMALISATION = [0.3, 0.5, 0.75, 0.3, 0.2] as const;
/** BM25 k1: term-frequency saturation. */
const K1 = 1.2;
/** Per-field term frequencies packed into 14 bits of a tail posting (capped: a 16th repeat says nothing new). */
export const TF_SHIFT = [0, 2, 5, 9, 12] as const;
export const TF_MAX = [3, 7, 15, 7, 3] as const;
export const IMPACT_SCALE = 65535;

export const TAG_AUTHOR = 0;
export const TAG_CATEGORY = 1;
export const TAG_CAPABILITY = 2;

const TYPE_CODES = new Map<string, number>(AGENT_TYPES.map((type, code) => [type, code]));
const UNKNOWN_TYPE_CODE = 255;

/** Tag key of an author, category or capability: trimmed, lowercased, empty means none. */
export function tagKey(value: string): string {
  return value.trim().toLowerCase();
}

/** A run of a term's postings, highest impact first: their slots and impacts. */
export interface RestOrder {
  slots: Int32Array;
  values: Uint16Array;
}

/**
 * Whether name sets read rest orders cut to one of their words' agents (`IndexStore.restOrderWithin`; off: the whole
 * rest orders, for A/B measurements), and how many such cuts are made at most: a few KB each at 100,000 agents, about
 * 20 KB at 1,000,000, and a bound on the memory of queries nobody repeats.
 */
export const RESTRICTED_ORDERS = { enabled: true, max: 2_048 };

/** The last slot numbering handed out (see IndexStore.slotNumbering): unique in the process. */
let lastSlotNumbering = 0;

export class IndexStore {
  readonly vocabulary = new Vocabulary();

  /**
   * Names the current numbering of slots, unique in the process: under one numbering a slot stands for one agent
   * id (a new agent, or a new version of one, takes a new slot; a removed one leaves its slot dead), until a
   * compaction renumbers them (`renumberSlots`). So (slot, numbering) names an id without reading it: the profile
   * cache's handles (TextArena.visitBytesAt).
   */
  slotNumbering = ++lastSlotNumbering;

  /** A new numbering (a compaction moved agents to other slots). */
  renumberSlots(): void {
    this.slotNumbering = ++lastSlotNumbering;
  }

  // Per slot.
  capacity = 0;
  slotCount = 0;
  liveCount = 0;
  deadCount = 0;
  docIds: string[] = [];
  alive = new Uint8Array(0);
  trust = new Float64Array(0);
  /**
   * No slot's trust was ever below this (lowered by each write, never raised; a NaN trust passes any floor anyway):
   * a trust floor at or under it passes every agent, so a filter need not load each agent's trust (a cache miss).
   */
  lowestTrust = Infinity;
  typeCodes = new Uint8Array(0);
  /** 1 for a deprecated agent (demoted in text search). */
  deprecated = new Uint8Array(0);
  fieldLengths = new Uint16Array(0);
  nameKeys = new Float64Array(0);
  /**
   * Hash of the text and tags an agent was indexed from: an unchanged hash
   * (a new rating, a trust score refresh) means no re-indexing. Cheaper than
   * analysing the text again, which matters when the daily trust refresh
   * touches every agent.
   */
  contentHashes = new Float64Array(0);
  tagStarts = new Int32Array(0);
  tagCounts = new Uint16Array(0);
  tagPool = new Int32Array(1024);
  tagPoolLength = 0;
  readonly slotById = new Map<string, number>();
  readonly fieldLengthSums = new Float64Array(FIELD_COUNT);

  // Postings.
  baseTermCount = 0;
  baseOffsets = new Int32Array(1);
  baseSlots = new Int32Array(0);
  baseImpacts = new Uint16Array(0);
  /** Per base posting (by position), whether its agent has the term in its name (see `nameBits`). */
  baseNameBits = new Uint32Array(0);
  readonly tails = new TailLog();
  /** Postings per term, tombstoned ones included (as is the N of idf, so the ratio stays right). */
  documentFrequency = new Int32Array(1024);

  // Accelerators (see accelerators.ts): rebuilt by compaction, kept current by ingestion.
  /** Slots below this are in the base postings; slots from it on only in tails. */
  baseSlotCount = 0;
  aliveBits = new Uint32Array(0);
  /**
   * Per type code, its live slots (aliveBits of that type; undefined: never had one): a type filter tests one bit
   * in a few KB instead of a byte in a column of N (a cache miss per candidate). Kept with aliveBits.
   */
  typeBits: (Uint32Array | undefined)[] = [];
  /** Moves on when an agent's type changes in place, and at each compaction (slots renumbered): see type-lists.ts. */
  typeEpoch = 0;
  termBits: (Uint32Array | undefined)[] = [];
  /**
   * Moves on whenever any term's bitset or name bitset changes (a bit set, or all rebuilt): what is derived from
   * them (word-unions.ts) is stale.
   */
  bitsetsStamp = 0;
  blockMaxes: (Uint16Array | undefined)[] = [];
  blockStarts: (Int32Array | undefined)[] = [];
  /** Per term with block maxima, its blocks ordered by block maximum, highest first. */
  blockOrders: (Int32Array | undefined)[] = [];
  /** Per term with a bitset, its best base postings by impact (slots, and their impacts): see impact-orders.ts. */
  impactOrderSlots: (Int32Array | undefined)[] = [];
  impactOrderValues: (Uint16Array | undefined)[] = [];
  /**
   * Per term with a bitset, the base slots that have it in their name (undefined: none), and the highest impact
   * of its postings outside names: lets the threshold algorithm rule agents out by which words their names hold.
   */
  nameBits: (Uint32Array | undefined)[] = [];
  restMaxes: number[] = [];
  /** Per term with a bitset, how many of its base postings are in the agent's name. */
  nameCounts: number[] = [];
  /**
   * Per term with a bitset and name postings, its rest order: the best of its postings outside names, as the impact
   * order (slots, impacts; undefined: no name postings, the impact order is its rest order). A name set without the
   * term in its names reads only these (name-split.ts).
   */
  restOrderSlots: (Int32Array | undefined)[] = [];
  restOrderValues: (Uint16Array | undefined)[] = [];
  /**
   * Rest orders cut to the agents with a given word in their names (`restOrderWithin`), by word and term; made on
   * first use, dropped with the rest orders at each compaction.
   */
  restOrdersWithin = new Map<string, RestOrder[]>();
  /** How many of those are made. */
  restOrdersWithinCount = 0;
  /**
   * Equal impacts in those orders are by trust (as it was at compaction), then id: the ranking's tie-break.
   * Base slots whose trust changed in place since, with their trust at compaction (see impact-orders.ts);
   * `tieOrderStale` once too many changed to keep them.
   */
  trustAtCompaction = new Map<number, number>();
  tieOrderStale = false;
  /** The orders were built without tie order (mid-batch compaction): rebuilt at the end of the catch-up. */
  tieOrderDeferred = false;
  /**
   * Per base slot, the place of its id among the base slots' ids in ascending order (see `buildIdRanks`): the
   * ranking's last tie-break as an integer compare. Tail slots have none: their ids are compared as strings.
   */
  idRanks = new Int32Array(0);
  /**
   * Per very frequent term, its impact at each base slot (0 = no posting), made on the term's first query
   * (`impactColumn`): only the frequent terms people search for cost their 2 bytes a slot.
   */
  impactColumns: (Uint16Array | undefined)[] = [];
  /** Base postings from which a term has an impact column (set by each compaction). */
  columnMinimum = Infinity;
  /** Exact-name lookup: bucket → slot + 1 of the newest entry, and each slot's next entry (0 = none). */
  nameHeads = new Int32Array(1024);
  nameNext = new Int32Array(0);

  // Tags.
  /** Tag ids by key, one map per kind (author, category, capability). */
  readonly tagIdsByKind = [new Map<string, number>(), new Map<string, number>(), new Map<string, number>()];
  readonly tagKinds: number[] = [];
  readonly tagKeys: string[] = [];
  readonly tagSlots: number[][] = [];
  /** Per tag too common for connections to read in full, a bitset of its slots and how much of its list it holds (see connections). */
  tagBits: (Uint32Array | undefined)[] = [];
  tagBitsFilled: number[] = [];

  // Query scratch, reused: a query is synchronous, so one set is enough. All zero between queries.
  termBest = new Float32Array(0);
  termTouched = new Int32Array(0);
  accumulated = new Float64Array(0);
  /** Connection scores per slot (zero between requests). */
  connectionScores = new Uint16Array(0);
  matchedMasks = new Uint32Array(0);
  accumulatedTouched = new Int32Array(0);
  marks = new Uint32Array(0);
  private markStamp = 0;

  documentFrequencyOf(termId: number): number {
    return this.documentFrequency[termId] ?? 0;
  }

  /**
   * The term's impact column, made from its base postings the first time a query asks (they change only at the
   * next compaction, which drops the columns); undefined for a term with fewer than `columnMinimum` postings.
   */
  impactColumn(termId: number): Uint16Array | undefined {
    const made = this.impactColumns[termId];
    if (made !== undefined || termId >= this.baseTermCount) return made;
    const start = this.baseOffsets[termId]!;
    const end = this.baseOffsets[termId + 1]!;
    if (end - start < this.columnMinimum) return undefined;
    const column = new Uint16Array(this.baseSlotCount);
    for (let p = start; p < end; p++) column[this.baseSlots[p]!] = this.baseImpacts[p]!;
    this.impactColumns[termId] = column;
    return column;
  }

  /**
   * The term's rest order (`restOrderSlots`; its impact order when no name has it) cut to the slots set in `names`,
   * the name bitset of a word (`nameKey` names it: its expansions' term ids), made the first time a name set holding
   * the word reads the term (set-reads.ts) and kept until the next compaction, which rebuilds the orders and the name
   * bitsets it is made of. Undefined for a term without an impact order, or once `RESTRICTED_ORDERS.max` are made.
   */
  restOrderWithin(nameKey: string, names: Uint32Array, termId: number): RestOrder | undefined {
    let byTerm = this.restOrdersWithin.get(nameKey);
    if (byTerm === undefined) this.restOrdersWithin.set(nameKey, (byTerm = []));
    const made = byTerm[termId];
    if (made !== undefined) return made;
    const slots = this.restOrderSlots[termId] ?? this.impactOrderSlots[termId];
    const values = this.restOrderValues[termId] ?? this.impactOrderValues[termId];
    if (slots === undefined || values === undefined || this.restOrdersWithinCount >= RESTRICTED_ORDERS.max) return undefined;
    let count = 0;
    for (const slot of slots) if (hasBit(names, slot)) count++;
    const order: RestOrder = { slots: new Int32Array(count), values: new Uint16Array(count) };
    for (let i = 0, j = 0; i < slots.length; i++) {
      if (!hasBit(names, slots[i]!)) continue;
      order.slots[j] = slots[i]!;
      order.values[j++] = values[i]!;
    }
    byTerm[termId] = order;
    this.restOrdersWithinCount++;
    return order;
  }

  internTag(kind: number, key: string): number {
    const ids = this.tagIdsByKind[kind]!;
    let tag = ids.get(key);
    if (tag === undefined) {
      tag = this.tagKinds.length;
      ids.set(key, tag);
      this.tagKinds.push(kind);
      this.tagKeys.push(key);
      this.tagSlots.push([]);
    }
    return tag;
  }

  slotHasTag(slot: number, tag: number): boolean {
    const start = this.tagStarts[slot]!;
    const end = start + this.tagCounts[slot]!;
    for (let i = start; i < end; i++) if (this.tagPool[i] === tag) return true;
    return false;
  }

  /** BM25F-style term-frequency part of a posting, in [0, 1): per-field saturation, weighted by field. */
  impactOf(packed: number, slot: number): number {
    let sum = 0;
    for (let field = 0; field < FIELD_COUNT; field++) {
      const frequency = (packed >> TF_SHIFT[field]!) & TF_MAX[field]!;
      if (frequency === 0) continue;
      const average = this.liveCount > 0 ? this.fieldLengthSums[field]! / this.liveCount : 1;
      const b = FIELD_LENGTH_NORMALISATION[field]!;
      const norm = 1 - b + (b * this.fieldLengths[slot * FIELD_COUNT + field]!) / Math.max(average, 1);
      const normalised = frequency / norm;
      sum += (FIELD_WEIGHTS[field]! * normalised) / (K1 + normalised);
    }
    return sum / FIELD_WEIGHT_SUM;
  }

  nextMarkStamp(): number {
    if (this.markStamp >= 0xfffffffe) {
      this.marks.fill(0);
      this.markStamp = 0;
    }
    return ++this.markStamp;
  }

  ensureCapacity(slots: number): void {
    if (slots <= this.capacity) return;
    const capacity = Math.max(1024, slots, this.capacity * 2);
    const grow = <T extends Uint8Array | Uint16Array | Uint32Array | Int32Array | Float32Array | Float64Array>(
      array: T,
      make: (length: number) => T,
      perSlot = 1,
    ): T => {
      const grown = make(capacity * perSlot);
      grown.set(array);
      return grown;
    };
    this.alive = grow(this.alive, (n) => new Uint8Array(n));
    this.trust = grow(this.trust, (n) => new Float64Array(n));
    this.typeCodes = grow(this.typeCodes, (n) => new Uint8Array(n));
    this.deprecated = grow(this.deprecated, (n) => new Uint8Array(n));
    this.fieldLengths = grow(this.fieldLengths, (n) => new Uint16Array(n), FIELD_COUNT);
    this.nameKeys = grow(this.nameKeys, (n) => new Float64Array(n));
    this.contentHashes = grow(this.contentHashes, (n) => new Float64Array(n));
    this.tagStarts = grow(this.tagStarts, (n) => new Int32Array(n));
    this.tagCounts = grow(this.tagCounts, (n) => new Uint16Array(n));
    // Scratch is all zero between queries, so fresh arrays are as good as copies.
    this.termBest = new Float32Array(capacity);
    this.termTouched = new Int32Array(capacity);
    this.accumulated = new Float64Array(capacity);
    this.matchedMasks = new Uint32Array(capacity);
    this.accumulatedTouched = new Int32Array(capacity);
    this.marks = grow(this.marks, (n) => new Uint32Array(n));
    this.nameNext = grow(this.nameNext, (n) => new Int32Array(n));
    const aliveBits = new Uint32Array((capacity + 31) >>> 5);
    aliveBits.set(this.aliveBits.subarray(0, Math.min(this.aliveBits.length, aliveBits.length)));
    this.aliveBits = aliveBits;
    this.typeBits = this.typeBits.map((bits) => {
      if (bits === undefined) return undefined;
      const grown = new Uint32Array(aliveBits.length);
      grown.set(bits.subarray(0, Math.min(bits.length, grown.length)));
      return grown;
    });
    this.capacity = capacity;
  }

  /** Live slot `slot` is of type `code` (typeBits). */
  addLiveType(slot: number, code: number): void {
    const bits = (this.typeBits[code] ??= new Uint32Array(this.aliveBits.length));
    setBit(bits, slot);
  }

  /** Slot `slot` is no longer live of type `code` (unlisted, or its type changed). */
  removeLiveType(slot: number, code: number): void {
    const bits = this.typeBits[code];
    if (bits !== undefined) clearBit(bits, slot);
  }
}

/** Chained per field, so no separator can be confused with content. */
export function contentHashOf(agent: IndexableAgent): number {
  let hash = hashString(agent.name);
  hash = hashString(agent.tagline, hash);
  hash = hashString(agent.description, hash);
  hash = hashString(agent.author, hash);
  hash = hashString('\u0000', hash);
  for (const capability of agent.capabilities) hash = hashString(capability, hash);
  hash = hashString('\u0000', hash);
  for (const category of agent.categories) hash = hashString(category, hash);
  return hash;
}

export function typeCodeOf(type: string): number {
  return TYPE_CODES.get(type) ?? UNKNOWN_TYPE_CODE;
}

export function quantiseImpact(impact: number): number {
  return Math.max(1, Math.min(IMPACT_SCALE, Math.round(impact * IMPACT_SCALE)));
}
