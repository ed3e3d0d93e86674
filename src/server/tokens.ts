// Bearer tokens: a random secret shown once, stored only as its SHA-256 in a JSON file with
// its name, scopes, namespaces and (for MCP sessions) a persona policy.
import { constants } from 'node:buffer';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { link, lstat, mkdir, open, readFile, readdir, readlink, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkToolPermission } from '../index.js';
import type { ToolPolicy } from '../index.js';

/** What a token may do: `read` (GET), `write` (changes), `admin` (namespaces). */
export type TokenScope = 'read' | 'write' | 'admin';
export const TOKEN_SCOPES: readonly TokenScope[] = Object.freeze(['read', 'write', 'admin']);

/** A token's name: shown in logs and `whoami`, never the secret. */
export const TOKEN_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** One stored token (the file holds these; the secret itself is nowhere). */
export interface StoredToken {
  readonly name: string;
  /** SHA-256 of the secret, lowercase hex. */
  readonly sha256: string;
  readonly scopes: readonly TokenScope[];
  /** The namespaces it may reach; `null`: every namespace. */
  readonly namespaces: readonly string[] | null;
  /** The persona policy MCP sessions of this token obey; `null`: none. */
  readonly policy: ToolPolicy | null;
  readonly created_at: string;
}

/** The token a request authenticated with, as routes and mounted handlers see it. */
export interface AuthenticatedToken {
  /**
   * The token itself (its SHA-256): what a stream or session belongs to. A token revoked and
   * created again under the same name has another id.
   */
  readonly id: string;
  readonly name: string;
  readonly scopes: readonly TokenScope[];
  readonly namespaces: readonly string[] | null;
  readonly policy: ToolPolicy | null;
}

/** Something that maps a presented secret to its token. */
export interface TokenVerifier {
  /** The token whose secret this is, or undefined (unknown or revoked). */
  verify(secret: string): AuthenticatedToken | undefined;
  /**
   * The token with this id as it is now (its scopes, namespaces and policy may have been
   * edited), or undefined when it was revoked. The server asks it for the tokens of open
   * streams and sessions (every 500 ms); a verifier without it never ends them.
   */
  lookup?(id: string): AuthenticatedToken | undefined;
}

export interface TokenFileContent {
  readonly version: 1;
  readonly tokens: readonly StoredToken[];
}

export function hashToken(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A fresh secret: `trg_` and 32 random bytes, base64url. */
function newSecret(): string {
  return `trg_${randomBytes(32).toString('base64url')}`;
}

function fail(file: string, message: string): never {
  throw new Error(`token file ${file}: ${message}`);
}

/** Parses and checks a token file's text. @throws Error naming the file and the entry */
export function parseTokenFile(text: string, file: string): TokenFileContent {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    fail(file, `not JSON (${(error as Error).message})`);
  }
  if (typeof data !== 'object' || data === null || (data as { version?: unknown }).version !== 1 || !Array.isArray((data as { tokens?: unknown }).tokens)) {
    fail(file, 'expected {"version": 1, "tokens": [...]}');
  }
  const tokens = (data as { tokens: unknown[] }).tokens.map((entry, i): StoredToken => {
    const t = entry as Partial<StoredToken>;
    if (typeof t.name !== 'string' || !TOKEN_NAME_PATTERN.test(t.name)) fail(file, `tokens[${i}].name is not a token name: ${JSON.stringify(t.name)}`);
    if (typeof t.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(t.sha256)) fail(file, `tokens[${i}].sha256 is not a SHA-256 in hex`);
    if (!Array.isArray(t.scopes) || !t.scopes.every((s) => TOKEN_SCOPES.includes(s))) fail(file, `tokens[${i}].scopes must list read, write or admin`);
    if (t.namespaces !== null && (!Array.isArray(t.namespaces) || !t.namespaces.every((n) => typeof n === 'string'))) {
      fail(file, `tokens[${i}].namespaces must be null or a list of names`);
    }
    if (t.policy !== undefined && t.policy !== null) {
      // Checked as `token create` checks it: a hand-edited policy that is none was taken, and each
      // MCP request of the token was a 400 VALIDATION_FAILED blaming the client ("invalid policy").
      try {
        checkToolPermission(t.policy, { name: 'x' });
      } catch (error) {
        fail(file, `tokens[${i}].policy is not a ToolPolicy: ${(error as Error).message}`);
      }
    }
    return Object.freeze({
      name: t.name,
      sha256: t.sha256,
      scopes: Object.freeze([...t.scopes]),
      namespaces: t.namespaces === null ? null : Object.freeze([...(t.namespaces as string[])]),
      policy: t.policy === undefined || t.policy === null ? null : (Object.freeze(t.policy) as ToolPolicy),
      created_at: typeof t.created_at === 'string' ? t.created_at : '',
    });
  });
  return { version: 1, tokens };
}

