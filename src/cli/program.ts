// The `tool-registry` command line: commander wiring, exit codes, and error printing.
import { Command, CommanderError, Help, InvalidArgumentError, Option } from 'commander';
import type { ImportMode, LintProvider } from '../index.js';
import type { CliContext, ExportFormat } from './commands.js';
import type * as Commands from './commands.js';
import type { SearchCommandOptions } from './search.js';
import type { CallsCommandOptions } from './calls.js';
import { DATABASE_ENV, DEFAULT_DATABASE, collectNonEmpty, databaseOption, parseDatabaseOption, parseFileName, parseNonEmpty, resolveDatabase } from './database-path.js';
import { CliError, EXIT_OK, EXIT_USAGE, describeError, escapeControls } from './errors.js';
import { defineVersionCommands } from './versions-program.js';
import { defineUpstreamCommands } from './upstream-program.js';
import { registerServeCommands } from './serve-commands.js';
import { mcpCommand, serveMcpOptions } from './mcp-command.js';
import { packageVersion } from '../package-files.js';
import { readSince } from '../since-instant.js';
import { catchStopSignals } from './stop-signals.js';
import { commandStarted } from './output-errors.js';

/** The commands load the store (zod, Kysely, SQLite): not needed for --help or a usage error. */
const commands = (): Promise<typeof Commands> => import('./commands.js');

/** The process the command talks to; tests and embedders may pass their own streams. */
export interface CliIO {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
}

/** `--tag`: an empty one matched no tool (a tag is never empty), silently. */
const collectTag = collectNonEmpty('a tag');

/** The formats of `export --format`, and the providers of `lint --provider` (kept in step with the library). */
const EXPORT_FORMATS: readonly ExportFormat[] = ['mcp', 'openai', 'openai-responses', 'anthropic', 'gemini', 'ai-sdk'];
const PROVIDERS: readonly LintProvider[] = ['mcp', 'openai', 'anthropic', 'gemini', 'gemini-openapi'];
/** The formats whose provider has a strict mode, and the providers whose lint rules do. */
const STRICT_FORMATS: readonly ExportFormat[] = ['openai', 'openai-responses', 'anthropic'];
const STRICT_PROVIDERS: readonly LintProvider[] = ['openai', 'anthropic'];

function collectProvider(value: string, previous: readonly LintProvider[]): LintProvider[] {
  if (!PROVIDERS.includes(value as LintProvider)) {
    throw new InvalidArgumentError(`Allowed choices are ${PROVIDERS.join(', ')}.`);
  }
  return [...previous, value as LintProvider];
}

