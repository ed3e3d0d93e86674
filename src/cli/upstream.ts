// `tool-registry upstream ...` (issue 37): upstream MCP servers under the registry's
// governance. The wiring is in upstream-program.ts; the rules (states, versions, approve,
// reject) are the MCP layer's (src/mcp/gateway/sync.ts), reached through 'tool-registry/mcp'.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { InMemoryToolRegistry, PERMISSION_NAME_PATTERN } from '../index.js';
import type { Upstream, UpstreamInput, UpstreamTransport } from '../index.js';
import {
  approveUpstreamTools,
  countUpstreamStates,
  describeUpstreamTarget,
  fetchUpstreamDefinitions,
  GatewayError,
  rejectUpstreamTool,
  requireUpstream,
  upstreamInputOf,
  upstreamRegistrations,
  upstreamStates,
} from '../mcp/index.js';
import type { ApprovedTool, UpstreamToolDefinition, UpstreamToolState } from '../mcp/index.js';
import type { CliContext } from './commands.js';
import { isPostgresUrl, withRegistry } from './database.js';
import type { CliRegistry } from './database.js';
import { CliError } from './errors.js';
import { cell, formatTable, toJson } from './output.js';
import { formatDifferences } from './versions.js';

/** What the upstream commands need beyond the other commands: the environment `${VAR}` comes from, how long to wait for an upstream. */
export interface UpstreamContext extends CliContext {
  readonly env: NodeJS.ProcessEnv;
  /** Connecting, and then listing, each give up after this many ms (--timeout). */
  readonly timeoutMs: number;
}

function print(context: CliContext, text: string): void {
  context.stdout.write(text);
}

/** The gateway's errors keep their code on the command line (exit 1). */
async function governed<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof GatewayError) throw new CliError(error.code, error.message, { cause: error });
    throw error;
  }
}

/** Connects and lists with the command's environment (a stdio upstream's stderr is not shown). */
function definitionsOf(context: UpstreamContext, upstream: Pick<Upstream, 'name' | 'transport'>): Promise<UpstreamToolDefinition[]> {
  return fetchUpstreamDefinitions(upstream, { env: context.env, timeoutMs: context.timeoutMs });
}

export interface AddOptions {
  readonly url?: string;
  readonly command?: readonly string[];
  readonly header: readonly (readonly [string, string])[];
  readonly env: readonly (readonly [string, string])[];
  readonly cwd?: string;
  readonly prefix?: string;
  /** Permissions every tool of the upstream requires (`--permission`, repeatable). */
  readonly permission?: readonly string[];
  readonly approve: 'all' | 'none';
  readonly json?: boolean;
}

/** Header and variable names that usually carry a secret. */
const SECRET_NAME = /authorization|cookie|token|secret|password|passwd|api[-_]?key|private/i;

/** The pairs as a record; a name given twice is refused (`caseless`: header names, which HTTP compares ignoring case). */
function record(pairs: readonly (readonly [string, string])[], what: string, caseless = false): Record<string, string> {
  const out: Record<string, string> = {};
  const seen = new Map<string, string>();
  for (const [key, value] of pairs) {
    const first = seen.get(caseless ? key.toLowerCase() : key);
    // `X-A` and `x-a` were both stored and sent as one header, `X-A: 1, 2`.
    if (first !== undefined) throw new CliError('USAGE', `${what} ${key} is given twice${first === key ? '' : ` (as ${first}: header names ignore case)`}`);
    seen.set(caseless ? key.toLowerCase() : key, key);
    out[key] = value;
  }
  return out;
}

/**
 * `upstream add NAME --url URL | --command CMD`: connects, lists, stores the row (values as
 * given, `${VAR}` unexpanded) and, with `--approve all` (the default), registers every tool
 * as `1.0.0+HASH` in one all-or-nothing write; if that write is refused, the row is removed again.
 */
