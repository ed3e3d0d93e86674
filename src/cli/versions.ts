// The commands of issue 27 (versions with meaning): deprecate, undeprecate, policy, diff,
// check. They use the library only through its public API (src/index.ts), as a user's tool would.
import { InMemoryToolRegistry, checkSpecs, diffVersions } from '../index.js';
import type { CheckReport, RegistryPolicyInput, SchemaDifference, WriteOptions } from '../index.js';
import type { CliContext } from './commands.js';
import { withRegistry } from './database.js';
import { CliError } from './errors.js';
import { readJsonInput } from './input.js';
import { cell, formatTable, toJson } from './output.js';

function print(context: CliContext, text: string): void {
  context.stdout.write(text);
}

function versionText(version: string | null | undefined): string {
  return version === undefined ? '-' : version === null ? '(unversioned)' : cell(version);
}

export async function deprecateCommand(
  context: CliContext,
  name: string,
  options: { message: string; replacement?: string; sunset?: string; json?: boolean },
  write: WriteOptions,
): Promise<void> {
  await withRegistry(context.database, 'existing', async (registry) => {
    const deprecation = { message: options.message, replacement: options.replacement ?? null, sunset: options.sunset ?? null };
    const registration = await registry.deprecate(name, deprecation, write);
    if (options.json === true) print(context, toJson(registration));
    else print(context, `deprecated ${name}: ${cell(options.message)}${options.replacement === undefined ? '' : ` (use ${cell(options.replacement)})`}${options.sunset === undefined ? '' : `, sunset ${cell(options.sunset)}`}\n`);
  });
}

export async function undeprecateCommand(context: CliContext, name: string, write: WriteOptions): Promise<void> {
  await withRegistry(context.database, 'existing', async (registry) => {
    const before = await registry.get(name);
    await registry.undeprecate(name, write);
    print(context, before !== undefined && before.deprecation === null ? `${name} was not deprecated\n` : `undeprecated ${name}\n`);
  });
}

/** `policy`: shows the policies; `policy set --version-order V --compatibility C` sets them. */
export async function policyCommand(context: CliContext, set: RegistryPolicyInput | undefined, options: { json?: boolean }): Promise<void> {
  await withRegistry(context.database, set === undefined ? 'readonly' : 'readwrite', async (registry) => {
    const policy = set === undefined ? await registry.getPolicy() : await registry.setPolicy(set);
    if (options.json === true) print(context, toJson(policy));
    else print(context, `versionOrder:   ${policy.versionOrder}\ncompatibility:  ${policy.compatibility}\n`);
  });
}

function breakingText(breaking: SchemaDifference['breaking']): string {
  return breaking === 'undecidable' ? 'undecidable' : breaking ? 'yes' : 'no';
}

function valueText(value: unknown): string {
  return value === null ? '-' : cell(JSON.stringify(value));
}

export function formatDifferences(differences: readonly SchemaDifference[]): string {
  return formatTable(
    ['TYPE', 'PATH', 'BEFORE', 'AFTER', 'BREAKING'],
    differences.map((d) => [
      d.type,
      cell(d.path === '' ? '/' : d.path),
      // The entry that counts a place's values past the first 100 named (schema-compare.ts).
      d.omitted === undefined ? valueText(d.before) : d.type === 'enum-value-removed' ? `${d.omitted} more values` : '-',
      d.omitted === undefined ? valueText(d.after) : d.type === 'enum-value-added' ? `${d.omitted} more values` : '-',
      breakingText(d.breaking),
    ]),
  );
}

/** `diff NAME [--from V] [--to V]`: the schema differences between two versions of a tool. */
export async function diffCommand(context: CliContext, name: string, options: { from?: string; to?: string; json?: boolean }): Promise<void> {
  await withRegistry(context.database, 'readonly', async (registry) => {
    const diff = await diffVersions(registry, name, {
      ...(options.from === undefined ? {} : { from: options.from }),
      ...(options.to === undefined ? {} : { to: options.to }),
    });
    if (options.json === true) {
      print(context, toJson(diff));
      return;
    }
    const head = `${name} ${versionText(diff.from.version)} -> ${versionText(diff.to.version)}: ${diff.compatible ? 'compatible' : 'breaking'}`;
    print(context, diff.differences.length === 0 ? `${head}; the schemas do not differ\n` : `${formatDifferences(diff.differences)}${head}\n`);
  });
}

function formatCheck(report: CheckReport): string {
  return formatTable(
    ['NAME', 'AT', 'ACTION', 'FROM', 'TO', 'WHY'],
    report.results.map((result) => [
      result.tool_name === null ? '-' : cell(result.tool_name),
      result.path === '' ? '-' : result.path,
      result.rollback === true ? 'update (rollback)' : result.action,
      versionText(result.from_version),
      versionText(result.to_version),
      result.error === undefined ? '' : `${result.error.code}: ${cell(result.error.message)}`,
    ]),
  );
}

/** `check FILE`: what `register` would do with each spec, changing nothing; exit 1 when one would be refused. */
export async function checkCommand(context: CliContext, source: string, options: { json?: boolean; allowDowngrade?: boolean }): Promise<void> {
  const input = await readJsonInput(source, 'spec', context.stdin);
  const check = { allowDowngrade: options.allowDowngrade === true };
  const report = await withRegistry(context.database, 'readonly', (registry) => checkSpecs(registry, input, check)).catch(async (error: unknown) => {
    // No registry there yet (a first deploy's CI): `register` would create it and add, so the
    // check is against an empty registry, creating none, as `import --dry-run` plans (it was DATABASE_NOT_FOUND).
    if (!(error instanceof CliError && error.code === 'DATABASE_NOT_FOUND')) throw error;
    await using empty = new InMemoryToolRegistry();
    return await checkSpecs(empty, input, check);
  });
  if (options.json === true) print(context, toJson(report));
  else if (report.results.length > 0) print(context, formatCheck(report));
  const refusedCount = report.results.filter((result) => result.action === 'refused').length;
  if (!report.ok) throw new CliError('CHECK_FAILED', `${refusedCount} of ${report.results.length} specs would be refused; nothing was changed`);
  if (options.json !== true) print(context, `ok: register would accept ${report.results.length === 1 ? 'the spec' : `all ${report.results.length} specs`}; nothing was changed\n`);
}
