// What each command does, given a parsed command line. The wiring is in program.ts.
import { stat } from 'node:fs/promises';
import {
  InMemoryToolRegistry,
  ToolNotFoundError,
  ToolRegistryError,
  canonicalJson,
  registerManyWithActions,
  registerWithAction,
  validateSnapshot,
  validateSpecs,
} from '../index.js';
import type { ChangeEvent, ImportMode, ImportReport, LintFinding, LintProvider, RegistrationOutcome, ToolRegistration, ToolSpecInput, WriteOptions } from '../index.js';
import { describeDatabase, isPostgresUrl, withRegistry } from './database.js';
import { CliError, escapeControls } from './errors.js';
import { readJsonInput } from './input.js';
import {
  cell,
  formatChanges,
  formatFields,
  formatFindings,
  formatHistory,
  formatHistoryEntry,
  formatPlan,
  formatRegistration,
  formatRegistrations,
  toJson,
  writeSnapshotJson,
} from './output.js';
import { outTarget, writeFileAtomically } from './out-file.js';
import type * as ProviderExportsModule from './provider-exports.js';
import { createProgress } from './progress.js';
import type { StopSignals } from './stop-signals.js';

/** What every command needs from the process. */
export interface CliContext {
  /** The database path (`--db`, `TOOL_REGISTRY_DB`, or the default). */
  readonly database: string;
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

function print(context: CliContext, text: string): void {
  // Tool data is escaped where it is formatted; this catches the rest (a --db or --out path).
  context.stdout.write(escapeControls(text, '\n'));
}

/** A version in a message: control characters escaped as in the tables (no raw terminal escapes). */
function versionText(version: string | null): string {
  return version === null ? '(unversioned)' : cell(version);
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

export async function listCommand(
  context: CliContext,
  options: { all?: boolean; tag: readonly string[]; json?: boolean },
): Promise<void> {
  await withRegistry(context.database, 'readonly', async (registry) => {
    const all = await registry.listAll({ includeDisabled: options.all === true });
    const tools = all.filter((tool) => options.tag.every((tag) => tool.spec.tags.includes(tag)));
    if (options.json === true) print(context, toJson(tools));
    else if (tools.length > 0) print(context, formatRegistrations(tools));
    else {
      const tagged = options.tag.length === 0 ? '' : ` tagged ${options.tag.map((tag) => JSON.stringify(tag)).join(' and ')}`;
      print(context, `no ${options.all === true ? '' : 'enabled '}tools${tagged}\n`);
    }
  });
}

export async function getCommand(
  context: CliContext,
  name: string,
  options: { json?: boolean; version?: string },
): Promise<void> {
  await withRegistry(context.database, 'readonly', async (registry) => {
    if (options.version !== undefined) {
      const version = options.version;
      // The newest spec with that version: after remove and re-register a version may recur.
      const entry = (await registry.history(name)).filter((one) => one.spec.version === version).at(-1);
      if (entry === undefined) {
        throw new ToolRegistryError(
          'TOOL_NOT_FOUND',
          `tool ${JSON.stringify(name)} has no spec with version ${JSON.stringify(version)} in its history`,
          { context: { tool_name: name, version } },
        );
      }
      const current = await registry.get(name);
      const isCurrent = current !== undefined && canonicalJson(current.spec) === canonicalJson(entry.spec);
      print(context, options.json === true ? toJson(entry) : formatHistoryEntry(entry, isCurrent));
      return;
    }
    const registration = await registry.get(name);
    if (registration === undefined) throw new ToolNotFoundError(name);
    print(context, options.json === true ? toJson(registration) : formatRegistration(registration));
  });
}

/** What this command's write did to one tool, as the write decided it (never from a read before it). */
function describeRegistration({ registration, action, replacedVersion }: RegistrationOutcome): string {
  const name = registration.spec.tool_name;
  const version = versionText(registration.spec.version);
  if (action === 'added') return `added ${name} ${version}`;
  if (action === 'unchanged') return `unchanged ${name} ${version} (the identical spec is registered)`;
  return `replaced ${name} ${versionText(replacedVersion ?? null)} -> ${version} (kept ${registration.enabled ? 'enabled' : 'disabled'})`;
}

export async function historyCommand(context: CliContext, name: string, options: { json?: boolean }): Promise<void> {
  await withRegistry(context.database, 'readonly', async (registry) => {
    const entries = await registry.history(name);
    // Like get: a name with no history at all is TOOL_NOT_FOUND (the library returns []).
    if (entries.length === 0) throw new ToolNotFoundError(name);
    if (options.json === true) {
      print(context, toJson(entries));
      return;
    }
    const current = await registry.get(name);
    print(context, formatHistory(entries, current === undefined ? undefined : canonicalJson(current.spec)));
  });
}

export async function changesCommand(
  context: CliContext,
  options: { since?: number; limit?: number; json?: boolean },
): Promise<void> {
  await withRegistry(context.database, 'readonly', async (registry) => {
    const since = options.since ?? 0;
    const page = await registry.changes({ since, ...(options.limit === undefined ? {} : { limit: options.limit }) });
    if (options.json === true) print(context, toJson(page));
    // --limit 0 asks for the revision alone (as changes({ limit: 0 }) does), not "no changes".
    else if (options.limit === 0) print(context, `revision: ${page.revision}\n`);
    else if (page.events.length === 0) print(context, `no changes after revision ${since} (current revision ${page.revision})\n`);
    else print(context, formatChanges(page.events) + `revision: ${page.revision}\n`);
  });
}

/** Prints each change as one JSON line until SIGINT or SIGTERM (then exit 0); `stop` was caught by the action. */
export async function watchCommand(context: CliContext, options: { since?: number }, stop: StopSignals): Promise<void> {
  await withRegistry(context.database, 'readonly', async (registry) => {
    const signal = stop.running();
    const feed = registry.watch({ signal, ...(options.since === undefined ? {} : { since: options.since }) });
    for await (const event of feed) print(context, `${escapeControls(JSON.stringify(event satisfies ChangeEvent))}\n`);
  });
}

export async function registerCommand(context: CliContext, source: string, write: WriteOptions = {}): Promise<void> {
  const input = await readJsonInput(source, 'spec', context.stdin);
  if (Array.isArray(input) && write.expectedVersion !== undefined) {
    throw new CliError('USAGE', '--expect-version and --expect-absent apply to one spec, not to an array of specs');
  }
  // Validate before the database is opened, so bad input never creates or touches a file.
  validateSpecs(input);
  await withRegistry(context.database, 'readwrite', async (registry) => {
    // What each tool's line says is decided in the write's atomic step: of commands racing to
    // add one tool, only the one that added it says `added`.
    const outcomes = Array.isArray(input)
      ? await registerManyWithActions(registry, input as ToolSpecInput[])
      : [await registerWithAction(registry, input as ToolSpecInput, write)];
    const lines = outcomes.map(describeRegistration);
    print(context, lines.length === 0 ? 'nothing to register: the array is empty\n' : lines.map((line) => `${line}\n`).join(''));
  });
}

export async function setEnabledCommand(
  context: CliContext,
  name: string,
  enabled: boolean,
  write: WriteOptions = {},
): Promise<void> {
  await withRegistry(context.database, 'existing', async (registry) => {
    const before = await registry.get(name);
    await registry.setEnabled(name, enabled, write);
    const state = enabled ? 'enabled' : 'disabled';
    print(context, before?.enabled === enabled ? `${name} was already ${state}\n` : `${state} ${name}\n`);
  });
}

export async function removeCommand(context: CliContext, name: string, write: WriteOptions = {}): Promise<void> {
  await withRegistry(context.database, 'existing', async (registry) => {
    const removed = await registry.remove(name, write);
    print(context, removed ? `removed ${name}\n` : `nothing removed: ${name} was not registered\n`);
  });
}

export async function exportCommand(context: CliContext, options: { out?: string }): Promise<void> {
  // Checked before anything is read: a refused --out costs nothing.
  if (options.out !== undefined) outTarget(options.out);
  await withRegistry(context.database, 'readonly', async (registry) => {
    // Progress and the JSON on one terminal would garble each other.
    const toTerminal = options.out === undefined && context.stdout.isTTY === true;
    // Read before the snapshot: the snapshot reflects at least this revision, so following
    // `changes --since` from it may repeat a change already in the snapshot, never miss one.
    // (Not `changes()`: from revision 0 it is CHANGES_EXPIRED once the log was pruned.)
    const { tools, revision } = await registry.status();
    const progress = createProgress(toTerminal ? undefined : context.stderr, tools);
    try {
      progress.update('reading the tools ...', true);
      const snapshot = await registry.exportSnapshot();
      if (options.out === undefined) {
        writeSnapshotJson(snapshot, (text) => print(context, text), progress);
        return;
      }
      await writeFileAtomically(options.out, (write) => writeSnapshotJson(snapshot, write, progress));
      progress.done();
      print(context, `exported ${plural(snapshot.tools.length, 'tool')} to ${options.out} (revision ${revision})\n`);
    } finally {
      progress.done();
    }
  });
}

/** What `export --format` writes. */
export type ExportFormat = 'mcp' | 'openai' | 'openai-responses' | 'anthropic' | 'gemini' | 'ai-sdk';

/** The lint provider behind each format (the AI SDK has none of its own). */
const FORMAT_PROVIDER: Record<ExportFormat, LintProvider | undefined> = {
  mcp: 'mcp',
  openai: 'openai',
  'openai-responses': 'openai',
  anthropic: 'anthropic',
  gemini: 'gemini',
  'ai-sdk': undefined,
};

type ProviderExports = typeof ProviderExportsModule;

function exportAs(
  { toAiSdkTools, toAnthropicTools, toGeminiTools, toMcpTools, toOpenAITools }: ProviderExports,
  format: ExportFormat,
  tools: readonly ToolRegistration[],
  strict: boolean,
  onIncompatible: 'throw' | 'skip',
): { value: unknown; count: number } {
  switch (format) {
    case 'mcp': {
      const value = toMcpTools(tools, { onIncompatible });
      return { value, count: value.length };
    }
    case 'openai':
    case 'openai-responses': {
      const value = toOpenAITools(tools, { api: format === 'openai' ? 'chat' : 'responses', strict, onIncompatible });
      return { value, count: value.length };
    }
    case 'anthropic': {
      const value = toAnthropicTools(tools, { strict, onIncompatible });
      return { value, count: value.length };
    }
    case 'gemini': {
      const value = toGeminiTools(tools, { onIncompatible });
      return { value, count: value.functionDeclarations.length };
    }
    case 'ai-sdk': {
      const value = toAiSdkTools(tools, { onIncompatible });
      return { value, count: Object.keys(value).length };
    }
  }
}

/** `export --format F`: the enabled tools as the provider takes them; refused or skipped per the library. */
export async function providerExportCommand(
  context: CliContext,
  options: { out?: string; format: ExportFormat; strict?: boolean; skipIncompatible?: boolean },
): Promise<void> {
  // Checked before anything is read: a refused --out costs nothing.
  if (options.out !== undefined) outTarget(options.out);
  await withRegistry(context.database, 'readonly', async (registry) => {
    const tools = await registry.listAll();
    const strict = options.strict === true;
    const skip = options.skipIncompatible === true;
    const exports = await import('./provider-exports.js');
    const { value, count } = exportAs(exports, options.format, tools, strict, skip ? 'skip' : 'throw');
    const provider = FORMAT_PROVIDER[options.format];
    if (skip && count < tools.length && provider !== undefined) {
      // Say what was left out and why, as lintTools does.
      const errors = exports.lintTools(tools, { providers: [provider], strict }).filter((found) => found.severity === 'error' && found.tool_name !== null);
      for (const found of errors) context.stderr.write(`skipped ${found.tool_name}: ${found.rule} at ${found.path}: ${found.message}\n`);
    }
    if (options.out === undefined) {
      print(context, toJson(value));
      return;
    }
    await writeFileAtomically(options.out, (write) => write(toJson(value)));
    print(context, `exported ${plural(count, 'tool')} to ${options.out} (${options.format})\n`);
  });
}

function countBy(findings: readonly LintFinding[], severity: LintFinding['severity']): number {
  return findings.filter((found) => found.severity === severity).length;
}

/** `lint`: the findings of the enabled tools as a table (or JSON); exit 1 on an error finding. */
export async function lintCommand(context: CliContext, options: { provider: readonly LintProvider[]; strict?: boolean; json?: boolean }): Promise<void> {
  await withRegistry(context.database, 'readonly', async (registry) => {
    const tools = await registry.listAll();
    const providers: readonly LintProvider[] = options.provider.length > 0 ? [...new Set(options.provider)] : ['mcp', 'openai', 'anthropic', 'gemini'];
    const { lintTools } = await import('./provider-exports.js');
    const findings = lintTools(tools, { providers, strict: options.strict === true });
    const errors = countBy(findings, 'error');
    const warnings = countBy(findings, 'warning');
    const checked = `${plural(tools.length, 'enabled tool')} checked for ${providers.join(', ')}${options.strict === true ? ' (strict)' : ''}`;
    if (options.json === true) print(context, toJson(findings));
    else if (findings.length > 0) print(context, formatFindings(findings));
    if (errors > 0) {
      throw new CliError('LINT_FAILED', `${plural(errors, 'error')}, ${plural(warnings, 'warning')}; ${checked}`);
    }
    if (options.json !== true) print(context, `${findings.length === 0 ? 'ok: no findings' : `ok: no errors, ${plural(warnings, 'warning')}`}; ${checked}\n`);
  });
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

function summary(report: ImportReport, mode: ImportMode): string {
  if (report.dryRun) {
    return (
      `dry run (${mode}): ${report.added} to add, ${report.updated} to update, ${report.unchanged} unchanged, ` +
      `${report.removed} to remove, ${plural(report.conflicts, 'conflict')}; nothing was written\n`
    );
  }
  return (
    `imported (${mode}): ${report.added} added, ${report.updated} updated, ${report.unchanged} unchanged, ${report.removed} removed\n` +
    `revision: ${report.revision}\n`
  );
}

/** Conflicts named in an import's error line: the plan printed above it has every one (2,000 made a 40 KB line). */
const LISTED_CONFLICTS = 10;

export async function importCommand(
  context: CliContext,
  source: string,
  options: { mode: ImportMode; dryRun?: boolean; json?: boolean },
): Promise<void> {
  const input = await readJsonInput(source, 'snapshot', context.stdin);
  // Validate before the database is opened, so bad input never creates or touches a file.
  const entries = validateSnapshot(input);
  const dryRun = options.dryRun === true;
  const progress = createProgress(context.stderr, entries.length);
  progress.update(`${dryRun ? 'planning the import of' : 'importing'} ${entries.length} tools ...`, true);
  let report: ImportReport;
  try {
    report = await withRegistry(context.database, dryRun ? 'readonly' : 'readwrite', (registry) =>
      registry.importSnapshot(input, { mode: options.mode, dryRun }),
    ).catch(async (error: unknown) => {
      // No registry there (a missing file, a PostgreSQL schema with none in it): nothing to
      // compare with, and a dry run must not create one: plan against an empty registry.
      if (!dryRun || !(error instanceof CliError && error.code === 'DATABASE_NOT_FOUND')) throw error;
      await using empty = new InMemoryToolRegistry();
      return await empty.importSnapshot(input, { mode: options.mode, dryRun: true });
    });
  } finally {
    progress.done();
  }
  if (options.json === true) print(context, toJson(report));
  // An empty plan (an empty snapshot merged) has no table: a header alone reads as a broken one.
  else print(context, (report.plan === undefined || report.plan.length === 0 ? '' : formatPlan(report.plan)) + summary(report, options.mode));
  if (report.conflicts > 0) {
    const conflicts = (report.plan ?? []).filter((step) => step.action === 'conflict');
    const first = conflicts[0];
    throw new ToolRegistryError(
      'VERSION_CONFLICT',
      `the plan has ${plural(report.conflicts, 'conflict')} (the same version with a different spec): ` +
        conflicts
          .slice(0, LISTED_CONFLICTS)
          .map((step) => `${JSON.stringify(step.tool_name)} at ${step.path ?? '?'}`)
          .join(', ') +
        (conflicts.length > LISTED_CONFLICTS ? ` and ${conflicts.length - LISTED_CONFLICTS} more (each in the plan above)` : '') +
        `; the import would change nothing`,
      { context: first === undefined ? {} : { tool_name: first.tool_name, path: first.path } },
    );
  }
}

export async function statusCommand(context: CliContext, options: { json?: boolean }): Promise<void> {
  await withRegistry(context.database, 'readonly', async (registry) => {
    const status = await registry.status();
    if (options.json === true) {
      print(context, toJson(status));
      return;
    }
    const where: [string, string][] =
      'filename' in status
        ? [['file', status.filename]]
        : [
            ['database', describeDatabase(context.database)],
            ['schema', status.schema],
          ];
    const storage: [string, string][] =
      'filename' in status ? [['journal mode', status.journalMode]] : [['listening', status.listening ? 'yes' : 'no']];
    print(
      context,
      formatFields([
        ...where,
        ['schema version', status.schemaVersion],
        ['revision', String(status.revision)],
        ['migrations', status.appliedMigrations.join(', ')],
        ['tools', `${status.tools} (${status.enabled} enabled, ${status.disabled} disabled)`],
        ['spec history', plural(status.specHistory, 'spec')],
        ...storage,
      ]),
    );
  });
}

export async function verifyCommand(context: CliContext, options: { json?: boolean }): Promise<void> {
  await withRegistry(context.database, 'readonly', async (registry) => {
    const report = await registry.verify();
    if (options.json === true) print(context, toJson(report));
    if (!report.ok) {
      throw new CliError(
        'VERIFY_FAILED',
        `${plural(report.problems.length, 'problem')} in ${describeDatabase(context.database)} (${plural(report.checkedTools, 'tool')} checked)`,
        {
          details: report.problems.map(
            (problem) => `${problem.kind}${problem.tool_name === undefined ? '' : ` ${problem.tool_name}`}: ${problem.message}`,
          ),
        },
      );
    }
    if (options.json !== true) {
      const checks = isPostgresUrl(context.database) ? '' : 'the integrity check passed and ';
      print(context, `ok: ${checks}${plural(report.checkedTools, 'tool')} ${report.checkedTools === 1 ? 'meets' : 'meet'} the contracts\n`);
    }
  });
}

/** The migrations a read-only open found missing (both stores say so on the error it throws, or its cause). */
function pendingMigrationsOf(error: unknown): readonly string[] | undefined {
  for (let current = error; current instanceof Error; current = current.cause) {
    const pending = (current as { pendingMigrations?: unknown }).pendingMigrations;
    if (Array.isArray(pending)) return pending as string[];
  }
  return undefined;
}

export async function migrateCommand(context: CliContext): Promise<void> {
  const postgres = isPostgresUrl(context.database);
  const existed = postgres || (await exists(context.database));
  // Only to tell which migrations are new: the ones applied before, or (a registry too old to
  // open read-only) the ones it lacked; a file too new to read is refused below.
  let isNew = (_name: string): boolean => true;
  if (existed) {
    isNew = await withRegistry(context.database, 'readonly', async (registry) => {
      const before = (await registry.status()).appliedMigrations;
      return (name: string) => !before.includes(name);
    }).catch((error: unknown) => {
      const pending = pendingMigrationsOf(error);
      return pending === undefined ? isNew : (name: string) => pending.includes(name);
    });
  }
  await withRegistry(context.database, 'readwrite', async (registry) => {
    const status = await registry.status();
    const applied = status.appliedMigrations.filter(isNew);
    const created = postgres ? applied.length === status.appliedMigrations.length : !existed;
    const lines = [
      ...(created ? [`created ${postgres ? `schema ${(status as { schema: string }).schema} in ${describeDatabase(context.database)}` : context.database}`] : []),
      ...applied.map((name) => `applied ${name}`),
      `schema version ${status.schemaVersion} (${plural(status.appliedMigrations.length, 'migration')}, ${applied.length} new)`,
    ];
    print(context, lines.map((line) => `${line}\n`).join(''));
  });
}
