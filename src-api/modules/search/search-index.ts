import { AGENT_TYPES } from '../agents/agents.schemas';
import { forEachIndexTerm, hashString, nameKeyOf, parseQuery, type ParsedQuery, type TermVisitor } from './text';
import { TailLog } from './tail-log';
import { Vocabulary, type EditAllowance } from './vocabulary';

/**
 * The in-memory search index over listed agents.
 *
 * Layout (all per-agent data in typed arrays indexed by an internal "slot"):
 *
 * - Inverted index term → postings (slot, impact). Postings live in one
 *   compressed array for all terms ("base", CSR layout) plus a log of
 *   "tail" postings for agents added since the last compaction (TailLog). A
 *   tail posting keeps per-field term frequencies; compaction turns them
 *   into a precomputed impact (the BM25F-style term-frequency part of the
 *   score, quantised to 16 bits), so a query does one multiply per posting.
 * - Changing an agent's text, or unlisting it, tombstones its slot; a changed
 *   agent gets a new slot. Compaction drops tombstones and renumbers slots.
 *   Changes that leave the indexed text alone (trust score, rating, type) are
 *   applied in place.
 * - Tag lists (author, category, capability → slots) for the capability
 *   filter and for connections, and each slot's own tags in one pooled array.
 *
 * Scoring of a text query: each query term is expanded to vocabulary terms
 * (exact 1.0; prefix completions 0.6–0.9, closer to 0.9 the less is missing;
 * typos 0.4–0.5 for one edit and 0.24–0.3 for two, higher with more trigrams
 * in common), each posting contributes factor × idf/idfMax × impact, and a
 * document keeps its best expansion per query term. See `search` for how the
 * terms combine into the public score.
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
}

export interface SearchFilters {
  /** Exact agent type. */
  type?: string;
  /** Only agents with trust_score ≥ this. */
  minTrust?: number;
  /** Every one of these capabilities, compared case-insensitively. */
  capabilities?: readonly string[];
}

export interface ScoredId {
  id: string;
  score: number;
}

export interface SearchHits {
  hits: ScoredId[];
  /** Matches before the limit. */
  total: number;
}

// Fields of the text index, in this order: name, tagline, description, capabilities, author.
const NAME_FIELD = 0;
const TAGLINE_FIELD = 1;
const DESCRIPTION_FIELD = 2;
const AUTHOR_FIELD = 4;
const FIELD_COUNT = 5;
/** Name highest, then capabilities and author, then tagline, then description. */
export const FIELD_WEIGHTS = [5, 2, 1, 3, 3] as const;
const FIELD_WEIGHT_SUM = FIELD_WEIGHTS.reduce((sum, weight) => sum + weight, 0);
/** How much a field's length dampens its term frequency (BM25 b). Short fields barely. */
const FIELD_LENGTH_NORMALISATION = [0.3, 0.5, 0.75, 0.3, 0.2] as const;
/** BM25 k1: term-frequency saturation. */
const K1 = 1.2;
/** Per-field term frequencies packed into 14 bits of a tail posting (capped: a 16th repeat says nothing new). */
const TF_SHIFT = [0, 2, 5, 9, 12] as const;
const TF_MAX = [3, 7, 15, 7, 3] as const;
// Compaction policy: tails up to 10 % of the base (at least 32k postings), tombstones up to 20 % of slots
// (at least 1,024); during a bulk catch-up, tails up to 1M postings (about 12 MB) before compacting early: measured
// at 100,000 agents, larger tails built no faster (3.5–4 s either way, 5 s at 8M) and left more freed memory behind.
const TAIL_SHARE_LIMIT = 0.1;
const MIN_TAIL_POSTINGS_LIMIT = 1 << 15;
const DEAD_SHARE_LIMIT = 0.2;
const MIN_DEAD_SLOTS_LIMIT = 1024;
const BULK_TAIL_POSTINGS_LIMIT = 1 << 20;
const IMPACT_SCALE = 65535;

// Query expansion.
export const MAX_QUERY_TERMS = 16;
const PREFIX_MIN_LENGTH = 2;
const MAX_PREFIX_EXPANSIONS = 6;
/**
 * Typo tolerance: a query word of ONE_EDIT_MIN_LENGTH letters or more may be
 * one edit off; two edits when the longer of the typed and the vocabulary
 * word has TWO_EDITS_MIN_LENGTH letters or more ("mirimir" for "mirsilmir":
 * the typed word came out short because letters were dropped).
 */
export const ONE_EDIT_MIN_LENGTH = 4;
export const TWO_EDITS_MIN_LENGTH = 8;
export const allowedEdits: EditAllowance = (queryLength, termLength) =>
  queryLength < ONE_EDIT_MIN_LENGTH ? 0 : Math.max(queryLength, termLength) >= TWO_EDITS_MIN_LENGTH ? 2 : 1;