export async function addCommand(context: UpstreamContext, name: string, options: AddOptions): Promise<void> {
  const transport: UpstreamTransport =
    options.url !== undefined
      ? { type: 'http', url: options.url, headers: record(options.header, 'header', true) }
      : { type: 'stdio', command: options.command as string[], env: record(options.env, 'environment variable'), cwd: options.cwd === undefined ? null : resolve(options.cwd) };
  // Else the child's spawn fails with ENOENT naming the program, not the folder.
  if (transport.type === 'stdio' && transport.cwd !== null && statSync(transport.cwd, { throwIfNoEntry: false })?.isDirectory() !== true) {
    throw new CliError('USAGE', `--cwd ${transport.cwd} is not a folder`);
  }
  const permissions = [...new Set(options.permission ?? [])];
  const invalid = permissions.find((permission) => !PERMISSION_NAME_PATTERN.test(permission));
  if (invalid !== undefined) throw new CliError('USAGE', `--permission ${JSON.stringify(invalid)} is not a permission name (^[A-Z][A-Z0-9_]*$, such as NET_HTTP)`);
  const input: UpstreamInput = { name, transport, approve: options.approve, permissions, ...(options.prefix === undefined ? {} : { prefix: options.prefix }) };
  // The store's own check of the row, before connecting: a bad name, prefix or URL is refused
  // naming the field, not after a child was spawned or a fetch failed ("fetch failed").
  await new InMemoryToolRegistry().putUpstream(input);
  for (const [option, pairs, separator] of [['--header', options.header, ': '], ['--env', options.env, '=']] as const) {
    for (const [key, value] of pairs) {
      if (SECRET_NAME.test(key) && !value.includes('${')) {
        context.stderr.write(`warning: ${key} is stored as typed, readable in the database and by admins; name a variable instead (${option} '${key}${separator}\${VAR}'), expanded only when connecting\n`);
      }
    }
  }
  // No database file yet: connect before it is created, so an upstream that cannot be reached
  // (a mistyped URL) leaves no empty database behind (none can hold the name already).
  const missing = !isPostgresUrl(context.database) && statSync(context.database, { throwIfNoEntry: false }) === undefined;
  const listed = missing ? await governed(() => definitionsOf(context, { name, transport })) : undefined;
  await withRegistry(context.database, 'readwrite', (registry) =>
    governed(async () => {
      if ((await registry.getUpstream(name)) !== undefined) {
        throw new CliError('UPSTREAM_EXISTS', `an upstream named ${name} exists already (upstream remove ${name} first, or choose another name)`);
      }
      // Connecting before anything is stored: an upstream that cannot be reached is not added.
      const definitions = listed ?? (await definitionsOf(context, { name, transport }));
      let row = await registry.putUpstream(input);
      let approved: readonly ApprovedTool[] = [];
      if (options.approve === 'all') {
        try {
          ({ approved, upstream: row } = await approveUpstreamTools(registry, row, definitions, { all: true }));
        } catch (error) {
          await registry.removeUpstream(name);
          throw error;
        }
      }
      const states = await upstreamStates(registry, row, definitions);
      if (options.json === true) {
        print(context, toJson({ upstream: row, approved, tools: states }));
        return;
      }
      const counts = countUpstreamStates(states);
      print(context, formatStates(states));
      print(
        context,
        `added upstream ${name} (${cell(describeUpstreamTarget(row))}): ${counts.served} served, ${counts.pending} pending` +
          `${counts.unregistrable === 0 ? '' : `, ${counts.unregistrable} refused (unregistrable)`}` +
          `${counts.pending === 0 ? '' : `; approve with: tool-registry upstream approve ${name} --all`}\n`,
      );
    }),
  );
}

function stateRow(state: UpstreamToolState): string[] {
  const approved = state.approved?.version ?? null;
  const versions = state.next_version !== undefined ? `${approved === null ? '' : `${cell(approved)} -> `}${cell(state.next_version)}` : approved === null ? '-' : cell(approved);
  const note =
    state.reason ??
    (state.diff !== undefined ? `${state.diff.changed.join(', ')}${state.diff.compatible ? '' : ' (breaking)'}` : state.approved?.enabled === false ? 'disabled' : '');
  return [state.state, cell(state.tool_name), versions, cell(note)];
}

/** One line per tool: STATE, TOOL, VERSION (approved -> next), NOTE. */
function formatStates(states: readonly UpstreamToolState[]): string {
  return states.length === 0 ? '' : formatTable(['STATE', 'TOOL', 'VERSION', 'NOTE'], states.map(stateRow));
}

