// An inverted index over tool specs, ranked by BM25F, updated one tool at a time.
// Each tool has a slot; each term a posting list of (slot, packed per-field counts) in slot
// order (a new or replaced tool takes the next slot; slots are never reused, only renumbered
// in order when swept). A removed or replaced tool's slot is marked dead and skipped; its
// postings are swept out when new dead ones outnumber live ones, so a write costs its own terms,
// never the index (a sweep keeps the dead versions a recent query's later pages may still rank:
// see `RETENTION_MS`). Scores depend only on integer statistics (counts, lengths, document
// frequencies), summed in query-term order: the same tools give bit-identical scores whatever
// order they came in. `top` prunes with MaxScore over per-term upper bounds (see `top`).
import { compareCodePoints } from '../canonical.js';
import type { ToolSpec } from '../contracts.js';
import { FIELDS, FIELD_WEIGHTS } from './fields.js';
import { specTerms } from './fields.js';
import { STOP_TERM } from './tokens.js';

const FIELD_COUNT = FIELDS.length;
/** What of a spec is indexed. */
export type IndexedSpec = Pick<ToolSpec, 'tool_name' | 'description' | 'tags' | 'input_schema'>;
const EMPTY: Int32Array = new Int32Array(0);
/** Per-field term counts are packed 6 bits each into one small integer (capped at 63). */
const TF_BITS = 6;
const TF_MAX = (1 << TF_BITS) - 1;
/**
 * A posting list of at most this many elements is a view into a shared chunk (a typed array of
 * its own costs about 240 bytes beside its data, a view about 116); longer ones have their own.
 */
const SMALL = 64;
const CHUNK = 16384;
/** BM25's term-frequency saturation. */
const K1 = 1.2;
const WEIGHTS = FIELDS.map((field) => FIELD_WEIGHTS[field].weight);
const BS = FIELDS.map((field) => FIELD_WEIGHTS[field].b);
/** Relative headroom on every upper bound, far above the rounding of a few float additions. */
const SLACK = 1 + 1e-9;
/** The reference averages are taken anew once the current ones drift this far (bounds loosen by as much). */
const MAX_DRIFT = 1.1;
/**
 * A sweep keeps a replaced or removed version that stopped being current less than this long
 * ago (on the index's clock): the later pages of a query begun before still rank it.
 */
export const RETENTION_MS = 10 * 60_000;
/**
 * ...unless the kept dead versions' posting entries would pass max(this, 4 × the live ones'):
 * then the versions that stopped being current longest ago go first (docs/search.md).
 */
export const MIN_RETAINED_ENTRIES = 32_768;
const RETAINED_PER_LIVE_ENTRY = 4;
/** Revision ranges of swept versions kept apart (more are merged across their smallest gaps). */
const MAX_SWEPT_RANGES = 32;
/** A new sweep is due once the dead entries since the last one pass this and the live and kept ones. */
const SWEEP_MIN_DEAD = 1024;

/** What a `SearchIndex` is made with. */
export interface SearchIndexOptions {
  /** The retention clock, in milliseconds, never going back (default `performance.now`; tests give their own). */
  readonly now?: () => number;
}

/** A scored tool. */
export interface Hit<T> {
  readonly name: string;
  readonly item: T;
  readonly score: number;
}

/** Where a page starts: after this (score, name) in ranking order. */
export interface RankKey {
  readonly score: number;
  readonly name: string;
}

/**
 * What a later page of one query ranks with: the collection statistics of its first page (tool
 * count, per-field total lengths, each query term's document frequency, in the order of the
 * distinct terms given to `top`) and the revision they were taken at. Tools are scored with these,
 * not with today's, so a tool whose text did not change keeps its score; and only the versions
 * of tools that were current at `revision` are ranked (a tool added or re-registered later is
 * left out; a re-registered one is ranked by the version it had then, while the index holds it).
 */
export interface RankSnapshot {
  readonly revision: number;
  readonly count: number;
  readonly totals: readonly number[];
  readonly df: readonly number[];
}

/** Ranking order: higher score first, then name in code-point order. */
export function compareHits(a: RankKey, b: RankKey): number {
  return a.score !== b.score ? b.score - a.score : compareCodePoints(a.name, b.name);
}

export class SearchIndex<T> {
  readonly #now: () => number;
  readonly #slotOf = new Map<string, number>();
  /** Per slot: the name while the slot is current (undefined once removed or replaced). */
  #names: (string | undefined)[] = [];
  /** Per slot: the name, current or not (a replaced version is still ranked for the pages of a query begun before). */
  #slotNames: string[] = [];
  /** Per slot: the item, kept after the slot is replaced or removed (until swept). */
  #items: T[] = [];
  /** Per slot: the revision its version became current at, and the one it stopped at (Infinity: current). */
  #born: Float64Array = new Float64Array(0);
  #died: Float64Array = new Float64Array(0);
  /**
   * Every dead slot not yet swept and the clock's time it stopped being current at, in the order
   * they did: [slot, time, slot, time, ...] (a list of the dead, not a number per slot).
   */
  #deaths: number[] = [];
  /** How far `expire` has read `#deaths`: the deaths before are past the retention time, holding `#expiredEntries` entries. */
  #expiredAt = 0;
  #expiredEntries = 0;
  /**
   * The revision ranges [from, to) in which a swept version was current, sorted and disjoint,
   * flat: a snapshot at a revision inside one may have lost a version it ranked (`lostAt`).
   */
  #swept: number[] = [];
  /**
   * Per slot: its term ids (each once), to undo its document frequencies on removal: slot s's
   * are `#termPool[#termStart[s] .. #termStart[s + 1]]` (one array for all slots, not one per slot).
   */
  #termPool = EMPTY;
  #termStart: Int32Array = new Int32Array(1);
  /** Per slot and field: the field's length in terms (4 bytes each, not a JS array's 8). */
  #lengths = EMPTY;
  readonly #termId = new Map<string, number>();
  /**
   * Per term: [slot, packed counts, slot, packed counts, ...] in a growable Int32Array (half
   * the memory of a JS array of numbers), its used length in `#used`; dead slots included until swept.
   */
  #postings: Int32Array[] = [];
  /** Per term (typed arrays, capacity `#termCapacity`): used length of its posting list, live tools holding it. */
  #used = EMPTY;
  #df = EMPTY;
  #termCapacity = 0;
  /** The chunks small posting lists are taken from (each's index by its buffer), and how much of the last is taken. */
  #chunks: Int32Array[] = [];
  readonly #chunkIndex = new Map<ArrayBufferLike, number>();
  #chunkUsed = CHUNK;
  /** Per length (≤ SMALL): the room small lists grew out of, as chunk index × CHUNK + offset, taken again first. */
  #free: number[][] = [];
  readonly #totalLength = new Array<number>(FIELD_COUNT).fill(0);
  #live = 0;
  /**
   * Posting entries of dead slots not yet swept (those the last sweep kept included), and all
   * entries. Each slot counts one entry more (`slotEntries`): a version without a term still
   * holds its slot and item, and versions counted as none never made a sweep due.
   */
  #deadEntries = 0;
  #entries = 0;
  /** Posting entries of the dead slots the last sweep kept. */
  #retainedEntries = 0;
  /**
   * Per term: the largest BM25F term frequency of a tool holding it, computed with the field
   * averages `#reference` (an upper bound: a removed tool's share stays until the next sweep),
   * valid while `#boundEpoch[id] === #epoch`; otherwise computed again when a query needs it.
   */
  #boundTf: Float64Array = new Float64Array(0);
  #boundEpoch = EMPTY;
  #epoch = 0;
  /** Per field: the 1 / average length the bounds were computed with; undefined: none yet. */
  #reference: number[] | undefined;
  /** Scratch for one `set`: term ids in first-occurrence order, and per term id its packed counts (0 between calls). */
  #order: number[] = [];
  #packedOf = EMPTY;
  /** Scratch per slot for one query. */
  #scores = new Float64Array(0);