const MAX_FUZZY_EXPANSIONS = 8;
/** A term this many agents use is taken as spelt right: no typo expansion (saves time, avoids "data" → "date"). */
const FUZZY_SKIP_DOCUMENT_FREQUENCY = 10;
const PREFIX_FACTOR_MIN = 0.6;
const PREFIX_FACTOR_SPAN = 0.3;
/** Typo factors by edit count, scaled by 0.8–1.0 with trigram similarity; one edit always beats two. */
const FUZZY_FACTOR = [1, 0.5, 0.3] as const;
const FUZZY_SIMILARITY_SPAN = 0.2;
const EXPANSION_CACHE_SIZE = 10_000;

// Connections.
export const CONNECTION_WEIGHTS = { author: 4, category: 3, capability: 1 } as const;
export interface SearchIndexOptions {
  /** Tag-list entries read in full per connections request; lists beyond it are sampled. */
  connectionScanBudget: number;
  /** Entries sampled from each list that did not fit the budget. */
  connectionSamplePerList: number;
}

const DEFAULT_OPTIONS: SearchIndexOptions = { connectionScanBudget: 60_000, connectionSamplePerList: 4_000 };

const TAG_AUTHOR = 0;
const TAG_CATEGORY = 1;
const TAG_CAPABILITY = 2;
const TAG_WEIGHT = [CONNECTION_WEIGHTS.author, CONNECTION_WEIGHTS.category, CONNECTION_WEIGHTS.capability] as const;
const TAG_KIND_NAMES = ['author', 'category', 'capability'] as const;

/** A related agent: its score and the tags (by kind, as keys) it shares with the requested one. */
export interface ConnectionHit extends ScoredId {
  shared: { kind: (typeof TAG_KIND_NAMES)[number]; key: string }[];
}

const TYPE_CODES = new Map<string, number>(AGENT_TYPES.map((type, code) => [type, code]));
const UNKNOWN_TYPE_CODE = 255;

interface Expansions {
  terms: { termId: number; factor: number }[];
  /** Agents with the query term itself (0: it is not a known word). */
  exactFrequency: number;
}

interface PreparedFilter {
  typeCode: number;
  minTrust: number;
  /** 0: no capability filter; else slots with mark[slot] === capabilityStamp pass. */
  capabilityStamp: number;
  /** With a capability filter: the shortest required list, a superset of the passing slots. */
  candidates: number[] | null;
}

/** Tag key of an author, category or capability: trimmed, lowercased, empty means none. */
export function tagKey(value: string): string {
  return value.trim().toLowerCase();
}

export class SearchIndex {
  readonly vocabulary = new Vocabulary();
  private readonly options: SearchIndexOptions;

  constructor(options: Partial<SearchIndexOptions> = {}) {
    this.options = { ...DEFAULT_OPTIONS, ...options };
  }

  // Per slot.
  private capacity = 0;
  private slotCount = 0;
  private liveCount = 0;
  private deadCount = 0;
  private docIds: string[] = [];
  private alive = new Uint8Array(0);
  private trust = new Float64Array(0);
  private typeCodes = new Uint8Array(0);
  private fieldLengths = new Uint16Array(0);
  private nameKeys = new Float64Array(0);
  /**
   * Hash of the text and tags an agent was indexed from: an unchanged hash
   * (a new rating, a trust score refresh) means no re-indexing. Cheaper than
   * analysing the text again, which matters when the daily trust refresh
   * touches every agent.
   */
  private contentHashes = new Float64Array(0);
  private tagStarts = new Int32Array(0);
  private tagCounts = new Uint16Array(0);
  private tagPool = new Int32Array(1024);
  private tagPoolLength = 0;
  private readonly slotById = new Map<string, number>();
  private readonly fieldLengthSums = new Float64Array(FIELD_COUNT);

  // Postings.
  private baseTermCount = 0;
  private baseOffsets = new Int32Array(1);
  private baseSlots = new Int32Array(0);
  private baseImpacts = new Uint16Array(0);
  private readonly tails = new TailLog();
  /** Postings per term, tombstoned ones included (as is the N of idf, so the ratio stays right). */
  private documentFrequency = new Int32Array(1024);

  // Tags.
  /** Tag ids by key, one map per kind (author, category, capability). */
  private readonly tagIdsByKind = [new Map<string, number>(), new Map<string, number>(), new Map<string, number>()];
  private readonly tagKinds: number[] = [];
  private readonly tagKeys: string[] = [];
  private readonly tagSlots: number[][] = [];

  // Query scratch, reused: a query is synchronous, so one set is enough.
  private termBest = new Float32Array(0);
  private termTouched = new Int32Array(0);
  private accumulated = new Float64Array(0);
  /** Connection scores per slot (zero between requests). */
  private connectionScores = new Uint16Array(0);
  private matchedMasks = new Uint32Array(0);
  private accumulatedTouched = new Int32Array(0);
  private marks = new Uint32Array(0);
  private markStamp = 0;

