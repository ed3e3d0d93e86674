// The command lines of `tool-registry upstream ...` (issue 37), registered on the program by one
// call in program.ts. Light: --help and usage errors load nothing else; upstream.ts does the work.
import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';
import { collectNonEmpty, parseDatabaseOption, parseNonEmpty } from './database-path.js';
import type { CliContext } from './commands.js';
import { splitCommandLine } from './command-line.js';
import type * as Upstream from './upstream.js';
import { parseMilliseconds } from './mcp-command.js';

/** How long a command waits for an upstream to connect, then to list (a first `npx -y` downloads the server). */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;

const upstream = (): Promise<typeof Upstream> => import('./upstream.js');

/** `--header "Name: value"`: split at the first colon, the value trimmed. */
function collectHeader(value: string, previous: readonly (readonly [string, string])[]): (readonly [string, string])[] {
  const colon = value.indexOf(':');
  const name = colon < 0 ? '' : value.slice(0, colon).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new InvalidArgumentError(`expected "Name: value" with an HTTP header name, got ${JSON.stringify(value)}`);
  return [...previous, [name, value.slice(colon + 1).trim()]];
}

/** `--env K=V`: split at the first `=`. */
function collectEnv(value: string, previous: readonly (readonly [string, string])[]): (readonly [string, string])[] {
  const equals = value.indexOf('=');
  const name = equals < 0 ? '' : value.slice(0, equals);
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new InvalidArgumentError(`expected NAME=value with an environment variable name, got ${JSON.stringify(value)}`);
  return [...previous, [name, value.slice(equals + 1)]];
}

