// The server's long-lived things (SSE change-feed streams and MCP sessions) as leases: each
// counts against a server-wide bound and one token's share of it, holds its namespace open,
// and ends when its token is revoked or edited (checked every 500 ms) or the server stops.
import { readFileSync, readdirSync } from 'node:fs';
import { holderShare, leaseRefusal } from '../lease-bound.js';
import { HttpProblem } from './problems.js';
import type { AuthenticatedToken, TokenVerifier } from './tokens.js';

/** SSE change-feed streams open at once, server-wide (`serve --max-streams`). */
export const DEFAULT_MAX_STREAMS = 1000;
/** MCP sessions open at once, server-wide (`serve --max-sessions`). */
export const DEFAULT_MAX_SESSIONS = 1000;
/** Namespaces (registries) open at once (`serve --max-open-namespaces`). */
export const DEFAULT_MAX_OPEN_NAMESPACES = 64;
/** A stream whose reader lets this many bytes queue up is cut off (it resumes with Last-Event-ID). */
export const DEFAULT_STREAM_BACKLOG_BYTES = 1024 * 1024;
/** How often the tokens of open streams and sessions are checked again. */
export const TOKEN_RECHECK_MS = 500;
/** Retry-After of a refusal for a bound. */
export const LIMIT_RETRY_AFTER_SECONDS = 5;

export type LeaseKind = 'stream' | 'session';

/** A stream or session the server admitted. */
export interface Lease {
  /** Aborts when the token that opened it is revoked or changed, or the server stops. */
  readonly signal: AbortSignal;
  /** Ends the lease (idempotent): its place is free again. */
  release(): void;
}

interface Held {
  readonly kind: LeaseKind;
  readonly namespace: string;
  readonly token: AuthenticatedToken | null;
  readonly stamp: string;
  readonly controller: AbortController;
  readonly unhold: () => void;
}

/** What a token's streams and sessions depend on: changing any of these ends them. */
function stampOf(token: AuthenticatedToken | null): string {
  return token === null ? '' : JSON.stringify([token.id, token.scopes, token.namespaces, token.policy]);
}

/** The limit last read: reading needs a file handle, which a process at its limit lacks. */
let knownFileLimit: number | undefined;

/** The process's limit on open files (Linux: /proc/self/limits), or undefined. */
export function openFileLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    knownFileLimit = line === null ? undefined : Number(line[1]);
  } catch {
    // No handle left to read it with (EMFILE): the limit read before still holds.
  }
  return knownFileLimit;
}

/**
 * The defaults of the three bounds for a process allowed `files` open files: the documented
 * defaults, lowered so that streams (a socket each), sessions (a socket each for their
 * notification stream) and namespaces (three files each for SQLite) fit in it with room to spare.
 */
export function defaultLimits(files = openFileLimit()): { maxStreams: number; maxSessions: number; maxOpenNamespaces: number } {
  if (files === undefined) return { maxStreams: DEFAULT_MAX_STREAMS, maxSessions: DEFAULT_MAX_SESSIONS, maxOpenNamespaces: DEFAULT_MAX_OPEN_NAMESPACES };
  return {
    maxStreams: Math.max(1, Math.min(DEFAULT_MAX_STREAMS, Math.floor(files / 4))),
    maxSessions: Math.max(1, Math.min(DEFAULT_MAX_SESSIONS, Math.floor(files / 4))),
    maxOpenNamespaces: Math.max(1, Math.min(DEFAULT_MAX_OPEN_NAMESPACES, Math.floor(files / 16))),
  };
}

/** How many namespaces streams and sessions together may hold open: half of `--max-open-namespaces`, at least 1. */
export function heldNamespaceBound(maxOpenNamespaces: number): number {
  return Math.max(1, Math.floor(maxOpenNamespaces / 2));
}