  // Indexing scratch: per term id, packed frequencies + 1 (0 = not in this agent); and one agent's analysis.
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

  private readonly expansionCache = new Map<string, Expansions>();
  private expansionCacheVocabularySize = 0;

  /** Listed agents in the index. */
  get size(): number {
    return this.liveCount;
  }

  has(id: string): boolean {
    return this.slotById.has(id);
  }

  /** Adds, updates or (when unlisted) removes one agent. */
  apply(agent: IndexableAgent): void {
    const slot = this.slotById.get(agent.id);
    if (!agent.listed) {
      if (slot !== undefined) this.removeSlot(slot);
      return;
    }
    const contentHash = contentHashOf(agent);
    if (slot !== undefined && this.contentHashes[slot] === contentHash) {
      this.trust[slot] = agent.trustScore;
      this.typeCodes[slot] = typeCodeOf(agent.type);
      return;
    }
    if (slot !== undefined) this.removeSlot(slot);
    this.stage(agent);
    this.commitStaged(agent, contentHash);
  }

  /**
   * Compacts when tombstones or tail postings have grown past their share
   * (tails are slower to score). In the middle of a large catch-up
   * (`midBatch`) only a memory guard applies, so that loading 100,000 agents
   * compacts once, at the end.
   */
  maybeCompact(midBatch = false): void {
    if (midBatch) {
      if (this.tails.length > BULK_TAIL_POSTINGS_LIMIT) this.compact();
      return;
    }
    const tailLimit = Math.max(MIN_TAIL_POSTINGS_LIMIT, this.baseSlots.length * TAIL_SHARE_LIMIT);
    if (this.tails.length > tailLimit || this.deadCount > Math.max(MIN_DEAD_SLOTS_LIMIT, this.slotCount * DEAD_SHARE_LIMIT)) this.compact();
  }

  /**
   * Agents matching `query`, best first.
   *
   * Public score = matched query terms + 1 for an exact-name match + relevance,
   * where relevance in [0, 1) is the mean over query terms of the best
   * expansion's factor × idf/idfMax × impact. So an exact name ranks first,
   * then agents matching more query terms, then by BM25F relevance. When some
   * agent matches every query term only such agents are returned; otherwise
   * any agent matching at least one. Ties: trust score, then id.
   *
   * An empty query (no letters or digits) lists every agent that passes the
   * filters, by trust score, with score 0.
   */
  search(query: string, limit: number, filters: SearchFilters = {}): SearchHits {
    const filter = this.prepareFilter(filters);
    if (filter === null) return { hits: [], total: 0 };
    const parsed = parseQuery(query, MAX_QUERY_TERMS);
    if (parsed.terms.length === 0) return this.browse(limit, filter);
    return this.textSearch(parsed, limit, filter);
  }