/** A pending tool with its difference, as `pending` and `sync` print it. */
function formatPendingTool(upstream: string, state: UpstreamToolState): string {
  const lines = [`${upstream}: ${stateRow(state).filter((text) => text !== '').join('  ')}`];
  const diff = state.diff;
  if (diff?.description != null) lines.push(`  description: ${cell(JSON.stringify(diff.description.before))} -> ${cell(JSON.stringify(diff.description.after))}`);
  if (diff !== undefined && diff.changed.includes('title or annotations')) {
    lines.push(`  title or annotations changed; now: ${cell(JSON.stringify({ title: state.definition?.title ?? null, annotations: state.definition?.annotations ?? null }))}`);
  }
  let text = `${lines.join('\n')}\n`;
  if (diff !== undefined && diff.differences.length > 0) text += formatDifferences(diff.differences).replace(/^/gm, '  ');
  if (state.state === 'new' && state.definition?.description !== undefined) text += `  description: ${cell(JSON.stringify(state.definition.description))}\n`;
  return text;
}

/** `upstream list`: the rows (values as stored: `${VAR}` never expanded) and how many tools each has registered. */
export async function listCommand(context: UpstreamContext, options: { json?: boolean }): Promise<void> {
  await withRegistry(context.database, 'readonly', async (registry) => {
    const rows = await registry.listUpstreams();
    const tools = await Promise.all(rows.map((row) => upstreamRegistrations(registry, row)));
    if (options.json === true) {
      print(context, toJson(rows.map((row, index) => ({ ...row, registered: (tools[index] ?? []).length }))));
      return;
    }
    if (rows.length === 0) {
      print(context, NO_UPSTREAMS);
      return;
    }
    print(
      context,
      formatTable(
        ['NAME', 'TRANSPORT', 'TARGET', 'PREFIX', 'REGISTERED', 'REJECTED', 'UPDATED', 'PERMISSIONS'],
        rows.map((row, index) => [
          row.name,
          row.transport.type,
          cell(describeUpstreamTarget(row)),
          row.prefix === '' ? "''" : cell(row.prefix),
          String((tools[index] ?? []).length),
          String(row.rejected.length),
          row.updated_at,
          row.permissions.length === 0 ? '-' : cell(row.permissions.join(',')),
        ]),
      ),
    );
  });
}

/** `upstream remove NAME [--keep-tools]`: removes its tools (history kept) and then its row. */
export async function removeCommand(context: UpstreamContext, name: string, options: { keepTools?: boolean }): Promise<void> {
  await withRegistry(context.database, 'existing', (registry) =>
    governed(async () => {
      const row = await requireUpstream(registry, name);
      let removed = 0;
      if (options.keepTools !== true) {
        // Tools first: if this stops half way, the row is still there and the command can be run again.
        for (const registration of await upstreamRegistrations(registry, row)) if (await registry.remove(registration.spec.tool_name)) removed += 1;
      }
      await registry.removeUpstream(name);
      const kept = options.keepTools === true ? `; its tools stay registered (tagged upstream:${name}), unserved` : `; removed ${removed} tool${removed === 1 ? '' : 's'} (their history is kept)`;
      print(context, `removed upstream ${name}${kept}\n`);
    }),
  );
}

/** What `sync` and `pending` found for one upstream. */
interface Listing {
  readonly upstream: Upstream;
  readonly states?: readonly UpstreamToolState[];
  readonly error?: { readonly code: string; readonly message: string };
}

async function listingsOf(context: UpstreamContext, registry: CliRegistry, name: string | undefined, touch: boolean): Promise<Listing[]> {
  const rows = name === undefined ? await registry.listUpstreams() : [await requireUpstream(registry, name)];
  const listings: Listing[] = [];
  // One at a time: each may start a child process.
  for (const row of rows) {
    // Touched first, so serving processes re-list even when this process cannot reach it.
    const upstream = touch ? await registry.putUpstream(upstreamInputOf(row)) : row;
    try {
      const definitions = await definitionsOf(context, upstream);
      listings.push({ upstream, states: await upstreamStates(registry, upstream, definitions) });
    } catch (error) {
      if (!(error instanceof GatewayError) || name !== undefined) throw error;
      listings.push({ upstream, error: { code: error.code, message: error.message } });
    }
  }
  return listings;
}

const NO_UPSTREAMS = 'no upstreams (add one with: tool-registry upstream add NAME --url URL | --command "CMD ARG...")\n';

