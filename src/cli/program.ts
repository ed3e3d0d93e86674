// The `tool-registry` command line: commander wiring, exit codes, and error printing.
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { ImportMode } from '../core/registry.js';
import type { LintProvider } from '../exports/types.js';
import type { CliContext, ExportFormat } from './commands.js';
import type * as Commands from './commands.js';
import { DATABASE_ENV, DEFAULT_DATABASE, resolveDatabase } from './database-path.js';
import { EXIT_OK, EXIT_USAGE, describeError } from './errors.js';

/** The commands load the store (zod, Kysely, SQLite): not needed for --help or a usage error. */
const commands = (): Promise<typeof Commands> => import('./commands.js');

/** The process the command talks to; tests and embedders may pass their own streams. */
export interface CliIO {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
}

function packageVersion(): string {
  const url = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
}

function collect(value: string, previous: readonly string[]): string[] {
  return [...previous, value];
}

/** The formats of `export --format`, and the providers of `lint --provider` (kept in step with the library). */
const EXPORT_FORMATS: readonly ExportFormat[] = ['mcp', 'openai', 'openai-responses', 'anthropic', 'gemini', 'ai-sdk'];
const PROVIDERS: readonly LintProvider[] = ['mcp', 'openai', 'anthropic', 'gemini', 'gemini-openapi'];
/** The formats whose provider has a strict mode. */
const STRICT_FORMATS: readonly ExportFormat[] = ['openai', 'openai-responses', 'anthropic'];

function collectProvider(value: string, previous: readonly LintProvider[]): LintProvider[] {
  if (!PROVIDERS.includes(value as LintProvider)) {
    throw new InvalidArgumentError(`Allowed choices are ${PROVIDERS.join(', ')}.`);
  }
  return [...previous, value as LintProvider];
}

