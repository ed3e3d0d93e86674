// `tool-registry serve` and `tool-registry token create|list|revoke`: the registry as a service.
import { existsSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { openSqliteToolRegistry, StorageUnavailableError, ToolRegistryError } from '../index.js';
import {
  createToolRegistryServer,
  defaultConsoleRoot,
  createToken,
  listTokens,
  listen,
  postgresNamespaces,
  revokeToken,
  singleNamespace,
  sqliteNamespaces,
  tokenFileVerifier,
} from '../server/index.js';
import type { NamespaceSource, TokenScope } from '../server/index.js';
import { describeDatabase, isPostgresUrl, notRegularFile, openFailure, postgresTarget, storageFailure } from './database.js';
import { callRetentionOf } from './mcp-command.js';
import { resolveDatabase, utf8Name } from './database-path.js';
import { CliError, describeSystemError } from './errors.js';
import { serveThroughOutputErrors, whenOutputLost } from './output-errors.js';
import { cell, toJson } from './output.js';
import { readPolicyFile } from './input.js';
import { serveGovernance, serveMounts, serveTools, serveWarning, toolPermissionsOf } from './serve-mounts.js';
import { catchStrayErrors } from './stray-errors.js';
import { packageVersion } from '../package-files.js';
import type { CliIO } from './program.js';
import type { StopSignals } from './stop-signals.js';
import { DEFAULT_TOKENS, TOKENS_ENV } from './serve-commands.js';

export interface ServeOptions {
  readonly db?: string;
  readonly dataDir?: string;
  readonly host: string;
  readonly port: number;
  readonly tokens?: string;
  readonly cors?: string;
  readonly allowedHosts?: string[];
  readonly console: boolean;
  readonly maxBody?: number;
  readonly drainTimeout?: number;
  readonly maxStreams?: number;
  readonly maxSessions?: number;
  readonly maxOpenNamespaces?: number;
  readonly callRetentionDays?: number;
  readonly callRetentionRows?: number;
}


/** The names a server with a Host check serves with the port it listens on (the server's own list). */
const SERVED_LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** A host name as a URL writes it (lowercase, `127.1` is `127.0.0.1`); the text itself when it is none. */
function hostnameOf(name: string): string {
  try {
    return new URL(`http://${name}`).hostname;
  } catch {
    return name;
  }
}

export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  // ::1 however it is written (0:0:0:0:0:0:0:1, [::1]).
  const bare = bareHost(host);
  return isIP(bare) === 6 && hostnameOf(`[${bare}]`) === '[::1]';
}

/** `--host` as listen() takes it: `[::1]`, as a URL and the `listening on` line write an IPv6 address, is `::1`. */
function bareHost(host: string): string {
  const inner = /^\[(.+)\]$/.exec(host)?.[1];
  return inner !== undefined && isIP(inner) === 6 ? inner : host;
}

function namespacesFor(options: ServeOptions, env: NodeJS.ProcessEnv): NamespaceSource {
  if (options.dataDir !== undefined && options.db !== undefined) throw new CliError('USAGE', '--db and --data-dir cannot be used together');
  const maxOpen = options.maxOpenNamespaces === undefined ? {} : { maxOpen: options.maxOpenNamespaces };
  const retention = callRetentionOf(options);
  if (options.dataDir !== undefined) {
    // A missing folder is made at the first open; a file in its place is a mistyped option.
    if (statSync(options.dataDir, { throwIfNoEntry: false })?.isDirectory() === false) throw new CliError('USAGE', `--data-dir ${options.dataDir} is not a folder`);
    return sqliteNamespaces(options.dataDir, { ...maxOpen, ...retention });
  }
  const database = resolveDatabase(options.db, env);
  if (isPostgresUrl(database)) {
    let target: { connectionString: string; schema: string | undefined };
    try {
      target = postgresTarget(database);
    } catch (error) {
      throw new CliError('USAGE', `--db is not a valid PostgreSQL URL: ${(error as Error).message}`, { cause: error });
    }
    const { connectionString, schema } = target;
    return postgresNamespaces({ connectionString, ...(schema === undefined ? {} : { schema }), ...maxOpen, ...retention });
  }
  // As every command: SQLite said "disk I/O error" of a FIFO or a device.
  if (statSync(database, { throwIfNoEntry: false })?.isFile() === false) throw notRegularFile(database);
  return singleNamespace(() => openSqliteToolRegistry({ ...retention, filename: database }));
}