/** A revision or count on the command line: a whole number >= 0. */
function parseRevision(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError(`expected a whole number >= 0, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** `calls --since`: an ISO 8601 date or date-time with an offset, as the store compares it (UTC, `toISOString`); read as GET /v1/calls reads it. */
function parseSince(value: string): string {
  const read = readSince(value);
  if ('error' in read) throw new InvalidArgumentError(read.error);
  return read.instant;
}

/** A whole number from 1 to `max`: the library's bound, checked here so a value out of it is a usage error (exit 2), not the library's VALIDATION_FAILED (exit 1). */
function wholeFrom1To(max: number): (value: string) => number {
  return (value) => {
    const count = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!(count >= 1 && count <= max)) throw new InvalidArgumentError(`expected a whole number from 1 to ${max}, got ${JSON.stringify(value)}`);
    return count;
  };
}

/** `calls --limit`: 1-10000 (listCalls' bound). */
const parseCallsLimit = wholeFrom1To(10_000);
/** `search --limit`: 1-1000 (search()'s bound). */
const parseSearchLimit = wholeFrom1To(1000);
/** `calls --before`: a call id, >= 1 (listCalls' bound). */
const parseCallId = wholeFrom1To(Number.MAX_SAFE_INTEGER);

interface ExpectOptions {
  readonly expectVersion?: string;
  readonly expectAbsent?: boolean;
}

/**
 * Makes a value option given twice on one command a usage error naming both values: commander
 * kept the last one silently (`--db a.db list --db b.db`... `list --db a.db --db b.db` used b.db).
 * A repeatable option is one whose default is a list (`--tag`, `--provider`, `--header`...).
 */
function refuseRepeatedOptions(command: Command): void {
  for (const option of command.options) {
    if (option.isBoolean() || option.negate || Array.isArray(option.defaultValue)) continue;
    let first: string | undefined;
    command.on(`option:${option.name()}`, (value: string) => {
      if (first !== undefined) {
        command.error(`error: option '${option.flags}' given twice ('${first}' and '${value}'); give it once`, { exitCode: EXIT_USAGE, code: 'commander.repeatedOption' });
      }
      first = value;
    });
  }
  for (const sub of command.commands) refuseRepeatedOptions(sub);
}

/**
 * Makes an empty NAME or FILE argument a usage error naming it, as an empty option value is:
 * `remove ""` said "nothing removed:  was not registered" (exit 0), `register ""` "cannot read :".
 * Not search's QUERY: a query without terms has no results (docs/search.md). A list's values each
 * (`upstream approve NAME TOOL...`): an empty tool matched none.
 */
function refuseEmptyArguments(command: Command): void {
  if (command.name() !== 'search') {
    for (const argument of command.registeredArguments) {
      if (argument.parseArg !== undefined) continue;
      if (argument.variadic) argument.argParser(collectNonEmpty(argument.description));
      else argument.argParser(parseNonEmpty(argument.description));
    }
  }
  for (const sub of command.commands) refuseEmptyArguments(sub);
}

/**
 * A repeatable option's default is its empty list, which commander showed as "(default: [])": a
 * JavaScript value, nothing a user types. Shown without it; a described one (`lint --provider`) keeps its words.
 */
function optionDescription(this: Help, option: Option): string {
  const emptyList = Array.isArray(option.defaultValue) && option.defaultValue.length === 0 && option.defaultValueDescription === undefined;
  const shown = emptyList ? Object.assign(Object.create(Option.prototype) as Option, option, { defaultValue: undefined }) : option;
  return Help.prototype.optionDescription.call(this, shown);
}

/** The commands that never change what is stored (the help lists them). */
const READ_ONLY_COMMANDS: readonly string[] = ['list', 'search', 'get', 'history', 'changes', 'watch', 'calls', 'export', 'lint', 'status', 'verify', 'policy', 'diff', 'check', 'upstream list', 'upstream pending'];
/** Reads that touch no database (the tokens file). */
const TOKEN_READS: readonly string[] = ['token list'];

/** `upstream add` for that command: its names below the program's. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent != null; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/** Builds the program; `run` parses with it. Actions throw, `run` prints and maps to exit codes. */
export function buildProgram(io: CliIO): Command {
  const program = new Command('tool-registry');
  // Whether a usage error's `error USAGE:` line was printed: commander prints the help alone
  // for a missing command (`tool-registry`, `upstream`) and for `help NAME` of no command.
  let usageErrorPrinted = false;
  program
    .description('Inspect and change a tool registry database (SQLite, or PostgreSQL with --db postgres://...).')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print help')
    .helpCommand('help [command]', 'print help for a command')
    .configureHelp({ optionDescription })
    .option(
      '--db <path>',
      `the database file, or a postgres:// URL (?schema=name picks the schema) (default: $${DATABASE_ENV}, else ${DEFAULT_DATABASE})`,
      parseDatabaseOption,
    )
    // `get NAME --version V` needs its own --version: the program's options are read only
    // before the command, so every command also takes --db.
    .enablePositionalOptions()
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Same shape as every other error: `error CODE: message`.
      // An argument echoed back (an unknown command, a bad value) is escaped as tool data is.
      outputError: (text, write) => {
        usageErrorPrinted = true;
        write(escapeControls(text.replace(/^error: /, 'error USAGE: '), '\n'));
      },
    })
    .addHelpText('beforeAll', ({ error, command }) => {
      if (!error || usageErrorPrinted) return '';
      const [first, name] = command.args;
      const message = first === 'help' && name !== undefined ? `unknown command '${name}'` : `missing command for '${command.name()}'`;
      return `${escapeControls(`error USAGE: ${message}`)}\n`;
    })
    .addHelpText(
      'after',
      `\nExit codes: 0 success, 1 a registry error (stderr: "error CODE: message"), 2 a usage error.\n` +
        `Read-only commands (${READ_ONLY_COMMANDS.join(', ')}) never create or migrate the database.\n`,
    )
    // Whether the command may have changed something, for the line saying its output was lost.
    .hook('preAction', (_program, action) => {
      const name = commandPath(action);
      // A dry run (`import --dry-run`) writes nothing.
      const dryRun = (action.opts() as { dryRun?: unknown }).dryRun === true;
      commandStarted(name, !dryRun && !READ_ONLY_COMMANDS.includes(name) && !TOKEN_READS.includes(name));
    });

  const context = (command?: Command): CliContext => {
    const database = resolveDatabase(databaseOption(command ?? program), io.env);
    // SQLite's in-memory database lives as long as the process: a command that ends said
    // "added q" of a tool stored nowhere. `mcp --publish` serves it for its session.
    if (database === ':memory:' && command?.name() !== 'mcp') {
      throw new CliError('USAGE', "database :memory: is SQLite's in-memory database, gone when this command ends: nothing would be kept (./:memory: names a file)");
    }
    // Without --publish it is empty: `mcp` said DATABASE_NOT_FOUND and "run tool-registry migrate", which cannot reach it.
    if (database === ':memory:' && command?.opts().publish !== true) {
      throw new CliError('USAGE', "database :memory: is SQLite's in-memory database, empty when this command starts: mcp serves one only with --publish, which publishes the tools of --tools into it (./:memory: names a file)");
    }
    return { database, stdin: io.stdin, stdout: io.stdout, stderr: io.stderr };
  };

  /** A command that also takes --db after its name. */
  const command = (name: string): Command =>
    program
      .command(name)
      .option('--db <path>', `the database file or postgres:// URL (default: $${DATABASE_ENV}, else ${DEFAULT_DATABASE})`, parseDatabaseOption);

  /** --expect-version / --expect-absent: the condition of a conditional write. */
  const expectation = (cmd: Command): Command =>
    cmd
      .option('--expect-version <version>', 'only if the stored version is exactly this one (else PRECONDITION_FAILED, nothing changes)', parseNonEmpty('a version'))
      .option('--expect-absent', 'only if the tool is not registered (else PRECONDITION_FAILED, nothing changes)');

  const expectedVersion = (cmd: Command, options: ExpectOptions): string | null | undefined => {
    if (options.expectAbsent === true && options.expectVersion !== undefined) {
      cmd.error('error: --expect-version and --expect-absent cannot be used together', { exitCode: 2, code: 'commander.conflictingOption' });
    }
    return options.expectAbsent === true ? null : options.expectVersion;
  };

  command('list')
    .description('list the enabled tools (all with --all) as a table')
    .option('--all', 'include disabled tools')
    .option('--tag <tag>', 'only tools with this tag; repeat it to require several', collectTag, [])
    .option('--json', "print the library's listAll() array as JSON")
    .action(async (options: { all?: boolean; tag: string[]; json?: boolean }, cmd: Command) =>
      (await commands()).listCommand(context(cmd), options),
    );

  // Issue 26: search (src/cli/search.ts).
  command('search')
    .description('the enabled tools (all with --all) that best match QUERY, best first')
    .argument('<query>', 'what the tool should do, in words')
    .option('--tag <tag>', 'only tools with this tag; repeat it to require several', collectTag, [])
    .option('--limit <n>', 'at most this many results, 1-1000 (default 10)', parseSearchLimit)
    .option('--all', 'include disabled tools')
    .option('--json', "print the library's search() page as JSON")
    .action(async (query: string, options: SearchCommandOptions, cmd: Command) =>
      (await import('./search.js')).searchCommand(context(cmd), query, options),
    );

  command('get')
    .description('show one tool: its spec, enabled flag and created_at (--version: a spec from its history)')
    .argument('<name>', 'the tool_name (exact, case-sensitive)')
    .option('--version <version>', 'show the spec this version had (current or in the history)', parseNonEmpty('a version'))
    .option('--json', 'print the registration (with --version: the history entry) as JSON')
    .action(async (name: string, options: { json?: boolean; version?: string }, cmd: Command) =>
      (await commands()).getCommand(context(cmd), name, options),
    );

  command('history')
    .description('every distinct spec ever stored under a name, oldest first')
    .argument('<name>', 'the tool_name')
    .option('--json', "print the library's history() array as JSON")
    .action(async (name: string, options: { json?: boolean }, cmd: Command) =>
      (await commands()).historyCommand(context(cmd), name, options),
    );

  command('changes')
    .description('the change log after a revision: one line per change, and the current revision')
    .option('--since <revision>', 'only changes after this revision (default 0)', parseRevision)
    .option('--limit <count>', 'at most this many changes (default 1000)', parseRevision)
    .option('--json', "print the library's changes() page as JSON")
    .action(async (options: { since?: number; limit?: number; json?: boolean }, cmd: Command) =>
      (await commands()).changesCommand(context(cmd), options),
    );

  // Issue 37: the audit log of MCP tool calls (src/cli/calls.ts).
  command('calls')
    .description('the audit log: MCP tools/call records (who, which tool, how long, outcome), newest first')
    .option('--tool <name>', 'only calls of this tool', parseNonEmpty('a tool name'))
    .option('--token <name>', 'only calls made with this token (its name)', parseNonEmpty('a token name'))
    .option('--since <iso>', 'only calls that started at or after this ISO 8601 date or date-time', parseSince)
    .option('--limit <count>', 'at most this many calls, 1-10000 (default 100)', parseCallsLimit)
    .option('--before <id>', 'only calls older than this id (the next page: the id the previous page names)', parseCallId)
    .option('--json', '{ calls, next_before } as JSON (as GET /v1/calls answers)')
    .action(async (options: CallsCommandOptions, cmd: Command) => (await import('./calls.js')).callsCommand(context(cmd), options));

  command('watch')
    .description('print each change as one JSON line as it happens, until interrupted (SIGINT/SIGTERM: exit 0)')
    .option('--since <revision>', 'first print the changes after this revision (default: only new ones)', parseRevision)
    .action(async (options: { since?: number }, cmd: Command) => {
      // Caught before the store loads and the database opens: a signal then was the process's death (143).
      const stop = catchStopSignals(io.stdout === process.stdout);
      try {
        await (await commands()).watchCommand(context(cmd), options, stop);
      } finally {
        stop.dispose();
      }
    });

  expectation(command('register'))
    .description('register one ToolSpec, or an array of them all-or-nothing')
    .argument('<file>', 'a JSON file, or - for standard input')
    .action(async (file: string, options: ExpectOptions, cmd: Command) =>
      (await commands()).registerCommand(context(cmd), file, { expectedVersion: expectedVersion(cmd, options) }),
    );

  expectation(command('enable'))
    .description('enable a tool')
    .argument('<name>', 'the tool_name')
    .action(async (name: string, options: ExpectOptions, cmd: Command) =>
      (await commands()).setEnabledCommand(context(cmd), name, true, { expectedVersion: expectedVersion(cmd, options) }),
    );

  expectation(command('disable'))
    .description('disable a tool (it stays registered; a new version keeps it disabled)')
    .argument('<name>', 'the tool_name')
    .action(async (name: string, options: ExpectOptions, cmd: Command) =>
      (await commands()).setEnabledCommand(context(cmd), name, false, { expectedVersion: expectedVersion(cmd, options) }),
    );

  expectation(command('remove'))
    .description('remove a tool; succeeds when it was not there')
    .argument('<name>', 'the tool_name')
    .action(async (name: string, options: ExpectOptions, cmd: Command) =>
      (await commands()).removeCommand(context(cmd), name, { expectedVersion: expectedVersion(cmd, options) }),
    );

  command('export')
    .description('write a snapshot of every tool (disabled ones too) as JSON; with --format, the enabled tools as a model provider takes them')
    .option('--out <file>', 'write to this file (whole or not at all) instead of standard output (- is standard output)', parseFileName('a file name, or - for standard output'))
    .addOption(new Option('--format <format>', "the provider's tool list instead of a snapshot").choices(EXPORT_FORMATS))
    .option('--strict', `strict mode (${STRICT_FORMATS.join(', ')}): strict rules apply, strict: true is sent`)
    .option('--skip-incompatible', 'leave out the tools the provider would reject (listed on stderr) instead of failing')
    .action(async (options: { out?: string; format?: ExportFormat; strict?: boolean; skipIncompatible?: boolean }, cmd: Command) => {
      if (options.format === undefined && (options.strict === true || options.skipIncompatible === true)) {
        cmd.error('error: --strict and --skip-incompatible need --format');
      }
      if (options.strict === true && options.format !== undefined && !STRICT_FORMATS.includes(options.format)) {
        cmd.error(`error: --strict applies to --format ${STRICT_FORMATS.join(', ')} only`);
      }
      // `--out -` is standard output, as `-` is standard input for register and import (it wrote a file named "-").
      const { out, ...rest } = options;
      const outOption = out === undefined || out === '-' ? {} : { out };
      const run = await commands();
      if (options.format === undefined) await run.exportCommand(context(cmd), outOption);
      else await run.providerExportCommand(context(cmd), { ...rest, ...outOption, format: options.format });
    });

  command('lint')
    .description("check the enabled tools against each model provider's rules; exit 1 on an error finding")
    .addOption(
      new Option('--provider <provider>', `only this provider (${PROVIDERS.join(', ')}); repeat it for several`)
        .argParser(collectProvider)
        .default([], 'mcp, openai, anthropic, gemini'),
    )
    .option('--strict', 'also the strict-mode rules of openai and anthropic')
    .option('--json', "print lintTools()' findings as JSON")
    .action(async (options: { provider: LintProvider[]; strict?: boolean; json?: boolean }, cmd: Command) => {
      // As `export --strict` with another format: it checked nothing more, and said "(strict)".
      if (options.strict === true && options.provider.length > 0 && !options.provider.some((provider) => STRICT_PROVIDERS.includes(provider))) {
        cmd.error(`error: --strict applies to --provider ${STRICT_PROVIDERS.join(', ')} only`);
      }
      await (await commands()).lintCommand(context(cmd), options);
    });

  command('import')
    .description('import a snapshot all-or-nothing')
    .argument('<file>', 'a snapshot JSON file, or - for standard input')
    .addOption(
      new Option('--mode <mode>', 'merge: leave other tools alone; replace: make the registry equal the snapshot')
        .choices(['merge', 'replace'])
        .default('merge'),
    )
    .option('--dry-run', 'print the plan and write nothing; exit 1 if it has a conflict')
    .option('--json', "print the library's import report as JSON")
    .action(async (file: string, options: { mode: ImportMode; dryRun?: boolean; json?: boolean }, cmd: Command) =>
      (await commands()).importCommand(context(cmd), file, options),
    );

  command('status')
    .description('file (or database and schema), schema version, revision, counts, journal mode (or listener)')
    .option('--json', 'print the status as JSON')
    .action(async (options: { json?: boolean }, cmd: Command) => (await commands()).statusCommand(context(cmd), options));

  command('verify')
    .description('integrity check and every row against the contracts; exit 1 on a problem')
    .option('--json', 'print the verify report as JSON')
    .action(async (options: { json?: boolean }, cmd: Command) => (await commands()).verifyCommand(context(cmd), options));

  command('migrate')
    .description('create the database or apply pending migrations')
    .action(async (_options: unknown, cmd: Command) => (await commands()).migrateCommand(context(cmd)));

  defineVersionCommands({ command, expectation, expectedVersion, context });
  defineUpstreamCommands({ command, context }, io.env);
  serveMcpOptions(registerServeCommands(program, io));
  mcpCommand(command('mcp'), context);
  refuseRepeatedOptions(program);
  refuseEmptyArguments(program);
  return program;
}

