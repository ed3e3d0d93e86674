// The command lines of issue 27's commands (deprecate, undeprecate, policy, diff, check),
// registered on the program by one call in program.ts.
import { Option } from 'commander';
import type { Command } from 'commander';
import { parseDatabaseOption, parseNonEmpty } from './database-path.js';
import type { CompatibilityPolicy, RegistryPolicyInput, VersionOrder } from '../index.js';
import type { CliContext } from './commands.js';
import type * as Versions from './versions.js';

/** Loaded when a command runs (the library is not needed for --help or a usage error). */
const versions = (): Promise<typeof Versions> => import('./versions.js');

const VERSION_ORDERS: readonly VersionOrder[] = ['any', 'semver'];
const COMPATIBILITY: readonly CompatibilityPolicy[] = ['none', 'backward', 'semver-major'];

interface ExpectOptions {
  readonly expectVersion?: string;
  readonly expectAbsent?: boolean;
}

/** What program.ts shares with the commands it defines. */
export interface ProgramParts {
  readonly command: (name: string) => Command;
  readonly expectation: (cmd: Command) => Command;
  readonly expectedVersion: (cmd: Command, options: ExpectOptions) => string | null | undefined;
  readonly context: (cmd?: Command) => CliContext;
}

export function defineVersionCommands({ command, expectation, expectedVersion, context }: ProgramParts): void {
  expectation(command('deprecate'))
    .description('mark a tool deprecated: it keeps working; exports say so, and after --sunset loadToolSet leaves it out')
    .argument('<name>', 'the tool_name')
    .requiredOption('--message <text>', 'why, and what to do instead (shown to people and models)', parseNonEmpty('the text'))
    .option('--replacement <name>', 'the tool to use instead', parseNonEmpty('a tool name'))
    .option('--sunset <date>', 'when it stops being offered: an ISO 8601 date (2026-12-31) or date-time', parseNonEmpty('an ISO 8601 date'))
    .option('--json', 'print the registration as JSON')
    .action(async (name: string, options: ExpectOptions & { message: string; replacement?: string; sunset?: string; json?: boolean }, cmd: Command) =>
      (await versions()).deprecateCommand(context(cmd), name, options, { expectedVersion: expectedVersion(cmd, options) }),
    );

  expectation(command('undeprecate'))
    .description('lift a tool\'s deprecation')
    .argument('<name>', 'the tool_name')
    .action(async (name: string, options: ExpectOptions, cmd: Command) =>
      (await versions()).undeprecateCommand(context(cmd), name, { expectedVersion: expectedVersion(cmd, options) }),
    );

  const policy = command('policy')
    .description("show the registry's version policies (policy set: change them; every process obeys them)")
    .option('--json', 'print the policies as JSON')
    .action(async (options: { json?: boolean }, cmd: Command) => (await versions()).policyCommand(context(cmd), undefined, options));
  policy
    .command('set')
    .description('set one or both policies (the other is kept); an unknown value changes nothing')
    .option('--db <path>', 'the database file or postgres:// URL', parseDatabaseOption)
    .addOption(new Option('--version-order <order>', "'semver': versions must be SemVer and may not go down").choices(VERSION_ORDERS))
    .addOption(new Option('--compatibility <policy>', 'refuse a new version whose schemas break callers or consumers').choices(COMPATIBILITY))
    .option('--json', 'print the policies as JSON')
    .action(async (options: { versionOrder?: VersionOrder; compatibility?: CompatibilityPolicy; json?: boolean }, cmd: Command) => {
      if (options.versionOrder === undefined && options.compatibility === undefined) {
        cmd.error('error: give --version-order or --compatibility (or both)', { exitCode: 2, code: 'commander.missingArgument' });
      }
      const set: RegistryPolicyInput = {
        ...(options.versionOrder === undefined ? {} : { versionOrder: options.versionOrder }),
        ...(options.compatibility === undefined ? {} : { compatibility: options.compatibility }),
      };
      // --db may come after `set` or after `policy` (context reads both).
      await (await versions()).policyCommand(context(cmd), set, options);
    });

  command('diff')
    .description('the schema differences between two versions of a tool (default: the current one and the one before)')
    .argument('<name>', 'the tool_name')
    .option('--from <version>', 'the older version (default: the spec stored before --to)', parseNonEmpty('a version'))
    .option('--to <version>', 'the newer version (default: the current spec)', parseNonEmpty('a version'))
    .option('--json', 'print the diff as JSON')
    .action(async (name: string, options: { from?: string; to?: string; json?: boolean }, cmd: Command) =>
      (await versions()).diffCommand(context(cmd), name, options),
    );

  command('check')
    .description('what register would do with each spec (rule and policies), changing nothing; exit 1 when one would be refused')
    .argument('<file>', 'a ToolSpec or an array of them (JSON), or - for standard input')
    .option('--allow-downgrade', 'judge a lower SemVer as a rollback (as register --allow-downgrade would)')
    .option('--json', 'print the check report as JSON')
    .action(async (file: string, options: { json?: boolean; allowDowngrade?: boolean }, cmd: Command) =>
      (await versions()).checkCommand(context(cmd), file, options),
    );
}
