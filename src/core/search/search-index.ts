// An inverted index over tool specs, ranked by BM25F, updated one tool at a time.
// Each tool has a slot; each term a posting list of (slot, packed per-field counts). A
// removed or replaced tool's slot is marked dead and skipped; its postings are swept out
// when dead ones outnumber live ones, so a write costs its own terms, never the index.
// Scores depend only on integer statistics (counts, lengths, document frequencies), summed in
// query-term order: the same tools give bit-identical scores whatever order they came in.
import { compareCodePoints } from '../canonical.js';
import type { ToolSpec } from '../contracts.js';
import { FIELDS, FIELD_WEIGHTS } from './fields.js';
import { specTerms } from './fields.js';

const FIELD_COUNT = FIELDS.length;
const EMPTY = new Int32Array(0);
/** Per-field term counts are packed 6 bits each into one small integer (capped at 63). */
const TF_BITS = 6;
const TF_MAX = (1 << TF_BITS) - 1;
/** BM25's term-frequency saturation. */
const K1 = 1.2;
const WEIGHTS = FIELDS.map((field) => FIELD_WEIGHTS[field].weight);
const BS = FIELDS.map((field) => FIELD_WEIGHTS[field].b);

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

/** Ranking order: higher score first, then name in code-point order. */
export function compareHits(a: RankKey, b: RankKey): number {
  return a.score !== b.score ? b.score - a.score : compareCodePoints(a.name, b.name);
}

export class SearchIndex<T> {
  readonly #slotOf = new Map<string, number>();
  #names: (string | undefined)[] = [];
  #items: (T | undefined)[] = [];
  /** Per slot: its term ids (each once), to undo its document frequencies on removal. */
  #termsOf: (Int32Array | undefined)[] = [];
  /** Per slot and field: the field's length in terms. */
  #lengths: number[] = [];
  #free: number[] = [];
  readonly #termId = new Map<string, number>();
  /**
   * Per term: [slot, packed counts, slot, packed counts, ...] in a growable Int32Array (half
   * the memory of a JS array of numbers), its used length in `#used`; dead slots included until swept.
   */
  #postings: Int32Array[] = [];
  #used: number[] = [];
  /** Per term: live tools holding it. */
  #df: number[] = [];
  readonly #totalLength = new Array<number>(FIELD_COUNT).fill(0);
  #live = 0;
  /** Posting entries of dead slots not yet swept, and all entries. */
  #deadEntries = 0;
  #entries = 0;
  /** Slots dead but not yet free (their postings are still in the lists). */
  #dying: number[] = [];
  /** Scratch for one `set`: term ids in first-occurrence order, and per term id its packed counts (0 between calls). */
  #order: number[] = [];
  #packedOf: number[] = [];
  /** Scratch per slot for one query. */
  #scores = new Float64Array(0);