/** Builds the program; `run` parses with it. Actions throw, `run` prints and maps to exit codes. */
export function buildProgram(io: CliIO): Command {
  const program = new Command('tool-registry');
  program
    .description('Inspect and change a tool registry database (SQLite).')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print help')
    .helpCommand('help [command]', 'print help for a command')
    .option(
      '--db <path>',
      `the database file (default: $${DATABASE_ENV}, else ${DEFAULT_DATABASE})`,
    )
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Same shape as every other error: `error CODE: message`.
      outputError: (text, write) => write(text.replace(/^error: /, 'error USAGE: ')),
    })
    .addHelpText(
      'after',
      `\nExit codes: 0 success, 1 a registry error (stderr: "error CODE: message"), 2 a usage error.\n` +
        `Read-only commands (list, get, export, lint, status, verify) never create or migrate the database.\n`,
    );

  const context = (): CliContext => ({
    database: resolveDatabase(program.opts<{ db?: string }>().db, io.env),
    stdin: io.stdin,
    stdout: io.stdout,
    stderr: io.stderr,
  });

  program
    .command('list')
    .description('list the enabled tools (all with --all) as a table')
    .option('--all', 'include disabled tools')
    .option('--tag <tag>', 'only tools with this tag; repeat it to require several', collect, [])
    .option('--json', "print the library's listAll() array as JSON")
    .action(async (options: { all?: boolean; tag: string[]; json?: boolean }) =>
      (await commands()).listCommand(context(), options),
    );

  program
    .command('get')
    .description('show one tool: its spec, enabled flag and created_at')
    .argument('<name>', 'the tool_name (exact, case-sensitive)')
    .option('--json', 'print the registration as JSON')
    .action(async (name: string, options: { json?: boolean }) =>
      (await commands()).getCommand(context(), name, options),
    );

  program
    .command('register')
    .description('register one ToolSpec, or an array of them all-or-nothing')
    .argument('<file>', 'a JSON file, or - for standard input')
    .action(async (file: string) => (await commands()).registerCommand(context(), file));

  program
    .command('enable')
    .description('enable a tool')
    .argument('<name>', 'the tool_name')
    .action(async (name: string) => (await commands()).setEnabledCommand(context(), name, true));

  program
    .command('disable')
    .description('disable a tool (it stays registered; a new version keeps it disabled)')
    .argument('<name>', 'the tool_name')
    .action(async (name: string) => (await commands()).setEnabledCommand(context(), name, false));

  program
    .command('remove')
    .description('remove a tool; succeeds when it was not there')
    .argument('<name>', 'the tool_name')
    .action(async (name: string) => (await commands()).removeCommand(context(), name));

  program
    .command('export')
    .description('write a snapshot of every tool (disabled ones too) as JSON; with --format, the enabled tools as a model provider takes them')
    .option('--out <file>', 'write to this file (whole or not at all) instead of standard output')
    .addOption(new Option('--format <format>', "the provider's tool list instead of a snapshot").choices(EXPORT_FORMATS))
    .option('--strict', `strict mode (${STRICT_FORMATS.join(', ')}): strict rules apply, strict: true is sent`)
    .option('--skip-incompatible', 'leave out the tools the provider would reject (listed on stderr) instead of failing')
    .action(async function (this: Command, options: { out?: string; format?: ExportFormat; strict?: boolean; skipIncompatible?: boolean }) {
      if (options.format === undefined && (options.strict === true || options.skipIncompatible === true)) {
        this.error('error: --strict and --skip-incompatible need --format');
      }
      if (options.strict === true && options.format !== undefined && !STRICT_FORMATS.includes(options.format)) {
        this.error(`error: --strict applies to --format ${STRICT_FORMATS.join(', ')} only`);
      }
      const run = await commands();
      if (options.format === undefined) await run.exportCommand(context(), options);
      else await run.providerExportCommand(context(), { ...options, format: options.format });
    });

  program
    .command('lint')
    .description("check the enabled tools against each model provider's rules; exit 1 on an error finding")
    .addOption(
      new Option('--provider <provider>', `only this provider (${PROVIDERS.join(', ')}); repeat it for several`)
        .argParser(collectProvider)
        .default([], 'mcp, openai, anthropic, gemini'),
    )
    .option('--strict', 'also the strict-mode rules of openai and anthropic')
    .option('--json', "print lintTools()' findings as JSON")
    .action(async (options: { provider: LintProvider[]; strict?: boolean; json?: boolean }) =>
      (await commands()).lintCommand(context(), options),
    );

  program
    .command('import')
    .description('import a snapshot all-or-nothing')
    .argument('<file>', 'a snapshot JSON file, or - for standard input')
    .addOption(
      new Option('--mode <mode>', 'merge: leave other tools alone; replace: make the registry equal the snapshot')
        .choices(['merge', 'replace'])
        .default('merge'),
    )
    .option('--dry-run', 'print the plan and write nothing; exit 1 if it has a conflict')
    .option('--json', "print the library's import report as JSON")
    .action(async (file: string, options: { mode: ImportMode; dryRun?: boolean; json?: boolean }) =>
      (await commands()).importCommand(context(), file, options),
    );

  program
    .command('status')
    .description('file, schema version, counts and journal mode')
    .option('--json', 'print the status as JSON')
    .action(async (options: { json?: boolean }) => (await commands()).statusCommand(context(), options));

  program
    .command('verify')
    .description('integrity check and every row against the contracts; exit 1 on a problem')
    .option('--json', 'print the verify report as JSON')
    .action(async (options: { json?: boolean }) => (await commands()).verifyCommand(context(), options));

  program
    .command('migrate')
    .description('create the database or apply pending migrations')
    .action(async () => (await commands()).migrateCommand(context()));

  return program;
}

/** Runs the command line `argv` (without `node` and the script) and returns the exit code. */
export async function run(argv: readonly string[], io: CliIO): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help, `help CMD` and --version end here too (exit code 0); commander has printed everything.
      return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    const { lines, exitCode } = describeError(error);
    io.stderr.write(lines.map((line) => `${line}\n`).join(''));
    return exitCode;
  }
}