/** Serves until SIGTERM or SIGINT (`stop`, caught by the action), then stops gracefully and resolves. */
export async function serveCommand(io: CliIO, options: ServeOptions & Record<string, unknown>, stop: StopSignals): Promise<void> {
  // Standard output holds a notice, not the server's work: one it cannot write (a full disk, a
  // reader gone) is a warning and the server goes on; a log line lost on stderr is said nowhere.
  // From the start: taken once it listened, a --tools module's console.log at load ended the start
  // (exit 2, the module blamed), and a warning lost on stderr before it turned a stop's 0 into 1.
  let url: string | undefined = undefined; // once it listens
  /** Stdout's first failure, said once: a file's stream reports every write that fails (each console.log of a --tools handler). */
  let lost: unknown;
  const warnOutputLost = (): void =>
    void serveWarning(`cannot write standard output: ${describeSystemError(lost)}; the line "listening on ${url}" and what else is printed there are lost, the server goes on`, io.stderr);
  if (io.stdout === process.stdout) {
    serveThroughOutputErrors((stream, error) => {
      if (stream !== 'standard output' || lost !== undefined) return;
      lost = error;
      // Before the server listens, said once it does: the warning names the URL that line gave.
      if (url !== undefined) warnOutputLost();
    });
  }
  const host = bareHost(options.host);
  if (options.tokens === undefined && !isLoopback(host)) {
    throw new CliError('USAGE', `--host ${options.host} is not a loopback address; a server without --tokens FILE listens on loopback only (127.0.0.1, ::1, localhost)`);
  }
  // Every page the operator's browser opens could read the whole registry (the snapshot, the
  // audit log): no Host or Origin check stands in the way of a read the CORS header allows.
  if (options.tokens === undefined && options.cors === '*') {
    throw new CliError('USAGE', "--cors '*' needs --tokens FILE: without tokens every web page could read the registry; give the console's origin (--cors https://console.example) or tokens");
  }
  let tokens;
  if (options.tokens !== undefined) {
    // A misspelt --tokens would otherwise start a server that refuses every request.
    if (!existsSync(options.tokens)) throw new CliError('USAGE', `the token file ${options.tokens} does not exist; create a token first (tool-registry token create --tokens ${options.tokens} ...)`);
    try {
      tokens = tokenFileVerifier(options.tokens, { onError: (error) => serveWarning(error.message) });
    } catch (error) {
      throw new CliError('IO_ERROR', (error as Error).message, { cause: error });
    }
  }
  const source = namespacesFor(options, io.env);
  const consoleRoot = options.console ? defaultConsoleRoot() : undefined;
  const tools = await serveTools(options);
  const mounts = await serveMounts(options, tools);
  // The address it listens on is one of its names too (127.0.0.2 is loopback as well), when Host is
  // checked; the server's own loopback names are served with its port only (`Host: 127.0.0.1` is port 80).
  const listenName = isIP(host) === 6 ? `[${host}]` : host;
  const checked = tokens === undefined || options.allowedHosts !== undefined;
  const ownName = !['0.0.0.0', '::'].includes(host) && !SERVED_LOOPBACK_NAMES.includes(hostnameOf(listenName));
  const allowedHosts = [...(options.allowedHosts ?? []), ...(checked && ownName ? [listenName] : [])];
  let server;
  try {
    server = createToolRegistryServer({
      registries: source,
      ...(tokens === undefined ? {} : { tokens }),
      ...(options.cors === undefined ? {} : { cors: options.cors }),
      ...(allowedHosts.length === 0 ? {} : { allowedHosts }),
      ...(options.maxBody === undefined ? {} : { maxBodyBytes: options.maxBody }),
      ...(options.maxStreams === undefined ? {} : { maxStreams: options.maxStreams }),
      ...(options.maxSessions === undefined ? {} : { maxSessions: options.maxSessions }),
      ...(consoleRoot === undefined ? {} : { console: { root: consoleRoot } }),
      mounts,
      // The code's permissions: /v1/exports under a policy hides what the token's MCP sessions hide.
      ...(tools === undefined ? {} : { toolPermissions: toolPermissionsOf(tools) }),
      upstreams: serveGovernance(io.env, mounts),
      version: packageVersion(),
      log: (entry) => io.stderr.write(`${JSON.stringify(entry)}\n`),
    });
  } catch (error) {
    await source.close();
    // A host name that is none (the only option the server refuses that the parser did not).
    if (error instanceof TypeError) throw new CliError('USAGE', `--allowed-hosts: ${error.message}`, { cause: error });
    throw error;
  }
  // The default namespace opens (and migrates) before we say we listen: a bad database fails here.
  try {
    const registry = await source.open('default');
    await registry?.changes({ limit: 0 });
  } catch (error) {
    await server.close();
    // A database that cannot be reached (PostgreSQL down at start) or opened (not a database,
    // a missing folder, a folder it may not write) is IO_ERROR or READ_ONLY, as for every command.
    if (options.dataDir !== undefined) {
      // The folder's namespace source names the file; the command says it as for --db (the
      // driver's error, under the store's wrapper): it was INTERNAL with a stack.
      const file = join(options.dataDir, 'default.db');
      if (error instanceof StorageUnavailableError && error.cause !== undefined) throw openFailure(file, error.cause, 'readwrite');
      throw error;
    }
    const database = resolveDatabase(options.db, io.env);
    if (!isPostgresUrl(database)) throw openFailure(database, error, 'readwrite');
    const failure = storageFailure(database, error);
    // What the one-shot commands' open reports as IO_ERROR (a migration the schema refuses: a
    // table of another application under the same name) was INTERNAL with a stack here.
    if (failure instanceof Error && !(failure instanceof CliError) && !(failure instanceof ToolRegistryError)) {
      throw new CliError('IO_ERROR', `cannot open database ${describeDatabase(database)}: ${failure.message}`, { cause: failure });
    }
    throw failure;
  }
  let running;
  try {
    running = await listen(server, { host, port: options.port, ...(options.drainTimeout === undefined ? {} : { drainTimeoutMs: options.drainTimeout }) });
  } catch (error) {
    await server.close();
    const code = (error as { code?: unknown }).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') throw new CliError('IO_ERROR', `cannot listen on ${options.host}:${options.port}: ${(error as Error).message}`, { cause: error });
    // A name that does not resolve: it was INTERNAL with a stack.
    if ((error as { syscall?: unknown }).syscall === 'getaddrinfo') throw new CliError('IO_ERROR', `cannot listen on ${options.host}:${options.port}: the host name does not resolve (${String(code)})`, { cause: error });
    throw error;
  }
  url = running.url;
  if (lost !== undefined) warnOutputLost();
  io.stdout.write(`listening on ${url}\n`);
  // A --tools handler's stray rejection is a warning and the server goes on (Node's default ended
  // it, every session and call with it); a stray exception, one JSON line (level error) and exit 1.
  const owned = io.stdout === process.stdout && typeof options.tools === 'string';
  if (owned) catchStrayErrors('the server', (text) => serveWarning(text, io.stderr), (text) => io.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'error', message: text })}\n`));
  const stopped = stop.running();
  // Already aborted when a signal came while it started and did not end the process (in-process use).
  if (!stopped.aborted) await new Promise<void>((resolve) => stopped.addEventListener('abort', () => resolve(), { once: true }));
  // The stray handlers stay: closing aborts the calls, and what a handler does on its abort may reject after.
  await running.close();
  // Closing ended the MCP sessions and aborted their calls; a tool handler that ignores its
  // signal must not keep the process (it held it until the handler ended): as `tool-registry
  // mcp`, it ends at the latest 1 s later (the event loop may end it sooner).
  if (io.stdout === process.stdout) {
    setTimeout(() => {
      io.stderr.write(`tool-registry serve: still running ${EXIT_GRACE_MS} ms after the server closed (a tool handler that ignores its abort signal); exiting without it\n`);
      process.exit();
    }, EXIT_GRACE_MS).unref();
  }
}