  /**
   * Agents related to `id` by shared categories, author and capabilities,
   * best first; undefined when `id` is not in the index.
   */
  connections(id: string, limit: number): ConnectionHit[] | undefined {
    const source = this.slotById.get(id);
    if (source === undefined) return undefined;
    const sourceTags = Array.from(this.tagPool.subarray(this.tagStarts[source]!, this.tagStarts[source]! + this.tagCounts[source]!));
    sourceTags.sort((a, b) => this.tagSlots[a]!.length - this.tagSlots[b]!.length);

    // Small integer scores in their own array: a typical request adds up some 16,000 list entries, and
    // 2 bytes a slot keep those random reads in cache. `counts[score]` follows how many agents have each
    // score, so the ranking below can skip all but the best. Dead slots and the source are left at 0.
    if (this.connectionScores.length < this.slotCount) this.connectionScores = new Uint16Array(this.accumulated.length);
    const scores = this.connectionScores;
    const touched = this.accumulatedTouched;
    const alive = this.alive;
    let maxScore = 0;
    for (const tag of sourceTags) maxScore += TAG_WEIGHT[this.tagKinds[tag]!]!;
    const counts = new Int32Array(maxScore + 1);
    let touchedCount = 0;
    let budget = this.options.connectionScanBudget;
    const sampled: number[] = [];
    // Rarest lists first, in full while the budget lasts.
    for (const tag of sourceTags) {
      const list = this.tagSlots[tag]!;
      if (list.length > budget) {
        sampled.push(tag);
        continue;
      }
      budget -= list.length;
      const weight = TAG_WEIGHT[this.tagKinds[tag]!]!;
      for (let i = 0; i < list.length; i++) {
        const slot = list[i]!;
        const score = scores[slot]!;
        if (score === 0) {
          if (alive[slot] === 0 || slot === source) continue;
          touched[touchedCount++] = slot;
        } else counts[score]!--;
        scores[slot] = score + weight;
        counts[score + weight]!++;
      }
    }
    if (sampled.length > 0) {
      // Very common tags: exact for the agents found so far, then a spread sample for new ones.
      for (let i = 0; i < touchedCount; i++) {
        const slot = touched[i]!;
        for (const tag of sampled) if (this.slotHasTag(slot, tag)) scores[slot] = scores[slot]! + TAG_WEIGHT[this.tagKinds[tag]!]!;
      }
      for (const tag of sampled) {
        const list = this.tagSlots[tag]!;
        const stride = Math.max(1, Math.ceil(list.length / this.options.connectionSamplePerList));
        for (let i = 0; i < list.length; i += stride) {
          const slot = list[i]!;
          if (scores[slot] !== 0 || alive[slot] === 0 || slot === source) continue;
          touched[touchedCount++] = slot;
          for (const sourceTag of sourceTags) {
            if (this.slotHasTag(slot, sourceTag)) scores[slot] = scores[slot]! + TAG_WEIGHT[this.tagKinds[sourceTag]!]!;
          }
        }
      }
      counts.fill(0);
      for (let i = 0; i < touchedCount; i++) counts[scores[touched[i]!]!]!++;
    }

    // Rank (by score, trust, id) only the agents at or above the score where the top `limit` end:
    // thousands of agents sharing one category stay out of the heap.
    let threshold = 1;
    for (let score = maxScore, above = 0; score >= 1; score--) {
      above += counts[score]!;
      if (above >= limit) {
        threshold = score;
        break;
      }
    }
    const top = new TopK(limit, this.trust, this.docIds);
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i]!;
      if (scores[slot]! >= threshold) top.offer(slot, scores[slot]!);
      scores[slot] = 0;
    }
    return top.sorted().map(({ slot, score }) => ({
      id: this.docIds[slot]!,
      score,
      shared: sourceTags
        .filter((tag) => this.slotHasTag(slot, tag))
        .map((tag) => ({ kind: TAG_KIND_NAMES[this.tagKinds[tag]!]!, key: this.tagKeys[tag]! })),
    }));
  }

  /** Rewrites the postings without tombstones, turns tails into base postings and renumbers slots densely. */
  compact(): void {
    const vocabularySize = this.vocabulary.size;
    const oldSlotCount = this.slotCount;
    const newSlotOf = new Int32Array(oldSlotCount);
    let live = 0;
    for (let slot = 0; slot < oldSlotCount; slot++) newSlotOf[slot] = this.alive[slot] === 1 ? live++ : -1;

    // Postings: count, then fill, term by term (base entries first: their slots are the older, smaller ones).
    const offsets = new Int32Array(vocabularySize + 1);
    let total = 0;
    for (let termId = 0; termId < vocabularySize; termId++) {
      offsets[termId] = total;
      if (termId < this.baseTermCount) {
        for (let p = this.baseOffsets[termId]!; p < this.baseOffsets[termId + 1]!; p++) if (newSlotOf[this.baseSlots[p]!]! >= 0) total++;
      }
      for (let entry = this.tails.head(termId); entry !== 0; entry = this.tails.previous(entry)) {
        if (newSlotOf[this.tails.slot(entry)]! >= 0) total++;
      }
    }
    offsets[vocabularySize] = total;
    const slots = new Int32Array(total);
    const impacts = new Uint16Array(total);
    const documentFrequency = new Int32Array(Math.max(1024, vocabularySize * 2));
    let cursor = 0;
    for (let termId = 0; termId < vocabularySize; termId++) {
      if (termId < this.baseTermCount) {
        for (let p = this.baseOffsets[termId]!; p < this.baseOffsets[termId + 1]!; p++) {
          const newSlot = newSlotOf[this.baseSlots[p]!]!;
          if (newSlot < 0) continue;
          slots[cursor] = newSlot;
          impacts[cursor++] = this.baseImpacts[p]!;
        }
      }
      // Tail entries come newest first: fill their part from the end, so slots stay in ascending order.
      let at = cursor;
      for (let entry = this.tails.head(termId); entry !== 0; entry = this.tails.previous(entry)) {
        if (newSlotOf[this.tails.slot(entry)]! >= 0) at++;
      }
      cursor = at;
      for (let entry = this.tails.head(termId); entry !== 0; entry = this.tails.previous(entry)) {
        const slot = this.tails.slot(entry);
        const newSlot = newSlotOf[slot]!;
        if (newSlot < 0) continue;
        slots[--at] = newSlot;
        impacts[at] = quantiseImpact(this.impactOf(this.tails.frequencies(entry), slot));
      }
      documentFrequency[termId] = cursor - offsets[termId]!;
    }
    this.baseOffsets = offsets;
    this.baseSlots = slots;
    this.baseImpacts = impacts;
    this.baseTermCount = vocabularySize;
    this.documentFrequency = documentFrequency;
    this.tails.clear();

    // Per-slot data moves down in place (a new slot is never above its old one); tags are re-pooled.
    const tagPool = new Int32Array(Math.max(1024, this.tagPoolLength));
    let poolLength = 0;
    for (let slot = 0; slot < oldSlotCount; slot++) {
      const target = newSlotOf[slot]!;
      if (target < 0) continue;
      this.docIds[target] = this.docIds[slot]!;
      this.alive[target] = 1;
      this.trust[target] = this.trust[slot]!;
      this.typeCodes[target] = this.typeCodes[slot]!;
      this.nameKeys[target] = this.nameKeys[slot]!;
      this.contentHashes[target] = this.contentHashes[slot]!;
      this.fieldLengths.copyWithin(target * FIELD_COUNT, slot * FIELD_COUNT, (slot + 1) * FIELD_COUNT);
      const start = this.tagStarts[slot]!;
      const count = this.tagCounts[slot]!;
      tagPool.set(this.tagPool.subarray(start, start + count), poolLength);
      this.tagStarts[target] = poolLength;
      this.tagCounts[target] = count;
      poolLength += count;
      this.slotById.set(this.docIds[target]!, target);
    }
    this.alive.fill(0, live, oldSlotCount);
    this.docIds.length = live;
    this.tagPool = tagPool;
    this.tagPoolLength = poolLength;
    for (let tag = 0; tag < this.tagSlots.length; tag++) {
      const list = this.tagSlots[tag]!;
      let kept = 0;
      for (const slot of list) {
        const newSlot = newSlotOf[slot]!;
        if (newSlot >= 0) list[kept++] = newSlot;
      }
      list.length = kept;
    }
    this.slotCount = live;
    this.deadCount = 0;
    this.vocabulary.mergePending();
  }

  // ——— queries ———

  private textSearch(parsed: ParsedQuery, limit: number, filter: PreparedFilter): SearchHits {
    const termCount = parsed.terms.length;
    const fullMask = termCount === 32 ? 0xffffffff : (1 << termCount) - 1;
    // Completions only for the last word, the one still being typed: cheaper, and less noise.
    const plan = parsed.terms.map((term, index) => {
      const expansions = this.expand(term, index === termCount - 1);
      const postings = expansions.terms.reduce((sum, { termId }) => sum + (this.documentFrequency[termId] ?? 0), 0);
      return { bit: 1 << index, expansions, postings };
    });
    // Rarest first: then, when every word is required, each later word only looks at the few agents still in the running.
    plan.sort((a, b) => a.postings - b.postings);

    let touchedCount = this.collect(plan, filter, true);
    const masks = this.matchedMasks;
    const touched = this.accumulatedTouched;
    let complete = 0;
    for (let i = 0; i < touchedCount; i++) if (masks[touched[i]!] === fullMask) complete++;
    const requireAll = complete > 0;
    if (!requireAll && termCount > 1) {
      // No agent has every word: start again, counting agents with any of them.
      this.resetAccumulated(touchedCount);
      touchedCount = this.collect(plan, filter, false);
    }

    const accumulated = this.accumulated;
    const top = new TopK(limit, this.trust, this.docIds);
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i]!;
      const mask = masks[slot]!;
      if (!requireAll || mask === fullMask) {
        const relevance = Math.min(0.9999, accumulated[slot]! / termCount);
        const exactName = this.nameKeys[slot] === parsed.nameKey ? 1 : 0;
        top.offer(slot, bitCount(mask) + exactName + relevance);
      }
    }
    this.resetAccumulated(touchedCount);
    return {
      hits: top.sorted().map(({ slot, score }) => this.scored(slot, Math.floor(score * 10_000) / 10_000)),
      total: requireAll ? complete : touchedCount,
    };
  }

  /**
   * Scores the query words' postings into `accumulated` and `matchedMasks`
   * (one bit per query word) for the agents passing the filter; returns how
   * many agents are in `accumulatedTouched`. When `conjunctive`, a word only
   * scores agents that matched every word before it (so the result holds all
   * the agents matching every word, and some that do not).
   */
  private collect(plan: { bit: number; expansions: Expansions }[], filter: PreparedFilter, conjunctive: boolean): number {
    const documents = Math.max(1, this.slotCount);
    const maxIdf = Math.log(1 + (documents - 0.5) / 1.5);
    const idf = (frequency: number): number => Math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5));
    const best = this.termBest;
    const termTouched = this.termTouched;
    const accumulated = this.accumulated;
    const masks = this.matchedMasks;
    const touched = this.accumulatedTouched;
    const { alive, trust, typeCodes, marks, baseSlots, baseImpacts, baseOffsets, tails } = this;
    const { typeCode, minTrust, capabilityStamp } = filter;
    let touchedCount = 0;
    let seenMask = 0;

    for (const { bit, expansions } of plan) {
      // -1: any agent; otherwise only agents whose matched words are exactly those seen so far.
      const required = conjunctive ? seenMask : -1;
      let termTouchedCount = 0;
      // A completion or a typo never counts as rarer than the word actually typed, so exact words rank first.
      const idfCap = expansions.exactFrequency > 0 ? idf(expansions.exactFrequency) : Infinity;
      for (const { termId, factor } of expansions.terms) {
        const frequency = this.documentFrequency[termId]!;
        if (frequency === 0) continue;
        const weight = (factor * Math.min(idf(frequency), idfCap)) / maxIdf;
        if (termId < this.baseTermCount) {
          const scaled = weight / IMPACT_SCALE;
          const end = baseOffsets[termId + 1]!;
          for (let p = baseOffsets[termId]!; p < end; p++) {
            const slot = baseSlots[p]!;
            if (required >= 0 && masks[slot] !== required) continue;
            if (alive[slot] === 0) continue;
            if (typeCode >= 0 && typeCodes[slot] !== typeCode) continue;
            if (trust[slot]! < minTrust) continue;
            if (capabilityStamp !== 0 && marks[slot] !== capabilityStamp) continue;
            const score = scaled * baseImpacts[p]!;
            if (score > best[slot]!) {
              if (best[slot] === 0) termTouched[termTouchedCount++] = slot;
              best[slot] = score;
            }
          }
        }
        for (let entry = tails.head(termId); entry !== 0; entry = tails.previous(entry)) {
          const slot = tails.slot(entry);
          if (required >= 0 && masks[slot] !== required) continue;
          if (alive[slot] === 0) continue;
          if (typeCode >= 0 && typeCodes[slot] !== typeCode) continue;
          if (trust[slot]! < minTrust) continue;
          if (capabilityStamp !== 0 && marks[slot] !== capabilityStamp) continue;
          const score = weight * this.impactOf(tails.frequencies(entry), slot);
          if (score > best[slot]!) {
            if (best[slot] === 0) termTouched[termTouchedCount++] = slot;
            best[slot] = score;
          }
        }
      }
      for (let i = 0; i < termTouchedCount; i++) {
        const slot = termTouched[i]!;
        if (masks[slot] === 0) touched[touchedCount++] = slot;
        accumulated[slot] = accumulated[slot]! + best[slot]!;
        masks[slot] = masks[slot]! | bit;
        best[slot] = 0;
      }
      seenMask |= bit;
      // Nobody matched every word so far: nobody will.
      if (conjunctive && termTouchedCount === 0) break;
    }
    return touchedCount;
  }

  private resetAccumulated(touchedCount: number): void {
    for (let i = 0; i < touchedCount; i++) {
      const slot = this.accumulatedTouched[i]!;
      this.accumulated[slot] = 0;
      this.matchedMasks[slot] = 0;
    }
  }

  private browse(limit: number, filter: PreparedFilter): SearchHits {
    const { alive, trust, typeCodes, marks } = this;
    const { typeCode, minTrust, capabilityStamp, candidates } = filter;
    const top = new TopK(limit, trust, this.docIds);
    let total = 0;
    const consider = (slot: number): void => {
      if (alive[slot] === 0) return;
      if (typeCode >= 0 && typeCodes[slot] !== typeCode) return;
      if (trust[slot]! < minTrust) return;
      if (capabilityStamp !== 0 && marks[slot] !== capabilityStamp) return;
      total++;
      top.offer(slot, 0);
    };
    if (candidates) for (const slot of candidates) consider(slot);
    else for (let slot = 0; slot < this.slotCount; slot++) consider(slot);
    return { hits: top.sorted().map(({ slot }) => this.scored(slot, 0)), total };
  }

  private scored(slot: number, score: number): ScoredId {
    return { id: this.docIds[slot]!, score };
  }

  /** Filters as typed-array tests; null when nothing can pass (a capability no agent has). */
  private prepareFilter(filters: SearchFilters): PreparedFilter | null {
    const typeCode = filters.type === undefined ? -1 : typeCodeOf(filters.type);
    const minTrust = filters.minTrust ?? -Infinity;
    const keys = [...new Set((filters.capabilities ?? []).map(tagKey).filter((key) => key.length > 0))];
    if (keys.length === 0) return { typeCode, minTrust, capabilityStamp: 0, candidates: null };
    const lists: number[][] = [];
    for (const key of keys) {
      const tag = this.tagIdsByKind[TAG_CAPABILITY]!.get(key);
      if (tag === undefined) return null;
      lists.push(this.tagSlots[tag]!);
    }
    lists.sort((a, b) => a.length - b.length);
    // Intersect by re-stamping: a slot carries the newest stamp only if it is in every list so far.
    let stamp = this.nextMarkStamp();
    for (const slot of lists[0]!) this.marks[slot] = stamp;
    for (let i = 1; i < lists.length; i++) {
      const next = this.nextMarkStamp();
      for (const slot of lists[i]!) if (this.marks[slot] === stamp) this.marks[slot] = next;
      stamp = next;
    }
    return { typeCode, minTrust, capabilityStamp: stamp, candidates: lists[0]! };
  }

  /** The vocabulary terms a query term stands for, cached until the vocabulary grows. */
  private expand(term: string, withPrefixes: boolean): Expansions {
    if (this.expansionCacheVocabularySize !== this.vocabulary.size || this.expansionCache.size >= EXPANSION_CACHE_SIZE) {
      this.expansionCache.clear();
      this.expansionCacheVocabularySize = this.vocabulary.size;
    }
    const cacheKey = withPrefixes ? `${term}*` : term;
    const cached = this.expansionCache.get(cacheKey);
    if (cached) return cached;

    const factors = new Map<number, number>();
    const frequency = (termId: number): number => this.documentFrequency[termId] ?? 0;
    const exact = this.vocabulary.idOf(term);
    if (exact !== undefined && frequency(exact) > 0) factors.set(exact, 1);

    if (withPrefixes && term.length >= PREFIX_MIN_LENGTH) {
      const completions: number[] = [];
      this.vocabulary.forEachWithPrefix(term, (termId) => {
        if (termId !== exact && frequency(termId) > 0) completions.push(termId);
      });
      completions.sort((a, b) => frequency(b) - frequency(a));
      for (const termId of completions.slice(0, MAX_PREFIX_EXPANSIONS)) {
        factors.set(termId, PREFIX_FACTOR_MIN + (PREFIX_FACTOR_SPAN * term.length) / this.vocabulary.term(termId).length);
      }
    }

    const exactFrequency = exact === undefined ? 0 : frequency(exact);
    if (term.length >= ONE_EDIT_MIN_LENGTH && exactFrequency < FUZZY_SKIP_DOCUMENT_FREQUENCY) {
      const near = this.vocabulary
        .fuzzyMatches(term, allowedEdits)
        .filter(({ termId }) => frequency(termId) > 0)
        .sort((a, b) => a.distance - b.distance || b.similarity - a.similarity || frequency(b.termId) - frequency(a.termId))
        .slice(0, MAX_FUZZY_EXPANSIONS);
      for (const { termId, distance, similarity } of near) {
        const factor = FUZZY_FACTOR[distance]! * (1 - FUZZY_SIMILARITY_SPAN + FUZZY_SIMILARITY_SPAN * similarity);
        if ((factors.get(termId) ?? 0) < factor) factors.set(termId, factor);
      }
    }

    const expansions: Expansions = {
      terms: [...factors].map(([termId, factor]) => ({ termId, factor })),
      exactFrequency: exact === undefined ? 0 : frequency(exact),
    };
    this.expansionCache.set(cacheKey, expansions);
    return expansions;
  }

  // ——— writes ———

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
    const termId = this.vocabulary.internSlice(source, start, end, suffix);
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
    const tag = this.internTag(kind, key);
    if (!this.staged.tags.includes(tag)) this.staged.tags.push(tag);
  }

  /** Adds the staged analysis as a new slot for `agent`. */
  private commitStaged(agent: IndexableAgent, contentHash: number): void {
    const staged = this.staged;
    const slot = this.slotCount++;
    this.ensureCapacity(this.slotCount);
    this.docIds[slot] = agent.id;
    this.alive[slot] = 1;
    this.trust[slot] = agent.trustScore;
    this.typeCodes[slot] = typeCodeOf(agent.type);
    this.nameKeys[slot] = staged.nameKey;
    this.contentHashes[slot] = contentHash;
    for (let field = 0; field < FIELD_COUNT; field++) {
      this.fieldLengths[slot * FIELD_COUNT + field] = staged.fieldLengths[field]!;
      this.fieldLengthSums[field] = this.fieldLengthSums[field]! + staged.fieldLengths[field]!;
    }

    if (this.documentFrequency.length < this.vocabulary.size)
      this.documentFrequency = grownInt32(this.documentFrequency, this.vocabulary.size);
    for (const termId of staged.terms) {
      this.tails.append(termId, slot, this.termFrequencyScratch[termId]! - 1);
      this.termFrequencyScratch[termId] = 0;
      this.documentFrequency[termId]!++;
    }

    const tagCount = staged.tags.length;
    if (this.tagPoolLength + tagCount > this.tagPool.length) {
      const grown = new Int32Array(Math.max(this.tagPool.length * 2, this.tagPoolLength + tagCount));
      grown.set(this.tagPool.subarray(0, this.tagPoolLength));
      this.tagPool = grown;
    }
    this.tagStarts[slot] = this.tagPoolLength;
    this.tagCounts[slot] = tagCount;
    for (const tag of staged.tags) {
      this.tagPool[this.tagPoolLength++] = tag;
      this.tagSlots[tag]!.push(slot);
    }

    this.slotById.set(agent.id, slot);
    this.liveCount++;
  }

  private removeSlot(slot: number): void {
    this.alive[slot] = 0;
    this.slotById.delete(this.docIds[slot]!);
    for (let field = 0; field < FIELD_COUNT; field++) {
      this.fieldLengthSums[field] = this.fieldLengthSums[field]! - this.fieldLengths[slot * FIELD_COUNT + field]!;
    }
    this.liveCount--;
    this.deadCount++;
  }

  private internTag(kind: number, key: string): number {
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

  private slotHasTag(slot: number, tag: number): boolean {
    const start = this.tagStarts[slot]!;
    const end = start + this.tagCounts[slot]!;
    for (let i = start; i < end; i++) if (this.tagPool[i] === tag) return true;
    return false;
  }

  /** BM25F-style term-frequency part of a posting, in [0, 1): per-field saturation, weighted by field. */
  private impactOf(packed: number, slot: number): number {
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

  private nextMarkStamp(): number {
    if (this.markStamp >= 0xfffffffe) {
      this.marks.fill(0);
      this.markStamp = 0;
    }
    return ++this.markStamp;
  }

  private ensureCapacity(slots: number): void {
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
    this.capacity = capacity;
  }
}

/** The k best slots by score, then trust score, then id: a bounded min-heap with the worst kept at the root. */
class TopK {
  private readonly slots: number[] = [];
  private readonly scores: number[] = [];

  constructor(
    private readonly k: number,
    private readonly trust: Float64Array,
    private readonly ids: string[],
  ) {}

  offer(slot: number, score: number): void {
    if (this.k <= 0) return;
    if (this.slots.length < this.k) {
      this.slots.push(slot);
      this.scores.push(score);
      this.siftUp(this.slots.length - 1);
    } else if (this.better(slot, score, this.slots[0]!, this.scores[0]!)) {
      this.slots[0] = slot;
      this.scores[0] = score;
      this.siftDown(0);
    }
  }

  sorted(): { slot: number; score: number }[] {
    return this.slots
      .map((slot, i) => ({ slot, score: this.scores[i]! }))
      .sort((a, b) => (this.better(a.slot, a.score, b.slot, b.score) ? -1 : 1));
  }

  private better(slotA: number, scoreA: number, slotB: number, scoreB: number): boolean {
    if (scoreA !== scoreB) return scoreA > scoreB;
    const trustA = this.trust[slotA]!;
    const trustB = this.trust[slotB]!;
    if (trustA !== trustB) return trustA > trustB;
    return this.ids[slotA]! < this.ids[slotB]!;
  }

  private siftUp(index: number): void {
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.better(this.slots[parent]!, this.scores[parent]!, this.slots[index]!, this.scores[index]!)) break;
      this.swap(parent, index);
      index = parent;
    }
  }

  private siftDown(index: number): void {
    const length = this.slots.length;
    for (;;) {
      const left = index * 2 + 1;
      const right = left + 1;
      let worst = index;
      if (left < length && this.better(this.slots[worst]!, this.scores[worst]!, this.slots[left]!, this.scores[left]!)) worst = left;
      if (right < length && this.better(this.slots[worst]!, this.scores[worst]!, this.slots[right]!, this.scores[right]!)) worst = right;
      if (worst === index) return;
      this.swap(worst, index);
      index = worst;
    }
  }

  private swap(a: number, b: number): void {
    [this.slots[a], this.slots[b]] = [this.slots[b]!, this.slots[a]!];
    [this.scores[a], this.scores[b]] = [this.scores[b]!, this.scores[a]!];
  }
}

/** A copy at least `minimum` long (doubling), zero-filled beyond the old contents. */
function grownInt32(array: Int32Array, minimum: number): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(Math.max(minimum, array.length * 2));
  grown.set(array);
  return grown;
}

/** Chained per field, so no separator can be confused with content. */
function contentHashOf(agent: IndexableAgent): number {
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

function typeCodeOf(type: string): number {
  return TYPE_CODES.get(type) ?? UNKNOWN_TYPE_CODE;
}

function quantiseImpact(impact: number): number {
  return Math.max(1, Math.min(IMPACT_SCALE, Math.round(impact * IMPACT_SCALE)));
}

function bitCount(mask: number): number {
  let value = mask - ((mask >>> 1) & 0x55555555);
  value = (value & 0x33333333) + ((value >>> 2) & 0x33333333);
  return (((value + (value >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