  constructor(options: SearchIndexOptions = {}) {
    const now = options.now ?? (() => performance.now());
    if (typeof now !== 'function') throw new TypeError(`SearchIndex: now must be a function, got ${typeof now}`);
    this.#now = now;
  }

  /** Live tools. */
  get size(): number {
    return this.#live;
  }

  /** Terms known: those a tool holds, and those of versions not yet swept. */
  get terms(): number {
    return this.#postings.length;
  }

  has(name: string): boolean {
    return this.#slotOf.has(name);
  }

  get(name: string): T | undefined {
    const slot = this.#slotOf.get(name);
    return slot === undefined ? undefined : this.#items[slot];
  }

  /** Every live tool's name (any order). */
  names(): IterableIterator<string> {
    return this.#slotOf.keys();
  }

  /**
   * Adds the tool, or replaces the one of the same name. When `unchanged(old)` says the old
   * item has the same spec (an enable or disable), only the item is swapped: nothing is re-indexed.
   * `revision`: when this version became current (a `RankSnapshot` before it does not see it).
   */
  set(name: string, item: T, spec: IndexedSpec, unchanged?: (old: T) => boolean, revision = 0): void {
    const existing = this.#slotOf.get(name);
    if (existing !== undefined && unchanged?.(this.#items[existing] as T) === true) {
      this.#items[existing] = item;
      return;
    }
    if (existing !== undefined) revision = Math.max(revision, this.#born[existing] as number);
    this.delete(name, revision);
    const fields = specTerms(spec);
    const distinct = this.#count(fields);
    const slot = this.#place(name, item, fields, revision);
    const order = this.#order;
    const packedOf = this.#packedOf;
    const start = this.#termStart[slot] as number;
    if (start + distinct > this.#termPool.length) this.#termPool = grow(this.#termPool, start + distinct);
    const ids = this.#termPool;
    for (let index = 0; index < distinct; index++) {
      const id = order[index] as number;
      const packed = packedOf[id] as number;
      packedOf[id] = 0;
      const used = this.#used[id] as number;
      let list = this.#postings[id] as Int32Array;
      if (used + 2 > list.length) this.#postings[id] = list = this.#grown(list, used + 2);
      list[used] = slot;
      list[used + 1] = packed;
      this.#used[id] = used + 2;
      this.#df[id] = (this.#df[id] as number) + 1;
      ids[start + index] = id;
      // A term whose bound is current keeps it current: raised to this tool's frequency if higher.
      if (this.#boundEpoch[id] === this.#epoch) {
        const tf = this.#tf(slot, packed, this.#reference as number[]);
        if (tf > (this.#boundTf[id] as number)) this.#boundTf[id] = tf;
      }
    }
    this.#termStart[slot + 1] = start + distinct;
    this.#entries += distinct + 1;
  }

  /**
   * Replaces everything with these tools (names distinct): the index `clear()` and `set` one
   * by one would give, built in two passes so that each posting list is allocated once at its
   * final size (no growing and copying per tool, far less garbage).
   */
  build(tools: Iterable<{ readonly name: string; readonly item: T; readonly spec: IndexedSpec }>): void {
    this.clear();
    const order = this.#order;
    // Pass 1: every tool's (term id, packed counts) pairs, one after the other; per slot where its pairs start.
    let ids = new Int32Array(1024);
    let packs = new Int32Array(1024);
    let total = 0;
    for (const { name, item, spec } of tools) {
      if (this.#slotOf.has(name)) throw new Error(`internal: SearchIndex.build() given ${JSON.stringify(name)} twice`);
      const fields = specTerms(spec);
      const distinct = this.#count(fields);
      const slot = this.#place(name, item, fields, 0);
      this.#termStart[slot + 1] = total + distinct;
      if (total + distinct > ids.length) {
        const size = Math.max(ids.length * 2, total + distinct);
        const grownIds = new Int32Array(size);
        grownIds.set(ids);
        ids = grownIds;
        const grownPacks = new Int32Array(size);
        grownPacks.set(packs);
        packs = grownPacks;
      }
      // Read after #count, which may have grown it.
      const packedOf = this.#packedOf;
      for (let index = 0; index < distinct; index++) {
        const id = order[index] as number;
        ids[total] = id;
        packs[total++] = packedOf[id] as number;
        packedOf[id] = 0;
        this.#df[id] = (this.#df[id] as number) + 1;
      }
    }
    // Pass 2: each list at its size, filled in slot order; the slots' term ids kept at their size.
    for (let id = 0; id < this.#postings.length; id++) this.#postings[id] = this.#allocate((this.#df[id] as number) * 2);
    const allIds = ids.slice(0, total);
    const starts = this.#termStart;
    for (let slot = 0; slot < this.#names.length; slot++) {
      const start = starts[slot] as number;
      const end = starts[slot + 1] as number;
      for (let index = start; index < end; index++) {
        const id = allIds[index] as number;
        const used = this.#used[id] as number;
        const list = this.#postings[id] as Int32Array;
        list[used] = slot;
        list[used + 1] = packs[index] as number;
        this.#used[id] = used + 2;
      }
    }
    this.#termPool = allIds;
    this.#termStart = this.#termStart.slice(0, this.#names.length + 1);
    this.#lengths = this.#lengths.slice(0, this.#names.length * FIELD_COUNT);
    this.#born = this.#born.slice(0, this.#names.length);
    this.#died = this.#died.slice(0, this.#names.length);
    this.#entries = total + this.#names.length;
  }

  /**
   * Counts one tool's terms in scratch arrays indexed by term id (no Map of strings per tool):
   * `#order` gets the ids in the order their terms first occur, `#packedOf` each id's packed
   * per-field counts (the caller sets them back to 0). New terms get ids. Returns how many ids.
   */
  #count(fields: readonly string[][]): number {
    const order = this.#order;
    let packedOf = this.#packedOf;
    let distinct = 0;
    for (let field = 0; field < FIELD_COUNT; field++) {
      const shift = field * TF_BITS;
      const terms = fields[field] as string[];
      for (let at = 0; at < terms.length; at++) {
        const term = terms[at] as string;
        let id = this.#termId.get(term);
        if (id === undefined) {
          id = this.#postings.length;
          this.#termId.set(term, id);
          this.#postings.push(EMPTY);
          if (id === this.#termCapacity) {
            this.#termCapacity = Math.max(64, Math.ceil(id * 1.25));
            this.#used = resized(this.#used, this.#termCapacity);
            this.#df = resized(this.#df, this.#termCapacity);
            const boundTf = new Float64Array(this.#termCapacity);
            boundTf.set(this.#boundTf);
            this.#boundTf = boundTf;
            this.#boundEpoch = resized(this.#boundEpoch, this.#termCapacity);
            this.#packedOf = packedOf = resized(packedOf, this.#termCapacity);
          }
          this.#boundEpoch[id] = -1;
        }
        const packed = packedOf[id] as number;
        if (packed === 0) order[distinct++] = id;
        if (((packed >> shift) & TF_MAX) < TF_MAX) packedOf[id] = packed + (1 << shift);
      }
    }
    return distinct;
  }

  /**
   * A posting list of `length` elements (its contents unspecified: every caller fills what it
   * uses): a view into a chunk when small, room a list grew out of if there is some.
   */
  #allocate(length: number): Int32Array {
    if (length > SMALL) return new Int32Array(length);
    const free = this.#free[length];
    const code = free?.pop();
    if (code !== undefined) {
      const start = code % CHUNK;
      return (this.#chunks[(code - start) / CHUNK] as Int32Array).subarray(start, start + length);
    }
    if (this.#chunkUsed + length > CHUNK) {
      const chunk = new Int32Array(CHUNK);
      this.#chunkIndex.set(chunk.buffer, this.#chunks.length);
      this.#chunks.push(chunk);
      this.#chunkUsed = 0;
    }
    const start = this.#chunkUsed;
    this.#chunkUsed = start + length;
    return (this.#chunks[this.#chunks.length - 1] as Int32Array).subarray(start, start + length);
  }

  /** `list` copied into a larger one of at least `need` elements (see `grow`); a small list's old room is kept for reuse. */
  #grown(list: Int32Array, need: number): Int32Array {
    const length = list.length;
    const grown = this.#allocate(Math.max(need, length < SMALL ? Math.max(4, length * 2) : length + (length >> 3) * 2));
    grown.set(list);
    if (length > 0 && length <= SMALL) {
      const chunk = this.#chunkIndex.get(list.buffer) as number;
      (this.#free[length] ??= []).push(chunk * CHUNK + list.byteOffset / 4);
    }
    return grown;
  }

  /** Forgets every chunk: small lists allocated after this go to new ones. */
  #dropChunks(): void {
    this.#chunks = [];
    this.#chunkIndex.clear();
    this.#chunkUsed = CHUNK;
    this.#free = [];
  }

  /** Gives a new tool the next slot: its name, item, field lengths and the revision it is current from. */
  #place(name: string, item: T, fields: readonly string[][], revision: number): number {
    const slot = this.#names.length;
    this.#names[slot] = name;
    this.#slotNames[slot] = name;
    this.#items[slot] = item;
    if (slot >= this.#born.length) {
      this.#born = grownFloats(this.#born, slot + 1);
      this.#died = grownFloats(this.#died, slot + 1);
    }
    this.#born[slot] = revision;
    this.#died[slot] = Infinity;
    if ((slot + 1) * FIELD_COUNT > this.#lengths.length) this.#lengths = grow(this.#lengths, (slot + 1) * FIELD_COUNT);
    if (slot + 2 > this.#termStart.length) this.#termStart = grow(this.#termStart, slot + 2);
    this.#termStart[slot + 1] = this.#termStart[slot] as number;
    for (let field = 0; field < FIELD_COUNT; field++) {
      // Stop terms do not count: a stop word in a name leaves every other query's scores as they were.
      let length = 0;
      for (const term of fields[field] as string[]) if (!term.startsWith(STOP_TERM)) length++;
      this.#lengths[slot * FIELD_COUNT + field] = length;
      this.#totalLength[field] = (this.#totalLength[field] as number) + length;
    }
    this.#slotOf.set(name, slot);
    this.#live++;
    return slot;
  }

  /** Removes the tool (at `revision`: a `RankSnapshot` before it still ranks it); `true` when it was there. */
  delete(name: string, revision = 0): boolean {
    const slot = this.#slotOf.get(name);
    if (slot === undefined) return false;
    this.#died[slot] = Math.max(revision, this.#born[slot] as number);
    this.#deaths.push(slot, this.#now());
    this.#slotOf.delete(name);
    this.#live--;
    const start = this.#termStart[slot] as number;
    const end = this.#termStart[slot + 1] as number;
    const pool = this.#termPool;
    for (let index = start; index < end; index++) this.#df[pool[index] as number] = (this.#df[pool[index] as number] as number) - 1;
    for (let field = 0; field < FIELD_COUNT; field++) {
      this.#totalLength[field] = (this.#totalLength[field] as number) - (this.#lengths[slot * FIELD_COUNT + field] as number);
    }
    this.#names[slot] = undefined;
    this.#deadEntries += slotEntries(start, end);
    // Due once the dead entries since the last sweep outnumber the live and the kept ones: a
    // sweep costs all entries, so each write pays a bounded share of it.
    const fresh = this.#deadEntries - this.#retainedEntries;
    if (fresh > SWEEP_MIN_DEAD && fresh > this.#entries - this.#deadEntries && fresh > this.#retainedEntries) this.#sweep();
    return true;
  }

  /** Forgets every tool. */
  clear(): void {
    this.#slotOf.clear();
    this.#names = [];
    this.#slotNames = [];
    this.#items = [];
    this.#born = new Float64Array(0);
    this.#died = new Float64Array(0);
    this.#deaths = [];
    this.#expiredAt = 0;
    this.#expiredEntries = 0;
    // The revisions of a rebuilt index's versions are not known (docs/search.md): nothing to compare with.
    this.#swept = [];
    this.#termPool = EMPTY;
    this.#termStart = new Int32Array(1);
    this.#lengths = EMPTY;
    this.#termId.clear();
    this.#postings = [];
    this.#used = EMPTY;
    this.#df = EMPTY;
    this.#boundTf = new Float64Array(0);
    this.#boundEpoch = EMPTY;
    this.#termCapacity = 0;
    this.#dropChunks();
    this.#reference = undefined;
    this.#packedOf = EMPTY;
    this.#totalLength.fill(0);
    this.#live = 0;
    this.#deadEntries = 0;
    this.#entries = 0;
    this.#retainedEntries = 0;
  }

  /**
   * The dead slots a sweep keeps (as a per-slot flag): those that stopped being current less
   * than RETENTION_MS ago, the most recent first while their entries stay within the bound;
   * the others' revision ranges are recorded in `#swept`.
   */
  #retained(slots: number): Uint8Array {
    const keep = new Uint8Array(slots);
    const starts = this.#termStart;
    const deaths = this.#deaths;
    const now = this.#now();
    const bound = Math.max(MIN_RETAINED_ENTRIES, RETAINED_PER_LIVE_ENTRY * (this.#entries - this.#deadEntries));
    let kept = 0;
    // Newest first: once one is too old or passes the bound, every earlier one goes too.
    for (let at = deaths.length - 2; at >= 0; at -= 2) {
      const slot = deaths[at] as number;
      if (now - (deaths[at + 1] as number) >= RETENTION_MS) break;
      kept += slotEntries(starts[slot] as number, starts[slot + 1] as number);
      if (kept > bound) break;
      keep[slot] = 1;
    }
    const ranges: number[] = [];
    for (let at = 0; at < deaths.length; at += 2) {
      const slot = deaths[at] as number;
      if (keep[slot] === 1) continue;
      const born = this.#born[slot] as number;
      const died = this.#died[slot] as number;
      // Current at no revision (replaced within the one it came in): no snapshot ranked it.
      if (born < died) ranges.push(born, died);
    }
    if (ranges.length > 0) this.#swept = mergeRanges(this.#swept, ranges, MAX_SWEPT_RANGES);
    return keep;
  }

  /**
   * Sweeps when the dead versions past the retention time hold a quarter of all entries or more
   * (and over SWEEP_MIN_DEAD): a burst of writes followed by none left them in memory, and in
   * every search's posting lists, for good, as only a write triggered a sweep. Costs a clock
   * reading when nothing is dead; the deaths are read once each (from where the last call stopped).
   * Call before `lostAt`: a sweep changes its answer.
   */
  expire(): void {
    const deaths = this.#deaths;
    let at = this.#expiredAt;
    if (at >= deaths.length) return;
    const now = this.#now();
    const starts = this.#termStart;
    let expired = this.#expiredEntries;
    for (; at < deaths.length && now - (deaths[at + 1] as number) >= RETENTION_MS; at += 2) {
      const slot = deaths[at] as number;
      expired += slotEntries(starts[slot] as number, starts[slot + 1] as number);
    }
    this.#expiredAt = at;
    this.#expiredEntries = expired;
    if (expired > SWEEP_MIN_DEAD && expired * 4 >= this.#entries) this.#sweep();
  }

  /**
   * Whether a version current at `revision` was swept out: a `RankSnapshot` taken then may
   * miss a tool it ranked (the caller refuses its cursor rather than skip the tool silently).
   */
  lostAt(revision: number): boolean {
    const swept = this.#swept;
    for (let at = 0; at < swept.length; at += 2) {
      if (revision < (swept[at] as number)) return false;
      if (revision < (swept[at + 1] as number)) return true;
    }
    return false;
  }

  /**
   * Takes the entries of dead slots not retained (`#retained`) out of every posting list and
   * renumbers the slots kept in their order (so lists stay in slot order); the bounds are
   * computed anew when next needed.
   */
  #sweep(): void {
    const slots = this.#names.length;
    const keep = this.#retained(slots);
    const renumbered = new Int32Array(slots);
    const pool = this.#termPool;
    const starts = this.#termStart;
    let next = 0;
    let kept = 0;
    let deadKept = 0;
    for (let slot = 0; slot < slots; slot++) {
      const name = this.#names[slot];
      if (name === undefined && keep[slot] === 0) {
        renumbered[slot] = -1;
        continue;
      }
      renumbered[slot] = next;
      this.#names[next] = name;
      this.#slotNames[next] = this.#slotNames[slot] as string;
      this.#items[next] = this.#items[slot] as T;
      this.#born[next] = this.#born[slot] as number;
      this.#died[next] = this.#died[slot] as number;
      // Slot `slot`'s term ids move down to `kept` (reading starts[slot + 1] before it is overwritten).
      const start = starts[slot] as number;
      const end = starts[slot + 1] as number;
      pool.copyWithin(kept, start, end);
      starts[next] = kept;
      kept += end - start;
      starts[next + 1] = kept;
      for (let field = 0; field < FIELD_COUNT; field++) this.#lengths[next * FIELD_COUNT + field] = this.#lengths[slot * FIELD_COUNT + field] as number;
      if (name === undefined) deadKept += slotEntries(start, end);
      else this.#slotOf.set(name, next);
      next++;
    }
    // The kept deaths, in their order, under their new slots.
    const deaths: number[] = [];
    for (let at = 0; at < this.#deaths.length; at += 2) {
      const slot = renumbered[this.#deaths[at] as number] as number;
      if (slot >= 0) deaths.push(slot, this.#deaths[at + 1] as number);
    }
    this.#deaths = deaths;
    this.#expiredAt = 0;
    this.#expiredEntries = 0;
    this.#names.length = next;
    this.#slotNames.length = next;
    this.#items.length = next;
    // Trimmed to their size: a set after the sweep grows them again (by a quarter).
    this.#termPool = pool.slice(0, kept);
    this.#termStart = starts.slice(0, next + 1);
    this.#lengths = this.#lengths.slice(0, next * FIELD_COUNT);
    this.#born = this.#born.slice(0, next);
    this.#died = this.#died.slice(0, next);
    // Small lists move to new chunks, so the old chunks (with the room lists grew out of) are freed.
    this.#dropChunks();
    for (let id = 0; id < this.#postings.length; id++) {
      const list = this.#postings[id] as Int32Array;
      const used = this.#used[id] as number;
      kept = 0;
      for (let index = 0; index < used; index += 2) {
        const slot = renumbered[list[index] as number] as number;
        if (slot < 0) continue;
        list[kept++] = slot;
        list[kept++] = list[index + 1] as number;
      }
      this.#used[id] = kept;
      // Small lists moved; a long one shrunk when a quarter or more is empty, so a list that once was long does not keep its memory.
      if (kept === 0) this.#postings[id] = EMPTY;
      else if (kept <= SMALL || kept + (kept >> 2) < list.length) this.#postings[id] = this.#allocate(kept);
      if (kept > 0 && this.#postings[id] !== list) (this.#postings[id] as Int32Array).set(list.subarray(0, kept));
    }
    this.#entries -= this.#deadEntries - deadKept;
    this.#deadEntries = deadKept;
    this.#retainedEntries = deadKept;
    this.#dropUnheldTerms(next);
    // Removed tools no longer hold any bound up: every bound is computed anew when next needed.
    this.#reference = undefined;
    this.#epoch++;
  }

  /**
   * After a sweep, forgets the terms no tool holds any more (the words of removed and replaced
   * versions only) once they are a quarter of all, and renumbers the rest in order. Every term
   * ever indexed stayed, with its room in the per-term arrays: a tool registered again and
   * again with new words grew the index (3.5 MiB a version of a 50,000-word description) for
   * as long as the process ran. Term ids live only within one call, so none is held elsewhere.
   */
  #dropUnheldTerms(liveSlots: number): void {
    const count = this.#postings.length;
    const used = this.#used;
    let unheld = 0;
    for (let id = 0; id < count; id++) if (used[id] === 0) unheld++;
    if (unheld === 0 || unheld * 4 < count) return;
    const renumbered = new Int32Array(count);
    const capacity = Math.max(64, Math.ceil((count - unheld) * 1.25));
    const nextUsed = new Int32Array(capacity);
    const nextDf = new Int32Array(capacity);
    let kept = 0;
    for (let id = 0; id < count; id++) {
      if (used[id] === 0) {
        renumbered[id] = -1;
        continue;
      }
      renumbered[id] = kept;
      this.#postings[kept] = this.#postings[id] as Int32Array;
      nextUsed[kept] = used[id] as number;
      nextDf[kept] = this.#df[id] as number;
      kept++;
    }
    this.#postings.length = kept;
    for (const [term, id] of this.#termId) {
      const next = renumbered[id] as number;
      if (next < 0) this.#termId.delete(term);
      else this.#termId.set(term, next);
    }
    const pool = this.#termPool;
    const end = this.#termStart[liveSlots] as number;
    for (let index = 0; index < end; index++) pool[index] = renumbered[pool[index] as number] as number;
    this.#termCapacity = capacity;
    this.#used = nextUsed;
    this.#df = nextDf;
    // The bounds are computed anew (the caller moves to a new epoch); the scratch is all zeros between calls.
    this.#boundTf = new Float64Array(capacity);
    this.#boundEpoch = new Int32Array(capacity).fill(-1);
    this.#packedOf = new Int32Array(capacity);
  }

  /** The BM25F term frequency of one posting: per field, weight × count / length norm. */
  #tf(slot: number, packed: number, inverseAverage: readonly number[]): number {
    const lengths = this.#lengths;
    let tf = 0;
    for (let field = 0; packed !== 0; field++, packed >>>= TF_BITS) {
      const raw = packed & TF_MAX;
      if (raw === 0) continue;
      const b = BS[field] as number;
      const norm = 1 - b + b * (lengths[slot * FIELD_COUNT + field] as number) * (inverseAverage[field] as number);
      tf += ((WEIGHTS[field] as number) * raw) / norm;
    }
    return tf;
  }

  /**
   * The query's distinct terms held by a live tool (with a snapshot: held by a tool then), as
   * term ids in query order, with their idfs and the collection's 1 / average field lengths.
   */
  #ranking(terms: readonly string[], snapshot: RankSnapshot | undefined): { ids: number[]; idfs: number[]; inverseAverage: number[] } {
    const ids: number[] = [];
    const idfs: number[] = [];
    if (snapshot === undefined) {
      const count = this.#live;
      for (const term of new Set(terms)) {
        const id = this.#termId.get(term);
        if (id === undefined || (this.#df[id] as number) === 0) continue;
        ids.push(id);
        idfs.push(idfOf(count, this.#df[id] as number));
      }
      return { ids, idfs, inverseAverage: inverseAverageOf(count, this.#totalLength) };
    }
    // The snapshot's terms are the distinct terms, in order, that its document frequencies belong to.
    terms.forEach((term, at) => {
      const id = this.#termId.get(term);
      const df = snapshot.df[at] as number;
      if (id === undefined || df === 0) return;
      ids.push(id);
      idfs.push(idfOf(snapshot.count, df));
    });
    return { ids, idfs, inverseAverage: inverseAverageOf(snapshot.count, snapshot.totals) };
  }

  /**
   * The statistics a query's first page ranks with, for its later pages (`top`'s `snapshot`):
   * `terms` must be distinct. `revision`: what the index reflects now (the caller knows it).
   */
  snapshot(terms: readonly string[], revision: number): RankSnapshot {
    const df = terms.map((term) => {
      const id = this.#termId.get(term);
      return id === undefined ? 0 : (this.#df[id] as number);
    });
    return { revision, count: this.#live, totals: this.#totalLength.slice(), df };
  }

  /** Whether `slot` is ranked: current; with a snapshot, current at its revision and its tool still there. */
  #visible(slot: number, snapshot: RankSnapshot | undefined): boolean {
    if (snapshot === undefined) return this.#names[slot] !== undefined;
    const revision = snapshot.revision;
    return (this.#born[slot] as number) <= revision && (this.#died[slot] as number) > revision && this.#slotOf.has(this.#slotNames[slot] as string);
  }

  /** The current item of the tool whose (possibly former) version is at `slot`. */
  #current(slot: number): T {
    return this.#items[this.#slotOf.get(this.#slotNames[slot] as string) as number] as T;
  }

  /**
   * Scores every ranked slot holding a term into `#scores` (live ones; with a snapshot, the versions
   * current at its revision, with its statistics; `all`: whether or not their tool is still
   * there); returns the slots touched (scores > 0).
   */
  #score(terms: readonly string[], snapshot: RankSnapshot | undefined, all: boolean): number[] {
    const { ids, idfs, inverseAverage } = this.#ranking(terms, snapshot);
    if (ids.length === 0 || this.#names.length === 0) return [];
    const slots = this.#names.length;
    if (this.#scores.length < slots) this.#scores = new Float64Array(Math.max(slots, this.#scores.length * 2));
    const scores = this.#scores;
    const names = this.#names;
    const born = this.#born;
    const died = this.#died;
    const revision = snapshot?.revision ?? 0;
    const touched: number[] = [];
    ids.forEach((id, at) => {
      const idf = idfs[at] as number;
      const list = this.#postings[id] as Int32Array;
      const used = this.#used[id] as number;
      for (let index = 0; index < used; index += 2) {
        const slot = list[index] as number;
        if (snapshot === undefined ? names[slot] === undefined : !((born[slot] as number) <= revision && (died[slot] as number) > revision && (all || this.#slotOf.has(this.#slotNames[slot] as string)))) continue;
        const tf = this.#tf(slot, list[index + 1] as number, inverseAverage);
        if (scores[slot] === 0) touched.push(slot);
        scores[slot] = (scores[slot] as number) + (idf * tf) / (K1 + tf);
      }
    });
    return touched;
  }

  /**
   * Every live tool that has at least one of `terms` and that `accept` lets through, with its
   * BM25F score (unsorted). A term given twice counts once. With a snapshot (its `terms` distinct):
   * the tool versions current at its revision whose tools are still there, scored with its
   * statistics; `item` and `accept` see the tool's current item.
   */
  match(terms: readonly string[], accept: (item: T) => boolean = () => true, snapshot?: RankSnapshot): Hit<T>[] {
    const touched = this.#score(terms, snapshot, false);
    // Read after scoring: #score may have grown the scratch array.
    const scores = this.#scores;
    const hits: Hit<T>[] = [];
    for (const slot of touched) {
      const item = snapshot === undefined ? (this.#items[slot] as T) : this.#current(slot);
      if (accept(item)) hits.push({ name: this.#slotNames[slot] as string, item, score: scores[slot] as number });
      scores[slot] = 0;
    }
    return hits;
  }

  /**
   * Like `match` without a filter, for rankings that depend on every match (fusion): every
   * version current now (or at the snapshot's revision, its tool still there or not) holding a
   * term, with its own item (`version`) and its tool's current one (`item`; undefined: gone).
   */
  versions(terms: readonly string[], snapshot?: RankSnapshot): (Hit<T | undefined> & { readonly version: T })[] {
    const touched = this.#score(terms, snapshot, true);
    const scores = this.#scores;
    const hits: (Hit<T | undefined> & { readonly version: T })[] = [];
    for (const slot of touched) {
      const name = this.#slotNames[slot] as string;
      const current = this.#slotOf.get(name);
      hits.push({ name, version: this.#items[slot] as T, item: current === undefined ? undefined : (this.#items[current] as T), score: scores[slot] as number });
      scores[slot] = 0;
    }
    return hits;
  }

  /**
   * Per query term (ids in query order): an upper bound of its contribution to any slot's
   * score (a removed or replaced version's too, for a snapshot's pages), with `idfs` its idf.
   * The bound is the term's largest frequency under the reference averages, scaled by how far
   * the averages ranked with drifted below them (a field's length norm shrinks at most by that
   * ratio), through BM25's saturation, with headroom for rounding. A snapshot's averages never
   * replace the reference (pages of an old query would make every query compute its bounds anew).
   */
  #bounds(ids: readonly number[], idfs: readonly number[], inverseAverage: readonly number[], frozen: boolean): Float64Array {
    let reference = this.#reference;
    let drift = 1;
    if (reference !== undefined) {
      for (let field = 0; field < FIELD_COUNT; field++) {
        const now = inverseAverage[field] as number;
        if (now > 0) drift = Math.max(drift, (reference[field] as number) / now);
      }
    }
    if (reference === undefined || (drift > MAX_DRIFT && !frozen)) {
      // New reference averages: every term's bound is computed anew when a query needs it.
      const now = frozen ? inverseAverageOf(this.#live, this.#totalLength) : inverseAverage;
      this.#reference = reference = now.slice();
      this.#epoch++;
      drift = 1;
      for (let field = 0; field < FIELD_COUNT; field++) {
        const ranked = inverseAverage[field] as number;
        if (ranked > 0) drift = Math.max(drift, (reference[field] as number) / ranked);
      }
    }
    const bounds = new Float64Array(ids.length);
    for (let at = 0; at < ids.length; at++) {
      const id = ids[at] as number;
      if (this.#boundEpoch[id] !== this.#epoch) {
        const list = this.#postings[id] as Int32Array;
        const used = this.#used[id] as number;
        let most = 0;
        for (let index = 0; index < used; index += 2) most = Math.max(most, this.#tf(list[index] as number, list[index + 1] as number, reference));
        this.#boundTf[id] = most;
        this.#boundEpoch[id] = this.#epoch;
      }
      const tf = (this.#boundTf[id] as number) * drift * SLACK;
      bounds[at] = (((idfs[at] as number) * tf) / (K1 + tf)) * SLACK;
    }
    return bounds;
  }

  /**
   * The first `limit` matches in ranking order after `after` (when given), and whether more
   * follow: exactly `topHits(match(terms, accept), limit, after)` without scoring every match.
   *
   * MaxScore, document at a time over the slot-ordered posting lists: it keeps the best
   * `limit + 1` accepted matches after the cursor; once it holds that many, the worst one's
   * score θ is a bar every later tool must reach. The terms whose upper bounds add up to less
   * than θ (the lowest bounds first: the common words) are "non-essential": a tool holding
   * only those cannot reach θ and is never looked at; a tool of an essential term looks up the
   * non-essential ones (a galloping search in their lists) only while its bound can still
   * reach θ. A tool that is kept gets its score summed in query-term order as `match` sums it,
   * so scores, ties and cursors are bit for bit the same; a skipped tool scored below θ, so it
   * could not be among the best `limit + 1`, and `more` (whether a tool beyond the page exists)
   * is decided by those alone. With `snapshot` (its `terms` distinct), the versions current at
   * its revision whose tools are still there are ranked, with its statistics: `match`'s snapshot.
   */
  top(terms: readonly string[], limit: number, accept: (item: T) => boolean = () => true, after?: RankKey, snapshot?: RankSnapshot): { page: Hit<T>[]; more: boolean } {
    const { ids, idfs, inverseAverage } = this.#ranking(terms, snapshot);
    if (ids.length === 0 || this.#live === 0) return { page: [], more: false };
    const m = ids.length;
    const names = this.#slotNames;
    const bounds = this.#bounds(ids, idfs, inverseAverage, snapshot !== undefined);
    // Query terms by bound, lowest first; below[j]: the sum of the bounds of the first j.
    const byBound = Array.from({ length: m }, (_, at) => at).sort((a, b) => (bounds[a] as number) - (bounds[b] as number));
    const below = new Float64Array(m + 1);
    for (let j = 0; j < m; j++) below[j + 1] = ((below[j] as number) + (bounds[byBound[j] as number] as number)) * SLACK;
    const lists = ids.map((id) => this.#postings[id] as Int32Array);
    const ends = ids.map((id) => this.#used[id] as number);
    const at = new Int32Array(m);
    // Per query term: the current tool's share, and whether it holds the term.
    const shares = new Float64Array(m);
    const holds = new Uint8Array(m);
    /** Records the share of a query term in the tool at `slot` (its posting's packed counts), as `#score` computes it. */
    const take = (term: number, slot: number, packed: number): number => {
      const tf = this.#tf(slot, packed, inverseAverage);
      const share = ((idfs[term] as number) * tf) / (K1 + tf);
      shares[term] = share;
      holds[term] = 1;
      return share;
    };
    const keep = limit + 1;
    // The best `keep` tools so far, best first.
    const bestSlots: number[] = [];
    const bestScores: number[] = [];
    /** Whether (score, slot) ranks before the kept tool at `rank`. */
    const before = (score: number, slot: number, rank: number): boolean => {
      const other = bestScores[rank] as number;
      return score !== other ? score > other : compareCodePoints(names[slot] as string, names[bestSlots[rank] as number] as string) < 0;
    };
    let theta = -1;
    // byBound[0 .. essential - 1] are the non-essential terms.
    let essential = 0;
    for (;;) {
      let slot = 0x7fffffff;
      for (let j = essential; j < m; j++) {
        const term = byBound[j] as number;
        const index = at[term] as number;
        if (index < (ends[term] as number)) slot = Math.min(slot, (lists[term] as Int32Array)[index] as number);
      }
      if (slot === 0x7fffffff) break;
      const alive = this.#visible(slot, snapshot);
      let partial = 0;
      for (let j = essential; j < m; j++) {
        const term = byBound[j] as number;
        const list = lists[term] as Int32Array;
        const index = at[term] as number;
        holds[term] = 0;
        if (index < (ends[term] as number) && list[index] === slot) {
          at[term] = index + 2;
          if (alive) partial += take(term, slot, list[index + 1] as number);
        }
      }
      if (!alive) continue;
      let reached = true;
      for (let j = essential - 1; j >= 0; j--) {
        if ((partial + (below[j + 1] as number)) * SLACK < theta) {
          reached = false;
          break;
        }
        const term = byBound[j] as number;
        const list = lists[term] as Int32Array;
        const index = seek(list, at[term] as number, ends[term] as number, slot);
        at[term] = index;
        holds[term] = 0;
        if (index < (ends[term] as number) && list[index] === slot) partial += take(term, slot, list[index + 1] as number);
      }
      if (!reached) continue;
      // The score as `match` sums it: from 0, in query-term order.
      let score = 0;
      for (let term = 0; term < m; term++) if (holds[term] === 1) score += shares[term] as number;
      if (after !== undefined && compareHits({ score, name: names[slot] as string }, after) <= 0) continue;
      if (bestSlots.length === keep && !before(score, slot, keep - 1)) continue;
      if (!accept(snapshot === undefined ? (this.#items[slot] as T) : this.#current(slot))) continue;
      let low = 0;
      let high = bestSlots.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (before(score, slot, middle)) high = middle;
        else low = middle + 1;
      }
      bestSlots.splice(low, 0, slot);
      bestScores.splice(low, 0, score);
      if (bestSlots.length > keep) {
        bestSlots.pop();
        bestScores.pop();
      }
      if (bestSlots.length === keep) {
        theta = bestScores[keep - 1] as number;
        while (essential < m && (below[essential + 1] as number) < theta) essential++;
      }
    }
    const more = bestSlots.length > limit;
    if (more) {
      bestSlots.pop();
      bestScores.pop();
    }
    const page = bestSlots.map((slot, rank) => ({ name: names[slot] as string, item: snapshot === undefined ? (this.#items[slot] as T) : this.#current(slot), score: bestScores[rank] as number }));
    return { page, more };
  }
}

/**
 * `array` copied into a larger one of at least `need` elements: twice the size while small, a
 * quarter more once large (little unused room in a list grown one posting at a time, at a few
 * more copies per element).
 */
function grow(array: Int32Array, need: number): Int32Array {
  const length = array.length;
  const grown = new Int32Array(Math.max(need, length < 64 ? Math.max(4, length * 2) : length + (length >> 3) * 2));
  grown.set(array);
  return grown;
}

/** `array` copied into a larger Float64Array of at least `need` elements (a quarter more, as `grow`). */
function grownFloats(array: Float64Array, need: number): Float64Array {
  const grown = new Float64Array(Math.max(need, 64, array.length + (array.length >> 2)));
  grown.set(array);
  return grown;
}

/** What a slot whose term ids are `#termPool[start .. end]` counts for in the entry totals: its posting entries and one for the slot itself. */
function slotEntries(start: number, end: number): number {
  return end - start + 1;
}

/**
 * The union of sorted disjoint ranges `ranges` ([from, to, from, to, ...]) and the ranges `added`
 * (any order, none empty), sorted and disjoint; past `most` ranges, the ones closest together are
 * joined (a range only grows: a revision inside one before is inside one after).
 */
function mergeRanges(ranges: readonly number[], added: readonly number[], most: number): number[] {
  const pairs: [number, number][] = [];
  for (let at = 0; at < ranges.length; at += 2) pairs.push([ranges[at] as number, ranges[at + 1] as number]);
  for (let at = 0; at < added.length; at += 2) pairs.push([added[at] as number, added[at + 1] as number]);
  pairs.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [from, to] of pairs) {
    const last = merged.at(-1);
    if (last !== undefined && from <= last[1]) last[1] = Math.max(last[1], to);
    else merged.push([from, to]);
  }
  if (merged.length > most) {
    // Joined across the merged.length - most smallest gaps (gap `at`: between range at and at + 1).
    const gaps = Array.from({ length: merged.length - 1 }, (_, at) => at);
    const gapOf = (at: number): number => (merged[at + 1] as [number, number])[0] - (merged[at] as [number, number])[1];
    gaps.sort((a, b) => gapOf(a) - gapOf(b) || a - b);
    const joined = new Uint8Array(merged.length);
    for (const at of gaps.slice(0, merged.length - most)) joined[at] = 1;
    const fewer: [number, number][] = [];
    for (let at = 0; at < merged.length; at++) {
      const range = merged[at] as [number, number];
      if (at > 0 && joined[at - 1] === 1) (fewer.at(-1) as [number, number])[1] = range[1];
      else fewer.push([range[0], range[1]]);
    }
    return fewer.flat();
  }
  return merged.flat();
}

/** `array` copied into one of `length` elements. */
function resized(array: Int32Array, length: number): Int32Array {
  const copy = new Int32Array(length);
  copy.set(array.subarray(0, Math.min(length, array.length)));
  return copy;
}

/** Per field: 1 / average length (0 when the field is empty everywhere). */
function inverseAverageOf(count: number, totals: readonly number[]): number[] {
  return totals.map((total) => (total === 0 ? 0 : count / total));
}

/** BM25's idf of a term held by `df` of `count` tools. */
function idfOf(count: number, df: number): number {
  return Math.log(1 + (count - df + 0.5) / (df + 0.5));
}

/** In a [slot, counts, ...] list sorted by slot: the index of the first entry at or after `from` whose slot is ≥ `slot` (`end` if none); galloping. */
function seek(list: Int32Array, from: number, end: number, slot: number): number {
  if (from >= end || (list[from] as number) >= slot) return from;
  // Entries are pairs: search over pair numbers. list[low * 2] < slot holds throughout.
  let low = from >>> 1;
  const last = (end >>> 1) - 1;
  let step = 1;
  let high = low + step;
  while (high <= last && (list[high * 2] as number) < slot) {
    low = high;
    step *= 2;
    high = low + step;
  }
  if (high > last) high = last + 1;
  // The first pair in (low, high] whose slot is ≥ `slot` (high = last + 1: none).
  while (low + 1 < high) {
    const middle = (low + high) >>> 1;
    if ((list[middle * 2] as number) < slot) low = middle;
    else high = middle;
  }
  return high * 2;
}

/**
 * The first `limit` hits in ranking order that come after `after` (when given); `more` says
 * whether any hit is left beyond them. Keeps only `limit + 1` in hand: O(n log limit).
 */
export function topHits<H extends RankKey>(hits: readonly H[], limit: number, after?: RankKey): { page: H[]; more: boolean } {
  const keep = limit + 1;
  const best: H[] = [];
  for (const hit of hits) {
    if (after !== undefined && compareHits(hit, after) <= 0) continue;
    if (best.length === keep && compareHits(hit, best[keep - 1] as H) >= 0) continue;
    let low = 0;
    let high = best.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareHits(best[middle] as H, hit) < 0) low = middle + 1;
      else high = middle;
    }
    best.splice(low, 0, hit);
    if (best.length > keep) best.pop();
  }
  const more = best.length > limit;
  if (more) best.pop();
  return { page: best, more };
}
