// The commander wiring of `serve` and `token`; the work (and the library) loads only when one runs.
import { constants } from 'node:buffer';
import { corsOrigin } from '../cors-origin.js';
import type { Command } from 'commander';
import { collectNonEmpty, databaseOption, parseDatabaseOption, parseFileName, parseNonEmpty } from './database-path.js';
import { MAX_TIMER_MS, checkUpstreamOptions } from './mcp-command.js';
import { InvalidArgumentError, Option } from 'commander';
import type { TokenScope } from '../server/index.js';
import type { CliIO } from './program.js';
import type * as Serve from './serve.js';
import { catchStopSignals } from './stop-signals.js';

/** The token file when `--tokens` is not given (token commands only; serve needs the flag). */
export const TOKENS_ENV = 'TOOL_REGISTRY_TOKENS';
export const DEFAULT_TOKENS = './tool-registry-tokens.json';
const SCOPES: readonly TokenScope[] = ['read', 'write', 'admin'];

const serve = (): Promise<typeof Serve> => import('./serve.js');

/** A time in ms, 0 to the longest timer (the 9-digit bound it had refused 10 digits as "not a whole number"). */
function whole(value: string): number {
  if (!/^\d{1,10}$/.test(value) || Number(value) > MAX_TIMER_MS) throw new InvalidArgumentError(`expected a whole number of ms, 0 to ${MAX_TIMER_MS}, got ${JSON.stringify(value)}`);
  return Number(value);
}

function port(value: string): number {
  const n = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n <= 65_535)) throw new InvalidArgumentError(`expected a port, 0 to 65535, got ${JSON.stringify(value)}`);
  return n;
}

function hostList(value: string): string[] {
  const hosts = value.split(',').map((h) => h.trim()).filter((h) => h !== '');
  if (hosts.length === 0) throw new InvalidArgumentError(`expected comma-separated host names, got ${JSON.stringify(value)}`);
  return hosts;
}

/** `*`, or an origin as a browser sends it (`https://console.example`): a trailing slash and case are forgiven, anything else refused (the server's rule). */
function corsOption(value: string): string {
  const origin = corsOrigin(value);
  if (origin === undefined) throw new InvalidArgumentError(`expected * or an origin (scheme://host[:port], as a browser sends it in Origin), got ${JSON.stringify(value)}`);
  return origin;
}