/** How long the process may run on after the server closed (see serveCommand). */
const EXIT_GRACE_MS = 1_000;

export function tokensFile(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  if (flag !== undefined) return flag;
  const fromEnv = env[TOKENS_ENV];
  return fromEnv !== undefined && fromEnv !== '' ? utf8Name(fromEnv, `token file $${TOKENS_ENV}`) : DEFAULT_TOKENS;
}

export async function tokenCreateCommand(io: CliIO, options: { name: string; scopes: TokenScope[]; namespace: string[]; policy?: string; tokens?: string }): Promise<void> {
  const file = tokensFile(options.tokens, io.env);
  const policy = options.policy === undefined ? undefined : await readPolicyFile(options.policy);
  let created;
  try {
    created = await createToken(file, { name: options.name, scopes: options.scopes, namespaces: options.namespace, ...(policy === undefined ? {} : { policy }) });
  } catch (error) {
    // A bad name or namespace (TypeError) and a taken name (RangeError) are the user's
    // arguments; a bad policy is VALIDATION_FAILED; anything else is the file's (unreadable,
    // not a token file, locked by another command): IO_ERROR, as for list and revoke.
    if (error instanceof ToolRegistryError) throw error;
    if (error instanceof TypeError || error instanceof RangeError) throw new CliError('USAGE', error.message, { cause: error });
    throw new CliError('IO_ERROR', error instanceof Error ? error.message : String(error), { cause: error });
  }
  const where = created.token.namespaces === null ? 'every namespace' : `namespaces ${created.token.namespaces.join(', ')}`;
  // Nobody holds the secret of a token whose lines were lost: it is of no use, and takes the name.
  // A closed pipe (`| head -0`) is a failure here too (output-errors.ts): the exit status must say so.
  const revoke = `token revoke ${created.token.name}${options.tokens === undefined ? '' : ` --tokens ${options.tokens}`}`;
  whenOutputLost(`the token ${created.token.name} exists but its secret was never shown: revoke it (${revoke}) and create another`);
  // One write: the lines are shown whole or the write fails, never the first line alone.
  io.stdout.write(
    `created token ${created.token.name} (scopes ${created.token.scopes.join(',')}; ${where}${created.token.policy === null ? '' : `; policy of persona ${cell(created.token.policy.persona)}`}) in ${file}\n` +
      `the token is shown once; store it now:\n${created.secret}\n`,
  );
}