const NAMES: Readonly<Record<LeaseKind, { what: string; flag: string }>> = {
  stream: { what: 'event streams', flag: '--max-streams' },
  session: { what: 'MCP sessions', flag: '--max-sessions' },
};

/** The open streams and sessions of one server. */
export class Leases {
  readonly #bounds: Readonly<Record<LeaseKind, number>>;
  readonly #tokens: TokenVerifier | undefined;
  readonly #hold: (namespace: string) => () => void;
  readonly #held = new Set<Held>();
  readonly #recheckMs: number;
  readonly #maxHeldNamespaces: number | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: {
    readonly maxStreams: number;
    readonly maxSessions: number;
    readonly tokens: TokenVerifier | undefined;
    /** Marks a namespace in use until the returned function is called. */
    readonly hold: (namespace: string) => () => void;
    /**
     * `--max-open-namespaces` of a source that closes idle namespaces: streams and sessions
     * together may hold at most half of it (rounded down, at least 1) open, one token half of
     * that (rounded up), so requests always have namespaces left to open. Absent: no bound.
     */
    readonly maxOpenNamespaces?: number;
    readonly recheckMs?: number;
  }) {
    this.#bounds = { stream: options.maxStreams, session: options.maxSessions };
    this.#tokens = options.tokens;
    this.#hold = options.hold;
    this.#maxHeldNamespaces = options.maxOpenNamespaces === undefined ? undefined : heldNamespaceBound(options.maxOpenNamespaces);
    this.#recheckMs = options.recheckMs ?? TOKEN_RECHECK_MS;
  }

  /** How many of a kind are open. */
  count(kind: LeaseKind): number {
    let n = 0;
    for (const held of this.#held) if (held.kind === kind) n++;
    return n;
  }

  /**
   * Admits one more stream or session for `token` in `namespace`.
   * @throws HttpProblem CAPACITY_EXCEEDED (503) at the server-wide bound, TOKEN_LIMIT_EXCEEDED
   *   (429) at the token's share of it; both with Retry-After
   */
  admit(kind: LeaseKind, token: AuthenticatedToken | null, namespace: string): Lease {
    refuseNearFileLimit();
    const bound = this.#bounds[kind];
    const { what, flag } = NAMES[kind];
    const headers = { 'retry-after': String(LIMIT_RETRY_AFTER_SECONDS) };
    let total = 0;
    let mine = 0;
    const namespaces = new Set<string>();
    const myNamespaces = new Set<string>();
    for (const held of this.#held) {
      namespaces.add(held.namespace);
      if (token !== null && held.token?.id === token.id) myNamespaces.add(held.namespace);
      if (held.kind !== kind) continue;
      total++;
      if (token !== null && held.token?.id === token.id) mine++;
    }
    const refusal = leaseRefusal(bound, total, token === null ? undefined : mine);
    if (refusal === 'bound') {
      throw new HttpProblem('CAPACITY_EXCEEDED', `the server has ${bound} ${what} open, its limit (${flag}); retry later`, { context: { limit: bound, resource: kind }, headers });
    }
    const share = holderShare(bound);
    if (token !== null && refusal === 'share') {
      throw new HttpProblem('TOKEN_LIMIT_EXCEEDED', `the token ${JSON.stringify(token.name)} has ${mine} ${what} open, its share of the server's ${bound} (${flag}); close one or retry later`, {
        context: { limit: share, resource: kind, token: token.name },
        headers,
      });
    }
    this.#checkNamespaces(namespace, token, namespaces, myNamespaces);
    const held: Held = { kind, namespace, token, stamp: stampOf(token), controller: new AbortController(), unhold: this.#hold(namespace) };
    this.#held.add(held);
    if (token !== null && this.#tokens?.lookup !== undefined && this.#timer === undefined) {
      this.#timer = setInterval(() => this.#recheck(), this.#recheckMs);
      this.#timer.unref();
    }
    let released = false;
    return {
      signal: held.controller.signal,
      release: () => {
        if (released) return;
        released = true;
        this.#held.delete(held);
        held.unhold();
        if (this.#timer !== undefined && ![...this.#held].some((h) => h.token !== null)) {
          clearInterval(this.#timer);
          this.#timer = undefined;
        }
      },
    };
  }

  /**
   * A stream or session in a namespace no other one holds open must leave requests room to
   * open theirs: 503 past the server's bound of held namespaces, 429 past the token's share.
   */
  #checkNamespaces(namespace: string, token: AuthenticatedToken | null, held: ReadonlySet<string>, mine: ReadonlySet<string>): void {
    const bound = this.#maxHeldNamespaces;
    if (bound === undefined) return;
    const headers = { 'retry-after': String(LIMIT_RETRY_AFTER_SECONDS) };
    if (!held.has(namespace) && held.size >= bound) {
      throw new HttpProblem('CAPACITY_EXCEEDED', `streams and sessions hold ${held.size} namespaces open, half of the server's limit (--max-open-namespaces), the rest is kept for requests; retry later`, {
        context: { limit: bound, resource: 'namespaces' },
        headers,
      });
    }
    const share = holderShare(bound);
    if (token !== null && !mine.has(namespace) && mine.size >= share) {
      throw new HttpProblem('TOKEN_LIMIT_EXCEEDED', `the token ${JSON.stringify(token.name)} holds streams or sessions in ${mine.size} namespaces, its share of the server's ${bound} (half of --max-open-namespaces); close one or retry later`, {
        context: { limit: share, resource: 'namespaces', token: token.name },
        headers,
      });
    }
  }

  /** Ends every lease whose token is gone or no longer the same (scopes, namespaces, policy). */
  #recheck(): void {
    const lookup = this.#tokens?.lookup;
    if (lookup === undefined) return;
    const now = new Map<string, string>();
    for (const held of this.#held) {
      if (held.token === null || held.controller.signal.aborted) continue;
      const id = held.token.id;
      let stamp = now.get(id);
      if (stamp === undefined) {
        const current = lookup(id);
        stamp = current === undefined ? 'revoked' : stampOf(current);
        now.set(id, stamp);
      }
      if (stamp !== held.stamp) held.controller.abort(new Error(stamp === 'revoked' ? 'the token was revoked' : 'the token was changed'));
    }
  }

  /** Ends every lease (the server stops). */
  abortAll(): void {
    for (const held of this.#held) held.controller.abort(new Error('the server is shutting down'));
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** Whether the process holds all but a few of the files it may open (Linux; false where unknown). */
function nearFileLimit(): boolean {
  const limit = openFileLimit();
  if (limit === undefined) return false;
  try {
    return readdirSync('/proc/self/fd').length >= limit - 16;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return code === 'EMFILE' || code === 'ENFILE';
  }
}

/**
 * Refuses a new stream or session (503 CAPACITY_EXCEEDED, `file_handles`) when the process
 * holds all but 16 of the files it may open: a server told to keep more streams or sessions
 * than its handles allow still has some left for `/healthz` and short requests.
 */
export function refuseNearFileLimit(): void {
  if (!nearFileLimit()) return;
  const limit = openFileLimit();
  throw new HttpProblem('CAPACITY_EXCEEDED', `the process holds nearly all the ${limit ?? '?'} files it may open (ulimit -n); retry later`, {
    context: { ...(limit === undefined ? {} : { limit }), resource: 'file_handles' },
    headers: { 'retry-after': String(LIMIT_RETRY_AFTER_SECONDS) },
  });
}

/** Whether a failure is the process (or system) running out of file handles. */
export function outOfFileHandles(error: unknown): boolean {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'EMFILE' || code === 'ENFILE') return true;
    // SQLite says only that it cannot open a file (and has closed what it opened): out of handles
    // when the process holds nearly all it may.
    if (code === 'SQLITE_CANTOPEN') return nearFileLimit();
  }
  return false;
}