  /** Live tools. */
  get size(): number {
    return this.#live;
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
   */
  set(name: string, item: T, spec: Pick<ToolSpec, 'tool_name' | 'description' | 'tags' | 'input_schema'>, unchanged?: (old: T) => boolean): void {
    const existing = this.#slotOf.get(name);
    if (existing !== undefined && unchanged?.(this.#items[existing] as T) === true) {
      this.#items[existing] = item;
      return;
    }
    this.delete(name);
    const fields = specTerms(spec);
    // Per-tool counts in scratch arrays indexed by term id (no Map of strings per tool): the
    // ids in the order their terms first occur, and each id's packed per-field counts.
    const order = this.#order;
    const packedOf = this.#packedOf;
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
          this.#used.push(0);
          this.#df.push(0);
          packedOf.push(0);
        }
        const packed = packedOf[id] as number;
        if (packed === 0) order[distinct++] = id;
        if (((packed >> shift) & TF_MAX) < TF_MAX) packedOf[id] = packed + (1 << shift);
      }
    }
    const slot = this.#free.pop() ?? this.#names.length;
    this.#names[slot] = name;
    this.#items[slot] = item;
    for (let field = 0; field < FIELD_COUNT; field++) {
      const length = (fields[field] as string[]).length;
      this.#lengths[slot * FIELD_COUNT + field] = length;
      this.#totalLength[field] = (this.#totalLength[field] as number) + length;
    }
    const ids = new Int32Array(distinct);
    for (let index = 0; index < distinct; index++) {
      const id = order[index] as number;
      const packed = packedOf[id] as number;
      packedOf[id] = 0;
      const used = this.#used[id] as number;
      let list = this.#postings[id] as Int32Array;
      if (used + 2 > list.length) {
        const grown = new Int32Array(Math.max(2, list.length * 2));
        grown.set(list);
        this.#postings[id] = list = grown;
      }
      list[used] = slot;
      list[used + 1] = packed;
      this.#used[id] = used + 2;
      this.#df[id] = (this.#df[id] as number) + 1;
      ids[index] = id;
    }
    this.#termsOf[slot] = ids;
    this.#entries += ids.length;
    this.#slotOf.set(name, slot);
    this.#live++;
  }

  /** Removes the tool; `true` when it was there. */
  delete(name: string): boolean {
    const slot = this.#slotOf.get(name);
    if (slot === undefined) return false;
    this.#slotOf.delete(name);
    this.#live--;
    const ids = this.#termsOf[slot] as Int32Array;
    for (const id of ids) this.#df[id] = (this.#df[id] as number) - 1;
    for (let field = 0; field < FIELD_COUNT; field++) {
      this.#totalLength[field] = (this.#totalLength[field] as number) - (this.#lengths[slot * FIELD_COUNT + field] as number);
    }
    this.#names[slot] = undefined;
    this.#items[slot] = undefined;
    this.#deadEntries += ids.length;
    this.#dying.push(slot);
    if (this.#deadEntries > 1024 && this.#deadEntries * 2 > this.#entries) this.#sweep();
    return true;
  }

  /** Forgets every tool. */
  clear(): void {
    this.#slotOf.clear();
    this.#names = [];
    this.#items = [];
    this.#termsOf = [];
    this.#lengths = [];
    this.#free = [];
    this.#dying = [];
    this.#termId.clear();
    this.#postings = [];
    this.#used = [];
    this.#df = [];
    this.#packedOf = [];
    this.#totalLength.fill(0);
    this.#live = 0;
    this.#deadEntries = 0;
    this.#entries = 0;
  }

  /** Takes dead slots' entries out of every posting list touched, and frees the slots. */
  #sweep(): void {
    const touched = new Set<number>();
    for (const slot of this.#dying) for (const id of this.#termsOf[slot] as Int32Array) touched.add(id);
    for (const id of touched) {
      const list = this.#postings[id] as Int32Array;
      const used = this.#used[id] as number;
      let kept = 0;
      for (let index = 0; index < used; index += 2) {
        const slot = list[index] as number;
        if (this.#names[slot] === undefined) continue;
        list[kept++] = slot;
        list[kept++] = list[index + 1] as number;
      }
      this.#used[id] = kept;
      // Shrunk when mostly empty, so a list that once was long does not keep its memory.
      if (kept * 4 < list.length) this.#postings[id] = kept === 0 ? EMPTY : list.slice(0, kept * 2);
    }
    for (const slot of this.#dying) {
      this.#termsOf[slot] = undefined;
      this.#free.push(slot);
    }
    this.#entries -= this.#deadEntries;
    this.#deadEntries = 0;
    this.#dying = [];
  }

  /** Scores every live tool holding a term into `#scores`; returns the slots touched (scores > 0). */
  #score(terms: readonly string[]): number[] {
    const ids: number[] = [];
    for (const term of new Set(terms)) {
      const id = this.#termId.get(term);
      if (id !== undefined && (this.#df[id] as number) > 0) ids.push(id);
    }
    if (ids.length === 0 || this.#live === 0) return [];
    const slots = this.#names.length;
    if (this.#scores.length < slots) this.#scores = new Float64Array(Math.max(slots, this.#scores.length * 2));
    const scores = this.#scores;
    const names = this.#names;
    const touched: number[] = [];
    const count = this.#live;
    // Per field: 1 / average length (0 when the field is empty everywhere).
    const inverseAverage = this.#totalLength.map((total) => (total === 0 ? 0 : count / total));
    const lengths = this.#lengths;
    for (const id of ids) {
      const df = this.#df[id] as number;
      const idf = Math.log(1 + (count - df + 0.5) / (df + 0.5));
      const list = this.#postings[id] as Int32Array;
      const used = this.#used[id] as number;
      for (let index = 0; index < used; index += 2) {
        const slot = list[index] as number;
        if (names[slot] === undefined) continue;
        let packed = list[index + 1] as number;
        let tf = 0;
        for (let field = 0; packed !== 0; field++, packed >>>= TF_BITS) {
          const raw = packed & TF_MAX;
          if (raw === 0) continue;
          const b = BS[field] as number;
          const norm = 1 - b + b * (lengths[slot * FIELD_COUNT + field] as number) * (inverseAverage[field] as number);
          tf += ((WEIGHTS[field] as number) * raw) / norm;
        }
        if (scores[slot] === 0) touched.push(slot);
        scores[slot] = (scores[slot] as number) + (idf * tf) / (K1 + tf);
      }
    }
    return touched;
  }

  /**
   * Every live tool that has at least one of `terms` and that `accept` lets through, with its
   * BM25F score (unsorted). A term given twice counts once.
   */
  match(terms: readonly string[], accept: (item: T) => boolean = () => true): Hit<T>[] {
    const touched = this.#score(terms);
    // Read after scoring: #score may have grown the scratch array.
    const scores = this.#scores;
    const hits: Hit<T>[] = [];
    for (const slot of touched) {
      const item = this.#items[slot] as T;
      if (accept(item)) hits.push({ name: this.#names[slot] as string, item, score: scores[slot] as number });
      scores[slot] = 0;
    }
    return hits;
  }

  /**
   * The first `limit` matches in ranking order after `after` (when given), and whether more
   * follow: `topHits(match(terms, accept), limit, after)` without a Hit for every match.
   */
  top(terms: readonly string[], limit: number, accept: (item: T) => boolean = () => true, after?: RankKey): { page: Hit<T>[]; more: boolean } {
    const touched = this.#score(terms);
    // Read after scoring: #score may have grown the scratch array.
    const scores = this.#scores;
    const names = this.#names;
    const keep = limit + 1;
    // The best `keep` slots so far, best first; a candidate is compared with the worst kept first.
    const best: number[] = [];
    const before = (a: number, b: number): boolean => {
      const sa = scores[a] as number;
      const sb = scores[b] as number;
      return sa !== sb ? sa > sb : compareCodePoints(names[a] as string, names[b] as string) < 0;
    };
    for (const slot of touched) {
      if (after !== undefined && compareHits({ score: scores[slot] as number, name: names[slot] as string }, after) <= 0) continue;
      if (best.length === keep && !before(slot, best[keep - 1] as number)) continue;
      if (!accept(this.#items[slot] as T)) continue;
      let low = 0;
      let high = best.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (before(best[middle] as number, slot)) low = middle + 1;
        else high = middle;
      }
      best.splice(low, 0, slot);
      if (best.length > keep) best.pop();
    }
    const more = best.length > limit;
    if (more) best.pop();
    const page = best.map((slot) => ({ name: names[slot] as string, item: this.#items[slot] as T, score: scores[slot] as number }));
    for (const slot of touched) scores[slot] = 0;
    return { page, more };
  }
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