/** A whole number 1 to `max`, one message naming the range (`why`: what sets the bound, if not `whole`). */
function upTo(value: string, max: number, why = ''): number {
  if (!/^\d{1,10}$/.test(value) || Number(value) < 1 || Number(value) > max) throw new InvalidArgumentError(`expected a whole number, 1 to ${max}${why}, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** A count or a size (--max-streams, ...), 1 to the bound `whole` keeps; it said "a whole number of ms, 0 to ...". */
function positive(value: string): number {
  return upTo(value, MAX_TIMER_MS);
}

/** --max-body: a body is read as one string, so at most the longest one JavaScript holds (a larger body was a 500). */
function bodySize(value: string): number {
  return upTo(value, constants.MAX_STRING_LENGTH, ' (bytes: the longest string JavaScript holds, as a body is read as one)');
}

function parseScopes(value: string): TokenScope[] {
  const scopes = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const wrong = scopes.filter((s) => !SCOPES.includes(s as TokenScope));
  if (scopes.length === 0 || wrong.length > 0) throw new InvalidArgumentError(`scopes are a comma-separated list of ${SCOPES.join(', ')}, got ${JSON.stringify(value)}`);
  return scopes as TokenScope[];
}

/** Adds `serve` and `token` to the program; returns the serve command (others add options to it). */
export function registerServeCommands(program: Command, io: CliIO): Command {
  const serveCommand = program
    .command('serve')
    .description('serve the registry over HTTP (routes: docs/server.md); SIGTERM/SIGINT stops it gracefully')
    .option('--db <path>', 'the database file or postgres:// URL (namespace default; with a URL, each namespace is a schema)', parseDatabaseOption)
    .option('--data-dir <dir>', 'one SQLite file per namespace: DIR/{ns}.db', parseFileName('a folder'))
    .option('--host <host>', 'the address to listen on (without --tokens: loopback only)', parseNonEmpty('an address (0.0.0.0 or :: for every one)'), '127.0.0.1')
    .option('--port <port>', 'the port (0: a free one)', port, 8080)
    .option('--tokens <file>', 'require bearer tokens from this file (tool-registry token create)', parseFileName('a file name'))
    .option('--cors <origin>', 'answer browsers from this origin, scheme://host[:port] (* for any)', corsOption)
    .option('--allowed-hosts <hosts>', 'Host names to answer besides localhost, 127.0.0.1 and [::1] with the port it listens on (comma-separated; name: any port, name:port: that one); others are 403', hostList)
    .option('--no-console', 'do not serve the console pages at /')
    .option('--max-body <bytes>', 'largest request body (default 1048576)', bodySize)
    .option('--drain-timeout <ms>', 'how long a stop lets in-flight requests finish (default 10000)', whole)
    .option('--max-streams <n>', 'SSE change-feed streams open at once; one token may hold half (default 1000, or a quarter of the open-file limit if lower)', positive)
    .option('--max-sessions <n>', 'MCP sessions open at once; one token may hold half (default 1000, or a quarter of the open-file limit if lower)', positive)
    .option('--max-open-namespaces <n>', 'namespaces open at once with --data-dir or PostgreSQL; the least recently used idle one is closed (default 64, or a sixteenth of the open-file limit if lower)', positive)
    // `tool-registry --db FILE serve`: the program's --db counts as for every other command.
    .action(async (options: Serve.ServeOptions & Record<string, unknown>, cmd: Command) => {
      checkUpstreamOptions(options, cmd);
      const db = databaseOption(cmd);
      // Caught before the server's code loads and the database opens: a signal then was the process's death (143).
      const stop = catchStopSignals(io.stdout === process.stdout);
      try {
        await (await serve()).serveCommand(io, db === undefined ? options : { ...options, db }, stop);
      } finally {
        stop.dispose();
      }
    });

  const token = program.command('token').description('create, list and revoke the bearer tokens of `serve --tokens FILE`');
  const withFile = (cmd: Command): Command => cmd.option('--tokens <file>', `the token file (default: $${TOKENS_ENV}, else ${DEFAULT_TOKENS})`, parseFileName('a file name'));

  withFile(token.command('create'))
    .description('create a token; its secret is printed once (the last line) and only its SHA-256 is stored')
    .requiredOption('--name <name>', 'its name (shown in logs and whoami)', parseNonEmpty('a token name'))
    .requiredOption('--scopes <scopes>', 'comma-separated: read, write, admin', parseScopes)
    .addOption(new Option('--namespace <ns>', 'limit it to this namespace; repeat for several').argParser(collectNonEmpty('a namespace')).default([], 'every namespace'))
    .option('--policy <file>', 'a ToolPolicy JSON file (as invoke takes it) that MCP sessions of this token obey', parseNonEmpty('a file name'))
    .action(async (options: { name: string; scopes: TokenScope[]; namespace: string[]; policy?: string; tokens?: string }) =>
      (await serve()).tokenCreateCommand(io, options),
    );

  withFile(token.command('list'))
    .description('the tokens in the file: name, scopes, namespaces, policy persona, created (never a secret)')
    .option('--json', 'print them as JSON (with their SHA-256)')
    .action(async (options: { tokens?: string; json?: boolean }) => (await serve()).tokenListCommand(io, options));

  withFile(token.command('revoke'))
    .description('delete a token; a running server refuses it from its next request and ends its open streams and MCP sessions within 2 s')
    .argument('<name>', 'the token name')
    .action(async (name: string, options: { tokens?: string }) => (await serve()).tokenRevokeCommand(io, name, options));

  return serveCommand;
}
