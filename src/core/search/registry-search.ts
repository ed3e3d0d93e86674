// Search and paging for every store, in the core. The index is kept by the base registry and
// follows the change log: each search first asks the store for its revision (memory: a
// field; SQLite: one indexed read; PostgreSQL: the read cache's position) and, when it
// moved, reads the changes since and the changed tools' current registrations through the
// store's own read path (its cache when on), so results are exactly as fresh as `get` and
// `listAll`, other processes' commits included. Each write costs one tool's re-indexing.
import { createHash } from 'node:crypto';
import { compareCodePoints } from '../canonical.js';
import type { ToolRegistration } from '../contracts.js';
import { StorageUnavailableError, ValidationError } from '../errors.js';
import { formatPath, previewValue } from '../issues.js';
import type { ChangeLogPage, StoreReader, StoreScope } from '../base-tool-registry.js';
import type { ListPageOptions, ListPageResult, SearchOptions, SearchResult } from '../registry.js';
import { SearchIndex, topHits } from './search-index.js';
import type { Hit, RankKey, RankSnapshot } from './search-index.js';
import { embeddingText, FIELDS } from './fields.js';
import { fuse, vectorCache } from './semantic.js';
import type { Embed } from './semantic.js';
import { tokenize } from './tokens.js';

/** Largest `limit` of one page of `search` or `listPage`. */
export const MAX_PAGE = 1000;
const DEFAULT_SEARCH_LIMIT = 10;
const DEFAULT_LIST_LIMIT = 100;
/** Change-log events read per page while catching up. */
const CHANGES_PAGE = 1000;
/**
 * A query ranks by its first this many distinct terms: a search cursor carries one document
 * frequency per term, so this bounds its size (with a 128-character name, under 2 KB).
 */
export const MAX_QUERY_TERMS = 64;

/** A store's revision, with the log's mark there when the store has one (change-log-mark.ts). */
export type SearchHead = number | { readonly revision: number; readonly mark: string };

/** What the index needs of a store: the base registry's hooks. */
export interface IndexSource {
  revision(): SearchHead | Promise<SearchHead>;
  /**
   * The log after `since`, with the page's mark and whether the log still holds the position
   * `mark` named at `since` (a watch's marks): a restored backup or dump hands the same
   * revisions out again for other changes, so the events after the index's revision are not
   * what changed since the index was built.
   */
  changes(since: number, limit: number, mark: string | undefined): Promise<ChangeLogPage>;
  read<T>(scope: StoreScope, work: (reader: StoreReader) => T, operation: string): T | Promise<T>;
  /** Whether a failure may pass by itself (a server away), not a lasting one (a right missing). */
  transient(error: unknown): boolean;
}

interface Doc {
  readonly registration: ToolRegistration;
  readonly fingerprint: string;
}

function invalid(method: string, field: string, value: unknown, why: string): ValidationError {
  const message = `${method}(): ${field} ${why}, got ${previewValue(value)}`;
  return new ValidationError(message, [Object.freeze({ code: 'custom', message: `${why}`, path: Object.freeze([field]), pathText: formatPath([field]) })], { path: field });
}

function optionsOf(method: string, options: unknown): Record<string, unknown> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) throw new TypeError(`${method}(): options must be an object, got ${options === null ? 'null' : typeof options}`);
  return options as Record<string, unknown>;
}

function booleanOf(method: string, name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new TypeError(`${method}(): ${name} must be a boolean, got ${typeof value}`);
  return value;
}

/** `tags`: an array of strings (every one must be on the tool); a string alone is one tag. */
export function tagsOf(method: string, value: unknown): readonly string[] {
  if (value === undefined) return [];
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value) || value.some((tag) => typeof tag !== 'string')) {
    throw new TypeError(`${method}(): tags must be an array of strings, got ${previewValue(value)}`);
  }
  return value as string[];
}

function limitOf(method: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`${method}(): limit must be a number, got ${typeof value}`);
  if (!Number.isInteger(value) || value < 1 || value > MAX_PAGE) throw invalid(method, 'limit', value, `must be an integer from 1 to ${MAX_PAGE}`);
  return value;
}