/**
 * `help upstream add` as `upstream help add`: commander's help command reads one name, so it
 * printed the help of `upstream` (and `help upstream nope` that help too, exit 0).
 */
function nestedHelp(program: Command, argv: readonly string[]): string[] {
  const [first, name, ...rest] = argv;
  if (first !== 'help' || name === undefined || rest.length === 0) return [...argv];
  const group = program.commands.find((command) => command.name() === name || command.aliases().includes(name));
  return group !== undefined && group.commands.length > 0 ? [name, 'help', ...rest] : [...argv];
}

/**
 * `help ''` (`upstream help ''`...) printed the general help, exit 0: commander reads an empty
 * name as none. A usage error naming it, as `help nope` is.
 */
function refuseEmptyHelpName(program: Command, argv: readonly string[]): void {
  let level = program;
  for (const [at, word] of argv.entries()) {
    if (word === 'help' && argv[at + 1] === '') level.error("error: unknown command ''", { exitCode: EXIT_USAGE, code: 'commander.unknownCommand' });
    const sub = level.commands.find((command) => command.name() === word || command.aliases().includes(word));
    if (sub === undefined) return;
    level = sub;
  }
}

/** Runs the command line `argv` (without `node` and the script) and returns the exit code. */
export async function run(argv: readonly string[], io: CliIO): Promise<number> {
  const program = buildProgram(io);
  try {
    const args = nestedHelp(program, argv);
    refuseEmptyHelpName(program, args);
    await program.parseAsync(args, { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help, `help CMD` and --version end here too (exit code 0); commander has printed everything.
      return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    const { lines, exitCode } = await describeError(error);
    io.stderr.write(lines.map((line) => `${line}\n`).join(''));
    return exitCode;
  }
}