function reportListings(context: UpstreamContext, listings: readonly Listing[], options: { json?: boolean }, verb: 'synced' | 'pending'): void {
  if (options.json === true) {
    const shown = listings.map((one) => ({
      name: one.upstream.name,
      updated_at: one.upstream.updated_at,
      ...(one.states === undefined ? {} : { counts: countUpstreamStates(one.states), tools: verb === 'pending' ? one.states.filter((s) => s.state !== 'served') : one.states }),
      ...(one.error === undefined ? {} : { error: one.error }),
    }));
    print(context, toJson(shown));
  } else {
    let pending = 0;
    for (const one of listings) {
      if (one.states === undefined) continue;
      for (const state of one.states) {
        if (state.state === 'served') continue;
        if (state.state === 'changed' || state.state === 'new') pending += 1;
        print(context, formatPendingTool(one.upstream.name, state));
      }
      if (verb === 'synced') {
        const counts = countUpstreamStates(one.states);
        print(context, `synced ${one.upstream.name}: ${counts.served} served, ${counts.pending} pending, ${counts.gone} gone, ${counts.rejected} rejected\n`);
      }
    }
    // `sync` of no upstreams printed nothing at all.
    if (verb === 'synced' && listings.length === 0) print(context, NO_UPSTREAMS);
    if (verb === 'pending') print(context, pending === 0 ? 'nothing pending\n' : `${pending} pending (approve: tool-registry upstream approve NAME TOOL[@HASH]... | --all, HASH after the + of the version shown: approved only while the upstream lists that definition; reject: tool-registry upstream reject NAME TOOL)\n`);
  }
  const failed = listings.filter((one) => one.error !== undefined);
  for (const one of failed) context.stderr.write(`error ${one.error?.code}: ${one.error?.message}\n`);
  if (failed.length > 0) throw new CliError('UPSTREAM_UNAVAILABLE', `${failed.length} of ${listings.length} upstreams could not be listed (above)`);
}

/** `upstream sync [NAME]`: touches each row (serving processes re-list), lists, prints what is not served. */
export async function syncCommand(context: UpstreamContext, name: string | undefined, options: { json?: boolean }): Promise<void> {
  await withRegistry(context.database, 'existing', (registry) => governed(async () => reportListings(context, await listingsOf(context, registry, name, true), options, 'synced')));
}

/** `upstream pending [NAME]`: lists every upstream (or one) and prints its pending tools with the difference. */
export async function pendingCommand(context: UpstreamContext, name: string | undefined, options: { json?: boolean }): Promise<void> {
  await withRegistry(context.database, 'readonly', (registry) => governed(async () => reportListings(context, await listingsOf(context, registry, name, false), options, 'pending')));
}

/** `upstream approve NAME [TOOL...] [--all] [--force]`. */
export async function approveCommand(context: UpstreamContext, name: string, tools: readonly string[], options: { all?: boolean; force?: boolean; json?: boolean }): Promise<void> {
  await withRegistry(context.database, 'existing', (registry) =>
    governed(async () => {
      const upstream = await requireUpstream(registry, name);
      const definitions = await definitionsOf(context, upstream);
      const result = await approveUpstreamTools(registry, upstream, definitions, { tools, all: options.all === true, force: options.force === true });
      if (options.json === true) {
        print(context, toJson(result));
        return;
      }
      if (result.approved.length === 0) print(context, `nothing pending for upstream ${name}\n`);
      for (const one of result.approved) {
        const change = one.from_version === null ? `${cell(one.version)} (new)` : `${cell(one.from_version)} -> ${cell(one.version)}${one.breaking ? ' (breaking)' : ''}`;
        const forced = one.forced ? "; FORCED past the registry's compatibility policy 'backward'" : '';
        print(context, `approved ${cell(one.tool_name)} ${change}${forced}\n`);
      }
    }),
  );
}

/** `upstream reject NAME TOOL`: the definition listed now is refused; another one is pending again. */
export async function rejectCommand(context: UpstreamContext, name: string, tool: string, options: { json?: boolean }): Promise<void> {
  await withRegistry(context.database, 'existing', (registry) =>
    governed(async () => {
      const upstream = await requireUpstream(registry, name);
      const definitions = await definitionsOf(context, upstream);
      const result = await rejectUpstreamTool(registry, upstream, definitions, tool);
      if (options.json === true) print(context, toJson(result));
      else print(context, `rejected ${cell(result.rejected.tool_name)} (definition ${result.rejected.definition_hash}): not served, not pending until the upstream changes it\n`);
    }),
  );
}