/**
 * A folder, or a file too large for one string, named with the reason: read, they failed as
 * "EISDIR: illegal operation on a directory, read" and "Invalid string length", naming nothing.
 */
function checkReadable(file: string, info: { isDirectory(): boolean; size: number }): void {
  const limit = constants.MAX_STRING_LENGTH;
  if (info.isDirectory()) fail(file, 'it is a directory');
  if (info.size > limit) fail(file, `it is too large: ${info.size} bytes, over the limit of ${limit} bytes (the longest string JavaScript holds)`);
}

/** The file's text, or undefined when it does not exist. */
async function readText(file: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(file);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    checkReadable(file, await handle.stat());
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

async function readTokens(file: string): Promise<readonly StoredToken[]> {
  await removeStaleTemporaries(await linkTarget(file), false);
  const text = await readText(file);
  return text === undefined ? [] : parseTokenFile(text, file).tokens;
}

/** How often an update reads the file again because a hand edit changed it meanwhile, before giving up. */
const EDIT_RETRIES = 20;

/**
 * Writes the tokens whole or not at all (a temporary file renamed over the file), unless the
 * file no longer holds `read` (a hand edit, which takes no lock, saved meanwhile): then false,
 * nothing written, and the caller edits the new text instead of overwriting the hand edit.
 */
async function writeTokens(file: string, read: string | undefined, tokens: readonly StoredToken[]): Promise<boolean> {
  await mkdir(dirname(file), { recursive: true });
  // Named by its writer (pid and host), so that `token list`, which takes no lock, can tell a dead writer's.
  const temporary = `${file}.${process.pid}-${HOST_TAG}.${randomBytes(4).toString('hex')}.tmp`;
  const content: TokenFileContent = { version: 1, tokens };
  // Readable by its owner only: the hashes are not secrets, the names and scopes are private.
  await writeFile(temporary, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
  if ((await readText(file)) !== read) {
    await unlink(temporary).catch(() => {});
    return false;
  }
  await rename(temporary, file);
  return true;
}

/** How long a token command waits for another one's lock before giving up. */
const LOCK_WAIT_MS = 10_000;
/** A lock older than this is stale whoever holds it (an edit takes milliseconds). */
const LOCK_STALE_MS = 30_000;

/** Whether process `pid` of this host no longer runs. */
function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as { code?: unknown }).code === 'ESRCH';
  }
}

/** Whether the lock's holder (`pid@host`) is gone: a process of this host that no longer runs. */
function holderGone(holder: string): boolean {
  // A lock written by hand (`echo "$$@$(hostname)" > FILE.lock`) ends with a newline.
  const [pid, host] = holder.trim().split('@');
  return host === hostname() && /^\d+$/.test(pid ?? '') && processGone(Number(pid));
}

/** This host in a write's temporary file name (a host name may hold any character). */
const HOST_TAG = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);

/** Removes a stale lock, unless another process replaced it meanwhile (then it is put back). */
async function breakLock(lock: string, seen: string): Promise<void> {
  const aside = `${lock}.${process.pid}.${randomBytes(4).toString('hex')}.stale`;
  try {
    await rename(lock, aside);
  } catch {
    return; // another process broke it first
  }
  const taken = await readFile(aside, 'utf8').catch(() => '');
  if (taken !== seen) await link(aside, lock).catch(() => {}); // a fresh lock: give it back (unless a third took the name)
  await unlink(aside).catch(() => {});
}