function parseCommandLine(value: string): string[] {
  try {
    return splitCommandLine(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

interface AddLine {
  url?: string;
  command?: string[];
  header: (readonly [string, string])[];
  env: (readonly [string, string])[];
  cwd?: string;
  prefix?: string;
  permission: string[];
  approve: 'all' | 'none';
  json?: boolean;
}

/** Adds `upstream` and its subcommands. `command(name)` makes a command with --db; `env` is where `${VAR}` comes from. */
export function defineUpstreamCommands(parts: { command: (name: string) => Command; context: (cmd?: Command) => CliContext }, env: NodeJS.ProcessEnv): void {
  const group = parts.command('upstream').description('upstream MCP servers whose tools the registry governs: add, list, remove, sync, pending, approve, reject (docs/gateway.md)');
  /** A subcommand; --db may come after `upstream` or after the subcommand. */
  const sub = (name: string): Command => group.command(name).option('--db <path>', 'the database file or postgres:// URL', parseDatabaseOption);
  const context = (cmd: Command): Upstream.UpstreamContext => {
    const own = cmd.opts<{ timeout?: number }>();
    return { ...parts.context(cmd), env, timeoutMs: own.timeout ?? DEFAULT_UPSTREAM_TIMEOUT_MS };
  };
  /** A subcommand that connects to the upstream. */
  const connecting = (name: string): Command =>
    sub(name).option('--timeout <ms>', `give up connecting, and then listing, after this many ms (default ${DEFAULT_UPSTREAM_TIMEOUT_MS})`, parseMilliseconds);

  connecting('add')
    .description('connect to an upstream, list its tools, store it, and (with --approve all, the default) register its tools as 1.0.0+HASH')
    .argument('<name>', 'the upstream name: 1-64 of A-Z a-z 0-9 _ - (its tools are tagged upstream:NAME)')
    .option('--url <url>', 'an HTTP upstream: Streamable HTTP, falling back to HTTP+SSE', parseNonEmpty('an http: or https: URL'))
    .option('--command <command-line>', 'a stdio upstream: the program and its arguments, split like a shell (quotes, backslashes) but never run by one', parseCommandLine)
    .option('--header <header>', '"Name: value" sent to an HTTP upstream; the value may name ${VAR}; repeatable', collectHeader, [])
    .option('--env <name=value>', "an environment variable of a stdio upstream; the value may name ${VAR}; repeatable", collectEnv, [])
    .option('--cwd <dir>', 'the working folder of a stdio upstream (made absolute)', parseNonEmpty('a folder'))
    .option('--prefix <prefix>', "put before each tool's name (default NAME_; '' keeps the upstream's names)")
    .option('--permission <name>', "a permission every tool of the upstream requires of a session's policy (e.g. NET_HTTP); repeatable", collectNonEmpty('a permission name'), [])
    .addOption(new Option('--approve <which>', 'all: serve its tools at once; none: they wait as pending').choices(['all', 'none']).default('all'))
    .option('--json', 'print the row, the approved tools and every tool\'s state as JSON')
    .action(async (name: string, options: AddLine, cmd: Command) => {
      if ((options.url === undefined) === (options.command === undefined)) cmd.error('error: give exactly one of --url and --command', { exitCode: 2, code: 'commander.missingArgument' });
      if (options.url !== undefined && (options.env.length > 0 || options.cwd !== undefined)) cmd.error('error: --env and --cwd apply to --command only', { exitCode: 2, code: 'commander.conflictingOption' });
      if (options.command !== undefined && options.header.length > 0) cmd.error('error: --header applies to --url only', { exitCode: 2, code: 'commander.conflictingOption' });
      await (await upstream()).addCommand(context(cmd), name, options);
    });

  sub('list')
    .description('the upstreams as stored (${VAR} never expanded), with how many tools each has registered; connects to none')
    .option('--json', 'print the rows as JSON')
    .action(async (options: { json?: boolean }, cmd: Command) => (await upstream()).listCommand(context(cmd), options));

  sub('remove')
    .description('remove an upstream and its tools (their history is kept; --keep-tools leaves them registered, unserved)')
    .argument('<name>', 'the upstream name')
    .option('--keep-tools', 'leave its tools registered')
    .action(async (name: string, options: { keepTools?: boolean }, cmd: Command) => (await upstream()).removeCommand(context(cmd), name, options));

  connecting('sync')
    .description('touch each upstream (serving processes re-list it), list its tools, print what is not served')
    .argument('[name]', 'only this upstream')
    .option('--json', 'print each upstream\'s counts and tools as JSON')
    .action(async (name: string | undefined, options: { json?: boolean }, cmd: Command) => (await upstream()).syncCommand(context(cmd), name, options));

  connecting('pending')
    .description('connect to each upstream (or one) and print its pending tools (changed or new) with the difference')
    .argument('[name]', 'only this upstream')
    .option('--json', 'print each upstream\'s counts and tools that are not served as JSON')
    .action(async (name: string | undefined, options: { json?: boolean }, cmd: Command) => (await upstream()).pendingCommand(context(cmd), name, options));

  connecting('approve')
    .description('register pending tools as their next version (new: 1.0.0, breaking: major+1, else minor+1) through the registry\'s policies')
    .argument('<name>', 'the upstream name')
    .argument('[tools...]', "the tools: their names upstream, or in the registry (with the prefix, as pending prints them); TOOL@HASH (the +HASH of the version pending printed) approves it only while the upstream lists that definition", collectNonEmpty('a tool name'))
    .option('--all', 'every pending tool')
    .option('--force', "register a breaking change the registry's compatibility policy refuses (an explicit, reported override)")
    .option('--json', 'print what was approved as JSON')
    .action(async (name: string, tools: string[], options: { all?: boolean; force?: boolean; json?: boolean }, cmd: Command) => {
      if (tools.length === 0 && options.all !== true) cmd.error('error: name the tools to approve, or give --all', { exitCode: 2, code: 'commander.missingArgument' });
      await (await upstream()).approveCommand(context(cmd), name, tools, options);
    });

  connecting('reject')
    .description('refuse the definition a pending tool has now: not served, not pending until the upstream changes it')
    .argument('<name>', 'the upstream name')
    .argument('<tool>', "the tool: its name upstream, or in the registry (with the prefix)")
    .option('--json', 'print the rejected tool as JSON')
    .action(async (name: string, tool: string, options: { json?: boolean }, cmd: Command) => (await upstream()).rejectCommand(context(cmd), name, tool, options));
}
