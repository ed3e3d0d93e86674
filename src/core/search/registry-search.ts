// Search and paging for every store, in the core. The index is kept by the base registry and
// follows the change log: each search first asks the store for its revision (memory: a
// field; SQLite: one indexed read; PostgreSQL: the read cache's position) and, when it
// moved, reads the changes since and the changed tools' current registrations through the
// store's own read path (its cache when on), so results are exactly as fresh as `get` and
// `listAll`, other processes' commits included. Each write costs one tool's re-indexing.
import { createHash } from 'node:crypto';
import { compareCodePoints } from '../canonical.js';
import type { ToolRegistration } from '../contracts.js';
import { ValidationError } from '../errors.js';
import { formatPath, previewValue } from '../issues.js';
import type { ChangeLogPage, StoreReader, StoreScope } from '../base-tool-registry.js';
import type { ListPageOptions, ListPageResult, SearchOptions, SearchResult } from '../registry.js';
import { SearchIndex, topHits } from './search-index.js';
import type { Hit, RankKey } from './search-index.js';
import { embeddingText } from './fields.js';
import { fuse, vectorCache } from './semantic.js';
import type { Embed } from './semantic.js';
import { tokenize } from './tokens.js';

/** Largest `limit` of one page of `search` or `listPage`. */
export const MAX_PAGE = 1000;
const DEFAULT_SEARCH_LIMIT = 10;
const DEFAULT_LIST_LIMIT = 100;
/** Change-log events read per page while catching up. */
const CHANGES_PAGE = 1000;

/** What the index needs of a store: the base registry's hooks. */
export interface IndexSource {
  revision(): number | Promise<number>;
  changes(since: number, limit: number): Promise<ChangeLogPage>;
  read<T>(scope: StoreScope, work: (reader: StoreReader) => T, operation: string): T | Promise<T>;
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
  readonly terms: string[];
  readonly query: string;
  readonly limit: number;
  readonly accept: (registration: ToolRegistration) => boolean;
  readonly after: RankKey | undefined;
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
  let after: RankKey | undefined;
  if (given.cursor !== undefined && given.cursor !== null) {
    const decoded = decodeCursor('search', given.cursor);
    if (!Array.isArray(decoded) || decoded[0] !== 's' || typeof decoded[2] !== 'number' || !Number.isFinite(decoded[2]) || typeof decoded[3] !== 'string') {
      throw invalid('search', 'cursor', given.cursor, 'is not a search cursor this registry handed out');
    }
    if (decoded[1] !== key) throw invalid('search', 'cursor', given.cursor, 'was made for another query, tags or includeDisabled');
    after = { score: decoded[2], name: decoded[3] };
  }
  return { terms: tokenize(query), query, limit, accept: filterOf(includeDisabled, tags), after, key, embed };
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
  /** The revision the index reflects; -1 before it is built. */
  #revision = -1;
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
    const head = await source.revision();
    if (this.#revision >= 0 && head === this.#revision) return;
    if (this.#revision < 0 || head < this.#revision) return this.#rebuild(source, head);
    const names = new Set<string>();
    let since = this.#revision;
    for (;;) {
      const page = await source.changes(since, CHANGES_PAGE);
      // Restored to an older state, or the log no longer holds what the index missed: build anew.
      if (page.revision < since || (page.revision > since && page.oldestRevision > since + 1)) return this.#rebuild(source, head);
      for (const event of page.events) names.add(event.tool_name);
      if (names.size > Math.max(CHANGES_PAGE, this.#index.size)) return this.#rebuild(source, head);
      since = page.events.at(-1)?.revision ?? since;
      if (page.events.length < CHANGES_PAGE) {
        since = Math.max(since, page.revision);
        break;
      }
    }
    const wanted = [...names];
    const read = source.read(
      { names: wanted },
      (reader) => ({ docs: wanted.map((name) => docOf(reader, name)), revision: reader.revision() }),
      'search',
    );
    const { docs, revision } = read instanceof Promise ? await read : read;
    wanted.forEach((name, index) => this.#put(name, docs[index]));
    // Never ahead of what was read (a cache behind the log): the rest is read again next time.
    this.#revision = Math.min(since, revision);
  }

  async #rebuild(source: IndexSource, head: number): Promise<void> {
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
    this.#index.build(tools);
    this.#revision = Math.min(head, listedAt, revision);
  }

  #put(name: string, doc: Doc | undefined): void {
    if (doc === undefined) {
      this.#index.delete(name);
      return;
    }
    this.#index.set(name, doc, doc.registration.spec, (old) => old.fingerprint === doc.fingerprint);
  }

  /** Forgets everything (the registry closed). */
  clear(): void {
    this.#index.clear();
    this.#revision = -1;
  }

  /** One page of results (call `refresh` first). */
  async search(parsed: ParsedSearch): Promise<{ results: SearchResult[]; next_cursor: string | null }> {
    const accept = (doc: Doc): boolean => parsed.accept(doc.registration);
    let selected: { page: Hit<Doc>[]; more: boolean };
    if (parsed.embed === undefined) {
      selected = this.#index.top(parsed.terms, parsed.limit, accept, parsed.after);
    } else {
      const hits = this.#index.match(parsed.terms, accept);
      const scores = await fuse(
        hits.map((hit) => ({ name: hit.name, score: hit.score, fingerprint: hit.item.fingerprint, text: () => embeddingText(hit.item.registration.spec) })),
        parsed.query,
        parsed.embed,
      );
      this.#pruneVectors(parsed.embed);
      selected = topHits(
        hits.map((hit, index) => ({ name: hit.name, item: hit.item, score: scores[index] as number })),
        parsed.limit,
        parsed.after,
      );
    }
    const { page, more } = selected;
    const last = page.at(-1);
    return {
      results: page.map((hit) => Object.freeze({ registration: hit.item.registration, score: hit.score })),
      next_cursor: more && last !== undefined ? encodeCursor(['s', parsed.key, last.score, last.name]) : null,
    };
  }

  /** Keeps an embedder's cache from growing past twice the tools (vectors of gone specs go first). */
  #pruneVectors(embed: Embed): void {
    const cache = vectorCache(embed);
    if (cache.size <= 2 * this.#index.size + 1000) return;
    const current = new Set<string>();
    for (const name of this.#index.names()) current.add((this.#index.get(name) as Doc).fingerprint);
    for (const fingerprint of cache.keys()) if (!current.has(fingerprint)) cache.delete(fingerprint);
  }
}

function docOf(reader: StoreReader, name: string): Doc | undefined {
  const registration = reader.get(name);
  const record = reader.find(name);
  return registration === undefined || record === undefined ? undefined : { registration, fingerprint: record.fingerprint };
}