/**
 * Runs `work` holding the token file's lock (`FILE.lock`, holding `pid@host`, linked into
 * place whole), so token commands of every process edit the file one at a time and none
 * loses another's change. A lock whose process is gone, or older than 30 s, is stale and
 * broken. @throws Error when another process holds the lock for 10 s
 */
async function withFileLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  await mkdir(dirname(file), { recursive: true });
  const lock = `${file}.lock`;
  const me = `${process.pid}@${hostname()}`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  // The lock appears with its holder written, never empty: made aside, then linked to its name
  // (atomic, EEXIST when taken). Created empty and then written, a command killed (or out of
  // disk) in between left an empty lock that every command waited 10 s on and failed for 30 s.
  const mine = `${lock}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(mine, me, { mode: 0o600 });
  try {
    for (;;) {
      try {
        // Its age counts from now, not from the first try (a lock older than 30 s is stale).
        const now = new Date();
        await utimes(mine, now, now);
        await link(mine, lock);
        break;
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
      }
      await waitForLock(file, lock, deadline);
    }
  } finally {
    await unlink(mine).catch(() => {});
  }
  try {
    await removeStaleTemporaries(file, true);
    return await work();
  } finally {
    await unlink(lock).catch(() => {});
  }
}

/**
 * Removes what token commands killed mid-write (kill -9, a crash, a power cut) left beside the
 * file, which stayed for good (the last one a copy of every token's hash, name and scopes).
 * A write's temporary file is made only by the lock's holder: `locked` (the caller holds the
 * lock), any is a dead writer's (or one whose lock was broken as stale: its rename then fails,
 * and that command with it); else (`token list`) only one of a process of this host that is
 * gone. A lock's temporary file (`pid@host`) is removed when its process is gone, and a
 * broken lock set aside, or a lock's temporary file killed before it was written, when older
 * than a stale lock. Best effort: a folder it may not write leaves them.
 */
async function removeStaleTemporaries(file: string, locked: boolean): Promise<void> {
  const base = basename(file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // `pid.hex` before the host was named: only a lock holder removes those.
  const write = new RegExp(`^${base}\\.(\\d+)(?:-([0-9a-f]{8}))?\\.[0-9a-f]{8}\\.tmp$`);
  const locking = new RegExp(`^${base}\\.lock\\.\\d+\\.[0-9a-f]{8}\\.(tmp|stale)$`);
  const names = await readdir(dirname(file)).catch(() => []);
  for (const name of names) {
    const path = join(dirname(file), name);
    const writer = write.exec(name);
    if (writer !== null) {
      if (locked || (writer[2] === HOST_TAG && processGone(Number(writer[1])))) await unlink(path).catch(() => {});
    } else if (locking.test(name)) {
      const holder = name.endsWith('.tmp') ? await readFile(path, 'utf8').catch(() => '') : '';
      const age = await stat(path).then((info) => Date.now() - info.mtimeMs, () => 0);
      if ((holder !== '' && holderGone(holder)) || age > LOCK_STALE_MS) await unlink(path).catch(() => {});
    }
  }
}

/**
 * Another process holds the lock: breaks it when stale, else waits a moment.
 * @throws Error past the deadline
 */
async function waitForLock(file: string, lock: string, deadline: number): Promise<void> {
  const holder = await readFile(lock, 'utf8').catch(() => undefined);
  const age = await stat(lock).then((info) => Date.now() - info.mtimeMs, () => 0);
  // An empty lock (written by hand, or by an older version killed mid-write): only its age makes it stale.
  if (holder !== undefined && ((holder !== '' && holderGone(holder)) || age > LOCK_STALE_MS)) {
    await breakLock(lock, holder);
    return;
  }
  if (Date.now() > deadline) {
    throw new Error(`the token file ${file} is locked by process ${holder === undefined || holder === '' ? '?' : holder.trim()} (${lock}); remove the lock file if no token command is running`);
  }
  await sleep(5 + Math.floor(Math.random() * 20));
}

/** Linux's own limit on links followed in one path (ELOOP beyond it). */
const MAX_LINKS = 40;

/**
 * The file a symbolic link (or a chain of them) leads to, which may not exist yet; `file`
 * itself when it is no link. The write renames over this path: renamed over the link, it
 * replaced the link with a file of its own, and a server reading the link's target (or a
 * `revoke` through the target's path) never saw the change, a revoked token kept working.
 */
async function linkTarget(file: string): Promise<string> {
  let current = file;
  for (let links = 0; links < MAX_LINKS; links++) {
    const info = await lstat(current).catch(() => undefined);
    // Missing, or unreadable: the read or the write says why.
    if (info === undefined || !info.isSymbolicLink()) return current;
    current = resolve(dirname(current), await readlink(current));
  }
  return current;
}

/**
 * Reads the token file, hands its tokens to `edit` and writes what it returns, holding the
 * file's lock throughout: the one way every token command changes the file (atomic: a
 * temporary file renamed over it; serialized across processes by `FILE.lock`). `edit`
 * returning undefined writes nothing.
 */
export async function updateTokens<T>(file: string, edit: (tokens: readonly StoredToken[]) => { tokens: readonly StoredToken[]; result: T } | { result: T }): Promise<T> {
  const target = await linkTarget(file);
  return withFileLock(target, async () => {
    // A hand edit takes no lock: one saved between this read and the write is read and edited
    // in turn, never overwritten.
    for (let attempt = 0; ; attempt++) {
      const read = await readText(target);
      const outcome = edit(read === undefined ? [] : parseTokenFile(read, file).tokens);
      if (!('tokens' in outcome) || (await writeTokens(target, read, outcome.tokens))) return outcome.result;
      if (attempt === EDIT_RETRIES) throw new Error(`the token file ${file} kept changing while this command edited it (a hand edit being saved?); try again`);
    }
  });
}

export interface CreateTokenOptions {
  readonly name: string;
  readonly scopes: readonly TokenScope[];
  /** Limit the token to these namespaces; absent or empty: every namespace. */
  readonly namespaces?: readonly string[];
  /** A ToolPolicy (as `invoke` takes it), validated. */
  readonly policy?: unknown;
  readonly clock?: () => Date;
}

/**
 * Adds a token to the file (created if missing) and returns its secret, which is stored nowhere.
 * @throws TypeError for a bad name, scope or namespace; VALIDATION_FAILED for a bad policy;
 *   RangeError when the name is taken; Error when the file cannot be read, written or locked
 */
export async function createToken(file: string, options: CreateTokenOptions): Promise<{ secret: string; token: StoredToken }> {
  const { name, scopes } = options;
  if (typeof name !== 'string' || !TOKEN_NAME_PATTERN.test(name)) {
    throw new TypeError(`token name must be 1-64 characters of A-Z a-z 0-9 _ . -, got ${JSON.stringify(name)}`);
  }
  if (!Array.isArray(scopes) || scopes.length === 0 || !scopes.every((s) => TOKEN_SCOPES.includes(s))) {
    throw new TypeError(`scopes must be one or more of read, write, admin, got ${JSON.stringify(scopes)}`);
  }
  const namespaces = options.namespaces ?? [];
  for (const ns of namespaces) {
    if (typeof ns !== 'string' || !NAMESPACE_PATTERN.test(ns)) throw new TypeError(namespaceRuleMessage(ns));
  }
  let policy: ToolPolicy | null = null;
  if (options.policy !== undefined) {
    // The runtime's own check validates the policy (VALIDATION_FAILED naming the field).
    checkToolPermission(options.policy as ToolPolicy, { name: 'x' });
    policy = options.policy as ToolPolicy;
  }
  const secret = newSecret();
  const token: StoredToken = {
    name,
    sha256: hashToken(secret),
    scopes: [...new Set(scopes)],
    namespaces: namespaces.length === 0 ? null : [...new Set(namespaces)],
    policy,
    created_at: (options.clock ?? (() => new Date()))().toISOString(),
  };
  return updateTokens(file, (tokens) => {
    if (tokens.some((t) => t.name === name)) throw new RangeError(`a token named ${JSON.stringify(name)} exists in ${file}; revoke it first or pick another name`);
    return { tokens: [...tokens, token], result: { secret, token } };
  });
}

/** The tokens in the file (none when it does not exist); removes what token commands of this host that died mid-write left beside it. */
export function listTokens(file: string): Promise<readonly StoredToken[]> {
  return readTokens(file);
}

/** Removes the named token; `true` when it was there. */
export function revokeToken(file: string, name: string): Promise<boolean> {
  return updateTokens(file, (tokens) => {
    const kept = tokens.filter((t) => t.name !== name);
    return kept.length === tokens.length ? { result: false } : { tokens: kept, result: true };
  });
}

function toAuthenticated(token: StoredToken): AuthenticatedToken {
  return Object.freeze({ id: token.sha256, name: token.name, scopes: token.scopes, namespaces: token.namespaces, policy: token.policy });
}

/** A verifier over a fixed list of stored tokens. */
export function tokenVerifier(tokens: readonly StoredToken[]): TokenVerifier {
  const byHash = new Map(tokens.map((t) => [t.sha256, toAuthenticated(t)]));
  return { verify: (secret) => byHash.get(hashToken(secret)), lookup: (id) => byHash.get(id) };
}

/**
 * A verifier over a token file that follows it: a token created or revoked with the CLI
 * counts from the next request (the file's size and mtime are checked on every request).
 * A saved version that is not a token file (a hand edit with a typo) is ignored, the last good
 * tokens staying, and `onError` hears it once (default: a process warning): such an edit meant
 * to revoke a token left it working, and nothing said so.
 * @throws Error when the file exists but is not a token file
 */
export function tokenFileVerifier(file: string, options: { readonly onError?: (error: Error) => void } = {}): TokenVerifier {
  const onError = options.onError ?? ((error: Error) => process.emitWarning(error.message, 'TokenFileWarning'));
  let stamp = '';
  /** The saved version last refused: not read again (it was, at every request) nor reported again. */
  let refused = '';
  let current: TokenVerifier = tokenVerifier([]);
  const load = (): void => {
    let info;
    try {
      info = statSync(file);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
      stamp = 'missing';
      current = tokenVerifier([]);
      return;
    }
    const next = `${info.mtimeMs}:${info.size}:${info.ino}`;
    if (next === stamp || next === refused) return;
    try {
      checkReadable(file, info);
      current = tokenVerifier(parseTokenFile(readFileSync(file, 'utf8'), file).tokens);
    } catch (error) {
      // Out of file handles, the version may be fine: read again next time, and say nothing.
      if (stamp !== '' && !['EMFILE', 'ENFILE'].includes(String((error as { code?: unknown }).code))) {
        refused = next;
        onError(new Error(`${(error as Error).message}; the server keeps the tokens of the file as it was last read until it is saved as a token file`, { cause: error }));
      }
      throw error;
    }
    stamp = next;
  };
  load();
  const fresh = (): TokenVerifier => {
    try {
      load();
    } catch {
      // A file half-edited by hand: keep the last good tokens rather than lock everyone out.
    }
    return current;
  };
  return {
    verify: (secret) => fresh().verify(secret),
    lookup: (id) => fresh().lookup?.(id),
  };
}

/** A namespace's name: a lowercase letter, then up to 39 of a-z 0-9 _ (a file name and a PostgreSQL schema suffix as is). */
export const NAMESPACE_PATTERN = /^[a-z][a-z0-9_]{0,39}$/;

export function namespaceRuleMessage(name: unknown): string {
  return `a namespace is a lowercase letter then up to 39 of a-z 0-9 _ (such as team_a), got ${JSON.stringify(name)}`;
}