/** List and revoke fail only on the file (unreadable, not a token file, locked by another command): IO_ERROR, not a bug's stack. */
async function onTokenFile<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw new CliError('IO_ERROR', error instanceof Error ? error.message : String(error), { cause: error });
  }
}

export async function tokenListCommand(io: CliIO, options: { tokens?: string; json?: boolean }): Promise<void> {
  const tokens = await onTokenFile(listTokens(tokensFile(options.tokens, io.env)));
  // A persona (and a hand-edited created_at) may hold any character: escaped as all tool data
  // printed (an ESC sequence or a U+202E reached the terminal raw).
  if (options.json === true) {
    io.stdout.write(toJson(tokens));
    return;
  }
  for (const t of tokens) {
    io.stdout.write(`${t.name}\t${t.scopes.join(',')}\t${t.namespaces === null ? '*' : t.namespaces.join(',')}\t${t.policy === null ? '-' : cell(t.policy.persona)}\t${cell(t.created_at)}\n`);
  }
}

export async function tokenRevokeCommand(io: CliIO, name: string, options: { tokens?: string }): Promise<void> {
  const file = tokensFile(options.tokens, io.env);
  if (!(await onTokenFile(revokeToken(file, name)))) throw new CliError('USAGE', `no token named ${JSON.stringify(name)} in ${file}`);
  io.stdout.write(`revoked token ${name}\n`);
}