/** Whether a registration passes the filters. */
export function filterOf(includeDisabled: boolean, tags: readonly string[]): (registration: ToolRegistration) => boolean {
  if (tags.length === 0) return includeDisabled ? () => true : (registration) => registration.enabled;
  return (registration) => (includeDisabled || registration.enabled) && tags.every((tag) => registration.spec.tags.includes(tag));
}

// --- cursors: base64url JSON, opaque to callers ------------------------------------------

function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

function decodeCursor(method: string, cursor: unknown): unknown {
  if (typeof cursor !== 'string') throw new TypeError(`${method}(): cursor must be a string (a next_cursor), got ${previewValue(cursor)}`);
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
  } catch {
    throw invalid(method, 'cursor', cursor, 'is not a cursor this registry handed out');
  }
}

/** The parsed options of `search`. */
export interface ParsedSearch {
  /** The query's distinct terms in order (at most MAX_QUERY_TERMS). */
  readonly terms: string[];
  readonly query: string;
  readonly limit: number;
  readonly accept: (registration: ToolRegistration) => boolean;
  readonly after: RankKey | undefined;
  /** A later page: what the first page ranked with (with `after`), and the cursor that said so. */
  readonly snapshot: RankSnapshot | undefined;
  readonly cursor: string | undefined;
  /** Ties a cursor to the query and filters it was made for. */
  readonly key: string;
  readonly embed: Embed | undefined;
}

export function parseSearch(query: unknown, options: unknown): ParsedSearch {
  if (typeof query !== 'string') throw new TypeError(`search(): query must be a string, got ${previewValue(query)}`);
  const given = optionsOf('search', options) as SearchOptions;
  const limit = limitOf('search', given.limit, DEFAULT_SEARCH_LIMIT);
  const includeDisabled = booleanOf('search', 'includeDisabled', given.includeDisabled);
  const tags = tagsOf('search', given.tags);
  const embed = given.embed;
  if (embed !== undefined && typeof embed !== 'function') throw new TypeError(`search(): embed must be a function, got ${typeof embed}`);
  const key = createHash('sha256')
    .update(JSON.stringify([query, [...tags].sort(), includeDisabled, embed !== undefined]))
    .digest('base64url')
    .slice(0, 12);
  const terms = [...new Set(tokenize(query))].slice(0, MAX_QUERY_TERMS);
  let after: RankKey | undefined;
  let snapshot: RankSnapshot | undefined;
  let cursor: string | undefined;
  if (given.cursor !== undefined && given.cursor !== null) {
    ({ after, snapshot } = searchCursorOf(given.cursor, key, terms.length));
    cursor = given.cursor;
  }
  return { terms, query, limit, accept: filterOf(includeDisabled, tags), after, snapshot, cursor, key, embed };
}

// A search cursor: ['S', key, revision, count, [total length per field], [df per distinct query
// term], score, name]: the last result's (score, name) and the statistics the first page ranked
// with (RankSnapshot), so that every later page ranks as the first did.
const SEARCH_CURSOR = 'S';

function searchCursor(key: string, snapshot: RankSnapshot, last: RankKey): string {
  return encodeCursor([SEARCH_CURSOR, key, snapshot.revision, snapshot.count, snapshot.totals, snapshot.df, last.score, last.name]);
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

function searchCursorOf(cursor: string, key: string, terms: number): { after: RankKey; snapshot: RankSnapshot } {
  const decoded = decodeCursor('search', cursor);
  const bad = (why: string): ValidationError => invalid('search', 'cursor', cursor, why);
  if (!Array.isArray(decoded)) throw bad('is not a search cursor this registry handed out');
  // Before issue 38 a search cursor was ['s', key, score, name]: it cannot rank as its first page did.
  if (decoded[0] === 's') throw bad('is a search cursor of an earlier release (start again from the first page)');
  const [tag, cursorKey, revision, count, totals, df, score, name] = decoded as unknown[];
  if (
    decoded.length !== 8 ||
    tag !== SEARCH_CURSOR ||
    typeof cursorKey !== 'string' ||
    !isCount(revision) ||
    !isCount(count) ||
    count === 0 ||
    !Array.isArray(totals) ||
    totals.length !== FIELDS.length ||
    !totals.every(isCount) ||
    !Array.isArray(df) ||
    !df.every((value) => isCount(value) && value <= count) ||
    typeof score !== 'number' ||
    !Number.isFinite(score) ||
    score < 0 ||
    typeof name !== 'string' ||
    name.length > 128
  ) {
    throw bad('is not a search cursor this registry handed out');
  }
  if (cursorKey !== key || df.length !== terms) throw bad('was made for another query, tags or includeDisabled');
  return { after: { score, name }, snapshot: { revision, count, totals: totals as number[], df: df as number[] } };
}

/** The parsed options of `listPage`. */
export interface ParsedListPage {
  readonly includeDisabled: boolean;
  readonly accept: (registration: ToolRegistration) => boolean;
  readonly limit: number;
  readonly after: string | undefined;
}

export function parseListPage(options: unknown): ParsedListPage {
  const given = optionsOf('listPage', options) as ListPageOptions;
  const includeDisabled = booleanOf('listPage', 'includeDisabled', given.includeDisabled);
  const tags = tagsOf('listPage', given.tags);
  const limit = limitOf('listPage', given.limit, DEFAULT_LIST_LIMIT);
  let after: string | undefined;
  if (given.cursor !== undefined && given.cursor !== null) {
    const decoded = decodeCursor('listPage', given.cursor);
    if (!Array.isArray(decoded) || decoded[0] !== 'p' || typeof decoded[1] !== 'string') {
      throw invalid('listPage', 'cursor', given.cursor, 'is not a listPage cursor this registry handed out');
    }
    after = decoded[1];
  }
  return { includeDisabled, accept: filterOf(includeDisabled, tags), limit, after };
}

/**
 * One keyset page of `sorted` (registrations by name): the first `limit` after the cursor's
 * name that pass the filter. Names added or removed between pages never shift a page.
 */
export function listPageOf(sorted: readonly ToolRegistration[], options: ParsedListPage): ListPageResult {
  let start = 0;
  if (options.after !== undefined) {
    const after = options.after;
    let high = sorted.length;
    while (start < high) {
      const middle = (start + high) >>> 1;
      if (compareCodePoints((sorted[middle] as ToolRegistration).spec.tool_name, after) <= 0) start = middle + 1;
      else high = middle;
    }
  }
  const registrations: ToolRegistration[] = [];
  let index = start;
  for (; index < sorted.length && registrations.length < options.limit; index++) {
    const registration = sorted[index] as ToolRegistration;
    if (options.accept(registration)) registrations.push(registration);
  }
  // Another page only if a later tool passes the filter.
  let more = false;
  for (; index < sorted.length && !more; index++) more = options.accept(sorted[index] as ToolRegistration);
  const last = registrations.at(-1);
  return Object.freeze({
    registrations: Object.freeze(registrations) as ToolRegistration[],
    next_cursor: more && last !== undefined ? encodeCursor(['p', last.spec.tool_name]) : null,
  });
}

/** A registry's search index, kept current from the change log. */
export class RegistrySearchIndex {
  readonly #index = new SearchIndex<Doc>();
  /** This index as its embedders' caches know it (`#pruneVectors`). */
  #self: WeakRef<RegistrySearchIndex> | undefined;
  /** The revision the index reflects; -1 before it is built. */
  #revision = -1;
  /**
   * Cursors of revisions below this were given out by an index this process rebuilt since: the
   * new one does not know what changed before it, so they are refused (docs/search.md).
   */
  #rebuiltAt = -1;
  /** The log's mark at `#revision` (undefined: not known, nothing compared). */
  #mark: string | undefined;
  #refreshing: Promise<void> | undefined;

  /** Brings the index up to date with the store's reads (one refresh at a time). */
  async refresh(source: IndexSource): Promise<void> {
    while (this.#refreshing !== undefined) await this.#refreshing.catch(() => {});
    const running = this.#catchUp(source);
    this.#refreshing = running;
    try {
      await running;
    } finally {
      if (this.#refreshing === running) this.#refreshing = undefined;
    }
  }

  async #catchUp(source: IndexSource): Promise<void> {
    const current = await source.revision();
    const head = typeof current === 'number' ? current : current.revision;
    // The same revision of another log (restored in place) is no reason to stop.
    const sameLog = typeof current === 'number' || this.#mark === undefined || current.mark === this.#mark;
    if (this.#revision >= 0 && head === this.#revision && sameLog) return;
    const headMark = typeof current === 'number' ? undefined : current.mark;
    if (this.#revision < 0 || head <= this.#revision) return this.#rebuild(source, head, headMark);
    // Each changed tool with the revision of its last change.
    const names = new Map<string, number>();
    let since = this.#revision;
    let mark = this.#mark;
    for (;;) {
      let page: ChangeLogPage;
      try {
        page = await source.changes(since, CHANGES_PAGE, mark);
      } catch (error) {
        // The log cannot be read while the reads may still answer (a PostgreSQL cache within
        // its staleIfErrorMs while the server is away): build from the reads, as get() answers.
        if (error instanceof StorageUnavailableError && source.transient(error)) return this.#rebuild(source, head, headMark);
        throw error;
      }
      // Restored to an older state, or another log restored in place (a backup of another
      // moment or file), or the log no longer holds what the index missed: build anew.
      if (page.revision < since || page.replaced === true || (page.revision > since && page.oldestRevision > since + 1)) return this.#rebuild(source, head, headMark);
      mark = page.mark;
      for (const event of page.events) names.set(event.tool_name, event.revision);
      if (names.size > Math.max(CHANGES_PAGE, this.#index.size)) return this.#rebuild(source, head, headMark);
      since = page.events.at(-1)?.revision ?? since;
      if (page.events.length < CHANGES_PAGE) {
        since = Math.max(since, page.revision);
        break;
      }
    }
    const wanted = [...names.keys()];
    const read = source.read(
      { names: wanted },
      (reader) => ({ docs: wanted.map((name) => docOf(reader, name)), revision: reader.revision() }),
      'search',
    );
    const { docs, revision } = read instanceof Promise ? await read : read;
    // A version is current from its change's revision, never later than what was read (so never
    // after the index's revision: a first page sees every version it ranks).
    wanted.forEach((name, index) => this.#put(name, docs[index], Math.min(names.get(name) as number, revision)));
    // Never ahead of what was read (a cache behind the log): the rest is read again next time.
    this.#revision = Math.min(since, revision);
    this.#mark = this.#revision === since ? mark : undefined;
  }

  async #rebuild(source: IndexSource, head: number, headMark: string | undefined): Promise<void> {
    // Two reads: the names (a store may read every tool without its spec text, as an import
    // plan does), then their registrations. A tool added in between is in the log after the
    // first read's revision, which the index does not pass, so the next search adds it.
    const listed = source.read({ all: true }, (reader) => ({ names: [...reader.records().keys()], revision: reader.revision() }), 'search');
    const { names, revision: listedAt } = listed instanceof Promise ? await listed : listed;
    const read = source.read({ names }, (reader) => ({ docs: names.map((name) => docOf(reader, name)), revision: reader.revision() }), 'search');
    const { docs, revision } = read instanceof Promise ? await read : read;
    const tools: { name: string; item: Doc; spec: ToolRegistration['spec'] }[] = [];
    names.forEach((name, index) => {
      const doc = docs[index];
      if (doc !== undefined) tools.push({ name, item: doc, spec: doc.registration.spec });
    });
    const built = this.#revision >= 0;
    this.#index.build(tools);
    this.#revision = Math.min(head, listedAt, revision);
    // Rebuilt after a burst (or a log restored in place): the cursors of the index it replaces
    // could show a tool twice or skip one, as the rebuilt index ranks every tool as it is now.
    if (built) this.#rebuiltAt = Math.max(this.#rebuiltAt, this.#revision);
    // The log's mark there, so that a log restored in place before the next catch-up is found:
    // the revision read's when the index is at that revision (no read of the log, which a
    // PostgreSQL cache answering while the server is away could not make).
    if (this.#revision === head && headMark !== undefined) {
      this.#mark = headMark;
      return;
    }
    const page = await source.changes(this.#revision, 0, undefined);
    this.#mark = page.revision === this.#revision ? page.mark : undefined;
  }

  #put(name: string, doc: Doc | undefined, revision: number): void {
    if (doc === undefined) {
      this.#index.delete(name, revision);
      return;
    }
    this.#index.set(name, doc, doc.registration.spec, (old) => old.fingerprint === doc.fingerprint, revision);
  }

  /** Forgets everything (the registry closed). */
  clear(): void {
    this.#index.clear();
    this.#revision = -1;
    this.#mark = undefined;
  }

  /**
   * One page of results (call `refresh` first). A first page ranks with the index's statistics
   * now; its cursor carries them (and the revision), so every later page of the query ranks the
   * same tool versions with the same statistics: a tool's score cannot move between pages.
   */
  async search(parsed: ParsedSearch): Promise<{ results: SearchResult[]; next_cursor: string | null }> {
    const accept = (doc: Doc): boolean => parsed.accept(doc.registration);
    let selected: { page: Hit<Doc>[]; more: boolean };
    let snapshot = parsed.snapshot;
    this.#index.expire();
    // A version the first page ranked may have been swept out since: the page could skip its
    // tool, so the cursor is refused (docs/search.md, "Pages under writes").
    if (snapshot !== undefined && (snapshot.revision < this.#rebuiltAt || this.#index.lostAt(snapshot.revision))) {
      throw invalid('search', 'cursor', parsed.cursor, 'is too old for the writes since its first page (a tool version it ranked is no longer kept); start again from the first page');
    }
    if (parsed.embed === undefined) {
      selected = this.#index.top(parsed.terms, parsed.limit, accept, parsed.after, snapshot);
      if (selected.more && snapshot === undefined) snapshot = this.#index.snapshot(parsed.terms, this.#revision);
    } else {
      // Taken before the embedder is awaited (another search may bring the index up to date meanwhile).
      snapshot ??= this.#index.snapshot(parsed.terms, this.#revision);
      // Ranks are taken among every version the snapshot holds, before the filters, so that a
      // tool disabled or removed between pages does not move the others' fused scores.
      const versions = this.#index.versions(parsed.terms, snapshot);
      const scores = await fuse(
        versions.map((hit) => ({ name: hit.name, score: hit.score, fingerprint: hit.version.fingerprint, text: () => embeddingText(hit.version.registration.spec) })),
        parsed.query,
        parsed.embed,
      );
      this.#pruneVectors(parsed.embed);
      const hits: Hit<Doc>[] = [];
      versions.forEach((hit, index) => {
        if (hit.item !== undefined && accept(hit.item)) hits.push({ name: hit.name, item: hit.item, score: scores[index] as number });
      });
      selected = topHits(hits, parsed.limit, parsed.after);
    }
    const { page, more } = selected;
    const last = page.at(-1);
    return {
      results: page.map((hit) => Object.freeze({ registration: hit.item.registration, score: hit.score })),
      next_cursor: more && last !== undefined && snapshot !== undefined ? searchCursor(parsed.key, snapshot, last) : null,
    };
  }

  /**
   * Keeps an embedder's cache from growing past twice the tools of the registries that use it
   * (vectors of specs none of them holds go). Counted over them all: the cache is shared, and
   * a registry of 1 tool trimmed it to its own, so the next search of one of 2,000 asked the
   * embedder for all 2,000 vectors again.
   */
  #pruneVectors(embed: Embed): void {
    let users = embedUsers.get(embed);
    if (users === undefined) embedUsers.set(embed, (users = new Set()));
    users.add((this.#self ??= new WeakRef(this)));
    const live: RegistrySearchIndex[] = [];
    for (const user of users) {
      const search = user.deref();
      if (search === undefined) users.delete(user);
      else live.push(search);
    }
    const cache = vectorCache(embed);
    if (cache.size <= 2 * live.reduce((tools, search) => tools + search.#index.size, 0) + 1000) return;
    const current = new Set<string>();
    for (const search of live) for (const name of search.#index.names()) current.add((search.#index.get(name) as Doc).fingerprint);
    for (const fingerprint of cache.keys()) if (!current.has(fingerprint)) cache.delete(fingerprint);
  }
}

/** Per embedder, the registries' indexes that searched with it (weakly: a dropped registry goes). */
const embedUsers = new WeakMap<Embed, Set<WeakRef<RegistrySearchIndex>>>();

function docOf(reader: StoreReader, name: string): Doc | undefined {
  const registration = reader.get(name);
  const record = reader.find(name);
  return registration === undefined || record === undefined ? undefined : { registration, fingerprint: record.fingerprint };
}
