// Governing an upstream's tools (issue 37): what each tool the upstream lists now is against
// what the registry approved (served, changed, new, gone, rejected, unregistrable), and the
// two operator decisions, approve (register the definition as the tool's next version,
// through the registry's policies) and reject (remember the definition as refused). Pending
// is computed here from the live listing and the registry's specs; it is never stored.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CompatibilityFailedError, PreconditionFailedError, TOOL_NAME_PATTERN, ToolRegistryError, canonicalJson, compareToolSchemas } from '../../index.js';
import type { SchemaDifference, ToolRegistration, ToolRegistry, ToolSpecInput, Upstream, UpstreamInput } from '../../index.js';
import { MissingVariableError, connectUpstream } from './connect.js';
import type { ConnectUpstreamOptions } from './connect.js';
import { MAX_LISTED_TOOLS, MAX_LIST_PAGES, UPSTREAM_TAG_PREFIX, approvedDefinitionHash, crowdedListing, endlessListing, listUpstreamToolsPage, listingRefusal, refusedByGateway, repeatedNameTest, upstreamDefinitionHash, upstreamTag, upstreamToolName, upstreamToolSpec } from './upstream-definition.js';
import type { UpstreamToolDefinition } from './upstream-definition.js';
import { upstreamServingRefusal } from './upstream-tool.js';

/**
 * The gateway's own failures. `UPSTREAM_NOT_FOUND`: no upstream of that name;
 * `UPSTREAM_TOOL_NOT_FOUND`: the upstream does not list that tool (or it cannot be approved or
 * rejected in its state: `context.state`); `UPSTREAM_UNAVAILABLE`: connecting or listing
 * failed (`context.target` names the URL or the command); `VARIABLE_MISSING`: a header or
 * environment value names a `${VAR}` the process does not have.
 */
export type GatewayErrorCode = 'UPSTREAM_NOT_FOUND' | 'UPSTREAM_TOOL_NOT_FOUND' | 'UPSTREAM_UNAVAILABLE' | 'VARIABLE_MISSING';

export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  readonly context: Readonly<Record<string, unknown>>;
  constructor(code: GatewayErrorCode, message: string, context: Record<string, unknown> = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'GatewayError';
    this.code = code;
    this.context = Object.freeze({ ...context });
  }
}

/** Where an upstream is, for messages: its URL, or its command line. Never a header or environment value. */
export function describeUpstreamTarget(upstream: Pick<Upstream, 'transport'>): string {
  const transport = upstream.transport;
  return transport.type === 'http' ? transport.url : transport.command.map((word) => (/^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : JSON.stringify(word))).join(' ');
}

/** Every tool the connected upstream lists (all pages), as the gateway keeps them. */
export async function listUpstreamDefinitions(client: Client, options: { readonly timeoutMs?: number } = {}): Promise<UpstreamToolDefinition[]> {
  const definitions: UpstreamToolDefinition[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const result = await listUpstreamToolsPage(client, cursor, options.timeoutMs === undefined ? undefined : { timeout: options.timeoutMs });
    definitions.push(...result.definitions);
    if (definitions.length > MAX_LISTED_TOOLS) throw crowdedListing(definitions.length);
    cursor = result.nextCursor;
    if (cursor === undefined) return definitions;
  }
  throw endlessListing();
}


/**
 * Connects to the upstream, lists its tools and disconnects (what `upstream add`, `sync` and
 * the API's pending view do; a serving process keeps its connection instead).
 * @throws GatewayError VARIABLE_MISSING, UPSTREAM_UNAVAILABLE (naming the URL or command)
 */
export async function fetchUpstreamDefinitions(upstream: Pick<Upstream, 'name' | 'transport'>, options: ConnectUpstreamOptions = {}): Promise<UpstreamToolDefinition[]> {
  const target = describeUpstreamTarget(upstream);
  let connection;
  try {
    connection = await connectUpstream(upstream, options);
  } catch (error) {
    if (error instanceof MissingVariableError) {
      throw new GatewayError('VARIABLE_MISSING', `cannot connect to upstream ${upstream.name}: ${error.message}`, { upstream: upstream.name, variable: error.variable }, error);
    }
    throw new GatewayError('UPSTREAM_UNAVAILABLE', `cannot connect to upstream ${upstream.name} (${target}): ${reasonOf(error)}`, { upstream: upstream.name, target }, error);
  }
  try {
    return await listUpstreamDefinitions(connection.client, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs });
  } catch (error) {
    throw new GatewayError('UPSTREAM_UNAVAILABLE', `upstream ${upstream.name} (${target}) did not list its tools: ${listingRefusal(error) ?? reasonOf(error)}`, { upstream: upstream.name, target }, error);
  } finally {
    await connection.close().catch(() => {});
  }
}

function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}

/** What an upstream tool is now. Only `served` tools are listed and callable through the gateway. */
export type UpstreamToolStateName = 'served' | 'changed' | 'new' | 'gone' | 'rejected' | 'unregistrable';

/** The approved registration of an upstream tool, as a state shows it. */
export interface ApprovedUpstreamTool {
  readonly version: string | null;
  /** The hash the version carries (`approvedDefinitionHash`); null for a version the gateway did not write. */
  readonly definition_hash: string | null;
  readonly enabled: boolean;
}

/** Between the approved definition and the one listed now. */
export interface UpstreamToolDiff {
  /** Which parts differ: `description`, `input_schema`, `output_schema`; `title or annotations` when none of those do (the spec does not keep them, the hash does). */
  readonly changed: readonly string[];
  readonly description: { readonly before: string | null; readonly after: string | null } | null;
  /** `compareToolSchemas(approved spec, new spec)`: `compatible: false` makes approving it a major version. */
  readonly compatible: boolean;
  readonly differences: readonly SchemaDifference[];
}

export interface UpstreamToolState {
  /** The tool's name upstream. */
  readonly tool: string;
  /** The registry's name: prefix + `tool`. */
  readonly tool_name: string;
  readonly state: UpstreamToolStateName;
  /** The definition listed now (absent for `gone`). */
  readonly definition?: UpstreamToolDefinition;
  /** Its `upstreamDefinitionHash` (absent for `gone`). */
  readonly definition_hash?: string;
  /** The registration under `tool_name` tagged `upstream:NAME`, if any. */
  readonly approved?: ApprovedUpstreamTool;
  /** `changed` (and `rejected` with a registration): approved → now. */
  readonly diff?: UpstreamToolDiff;
  /** `changed`, `new` and `rejected`: the version `approve` would register (`1.0.0+HASH` for a new tool). */
  readonly next_version?: string;
  /** `unregistrable`: why the tool cannot be registered (it is refused, never renamed). */
  readonly reason?: string;
}

/** Counts of an upstream's tools by state. */
export type UpstreamToolCounts = Readonly<Record<UpstreamToolStateName, number>> & { readonly pending: number };

/** The registrations that belong to the upstream: tagged `upstream:NAME`, disabled ones too. */
export async function upstreamRegistrations(registry: ToolRegistry, upstream: Pick<Upstream, 'name'>): Promise<ToolRegistration[]> {
  return registry.listAll({ includeDisabled: true, tags: [upstreamTag(upstream.name)] });
}

function approvedOf(registration: ToolRegistration): ApprovedUpstreamTool {
  return { version: registration.spec.version, definition_hash: approvedDefinitionHash(registration) ?? null, enabled: registration.enabled };
}

/** `1.4.2+abc` → [1, 4, 2]; a version the gateway did not write → undefined. */
function semverParts(version: string | null): [number, number, number] | undefined {
  const match = version === null ? null : /^(\d+)\.(\d+)\.(\d+)(?:[-+]|$)/.exec(version);
  return match === null ? undefined : [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** The version `approve` gives a definition: `1.0.0` for a new tool, major+1 for a breaking change, else minor+1; `+HASH` appended. */
export function nextUpstreamVersion(registration: Pick<ToolRegistration, 'spec'> | undefined, definition: UpstreamToolDefinition, breaking: boolean): string {
  const hash = upstreamDefinitionHash(definition);
  const parts = registration === undefined ? undefined : semverParts(registration.spec.version);
  if (parts === undefined) return `1.0.0+${hash}`;
  const [major, minor] = parts;
  return breaking ? `${major + 1}.0.0+${hash}` : `${major}.${minor + 1}.0+${hash}`;
}

function diffOf(registration: ToolRegistration, spec: ToolSpecInput): UpstreamToolDiff {
  const comparison = compareToolSchemas(registration.spec, { input_schema: spec.input_schema, output_schema: spec.output_schema ?? {} });
  const before = registration.spec.description;
  const after = spec.description ?? null;
  const changed: string[] = [];
  if (before !== after) changed.push('description');
  if (canonicalJson(registration.spec.input_schema) !== canonicalJson(spec.input_schema)) changed.push('input_schema');
  if (canonicalJson(registration.spec.output_schema) !== canonicalJson(spec.output_schema ?? {})) changed.push('output_schema');
  if (changed.length === 0) changed.push('title or annotations');
  return { changed, description: before === after ? null : { before, after }, compatible: comparison.compatible, differences: comparison.differences };
}

/**
 * Each tool's state, from the upstream's row, what it lists now and its registrations
 * (`upstreamRegistrations`). Pure. Order: the upstream's listing order, then the gone tools by name.
 * - `served`: registered with the tag and the listed definition's hash (enabled or not: `approved.enabled`);
 * - `changed`: registered with another hash: pending, with the diff and the next version;
 * - `new`: not registered: pending;
 * - `rejected`: changed or new, but the row rejects exactly this definition;
 * - `gone`: registered with the tag, not listed any more;
 * - `unregistrable`: prefix + name is not a tool name (TOOL_NAME_PATTERN), the name is listed
 *   twice, a tool without the tag holds the name, or a serving process would not serve it
 *   (`upstreamServingRefusal`: a schema ajv cannot compile): refused as it is, never renamed.
 */
export function computeUpstreamStates(
  upstream: Pick<Upstream, 'name' | 'prefix' | 'rejected'>,
  definitions: readonly UpstreamToolDefinition[],
  registrations: readonly ToolRegistration[],
  /** Registrations of the names without the upstream's tag (a clash), when the caller looked them up. */
  others: ReadonlyMap<string, ToolRegistration> = new Map(),
): UpstreamToolState[] {
  const tag = upstreamTag(upstream.name);
  const byName = new Map(registrations.filter((one) => one.spec.tags.includes(tag)).map((one) => [one.spec.tool_name, one]));
  const repeated = repeatedNameTest();
  const listed = new Set<string>();
  const states: UpstreamToolState[] = [];
  for (const definition of definitions) {
    const toolName = upstreamToolName(upstream, definition);
    const hash = upstreamDefinitionHash(definition);
    const base = { tool: definition.name, tool_name: toolName, definition, definition_hash: hash };
    if (repeated(definition)) {
      states.push({ ...base, state: 'unregistrable', reason: `the upstream lists ${JSON.stringify(definition.name)} more than once; only the first is governed` });
      continue;
    }
    if (definition.refused !== undefined) {
      const reason = refusedByGateway(definition.refused) ? `the upstream's entry is refused: ${definition.refused}` : `the upstream's entry is not a valid MCP tool (${definition.refused}); MCP clients refuse it`;
      states.push({ ...base, state: 'unregistrable', reason });
      continue;
    }
    if (!TOOL_NAME_PATTERN.test(toolName)) {
      states.push({ ...base, state: 'unregistrable', reason: `${JSON.stringify(toolName)} is not a tool name (1-128 characters of A-Z a-z 0-9 _ - .)` });
      continue;
    }
    listed.add(toolName);
    const registration = byName.get(toolName);
    const clash = others.get(toolName);
    if (registration === undefined && clash !== undefined && !clash.spec.tags.includes(tag)) {
      // Whose it is: another upstream's (two upstreams under one prefix) is not "a tool of its own".
      const owner = clash.spec.tags.find((one) => one.startsWith(UPSTREAM_TAG_PREFIX));
      states.push({ ...base, state: 'unregistrable', reason: `${JSON.stringify(toolName)} is registered already, without the tag ${tag} (${owner === undefined ? 'a tool of its own' : `a tool of ${owner}`}); remove it or give the upstream another prefix` });
      continue;
    }
    // What a serving process would refuse to serve (a schema ajv cannot compile) is refused
    // here too, for the same reason: no report counts it as served, `approve` does not register it.
    const refusal = upstreamServingRefusal(upstream, definition);
    if (refusal !== undefined) {
      states.push({ ...base, state: 'unregistrable', ...(registration === undefined ? {} : { approved: approvedOf(registration) }), reason: `a serving process does not serve it: ${refusal}` });
      continue;
    }
    const rejected = upstream.rejected.some((one) => one.tool === definition.name && one.definition === hash);
    if (registration === undefined) {
      states.push({ ...base, state: rejected ? 'rejected' : 'new', next_version: nextUpstreamVersion(undefined, definition, false) });
      continue;
    }
    const approved = approvedOf(registration);
    if (approved.definition_hash === hash) {
      states.push({ ...base, state: 'served', approved });
      continue;
    }
    const diff = diffOf(registration, upstreamToolSpec(upstream, definition, '0.0.0'));
    states.push({ ...base, state: rejected ? 'rejected' : 'changed', approved, diff, next_version: nextUpstreamVersion(registration, definition, !diff.compatible) });
  }
  const gone = [...byName.values()].filter((one) => !listed.has(one.spec.tool_name)).sort((a, b) => (a.spec.tool_name < b.spec.tool_name ? -1 : 1));
  for (const registration of gone) {
    const name = registration.spec.tool_name;
    states.push({ tool: name.startsWith(upstream.prefix) ? name.slice(upstream.prefix.length) : name, tool_name: name, state: 'gone', approved: approvedOf(registration) });
  }
  return states;
}

/** How many tools are in each state; `pending` = changed + new. */
export function countUpstreamStates(states: readonly UpstreamToolState[]): UpstreamToolCounts {
  const counts = { served: 0, changed: 0, new: 0, gone: 0, rejected: 0, unregistrable: 0 };
  for (const one of states) counts[one.state] += 1;
  return { ...counts, pending: counts.changed + counts.new };
}

/**
 * The states of an upstream's tools given what it lists now: reads the registry (its tagged
 * registrations, and any untagged tool holding one of the names).
 */
export async function upstreamStates(registry: ToolRegistry, upstream: Upstream, definitions: readonly UpstreamToolDefinition[]): Promise<UpstreamToolState[]> {
  const registrations = await upstreamRegistrations(registry, upstream);
  const tagged = new Set(registrations.map((one) => one.spec.tool_name));
  const others = new Map<string, ToolRegistration>();
  for (const definition of definitions) {
    const name = upstreamToolName(upstream, definition);
    if (tagged.has(name) || !TOOL_NAME_PATTERN.test(name)) continue;
    const found = await registry.get(name);
    if (found !== undefined) others.set(name, found);
  }
  return computeUpstreamStates(upstream, definitions, registrations, others);
}

/** The upstream of that name. @throws GatewayError UPSTREAM_NOT_FOUND */
export async function requireUpstream(registry: ToolRegistry, name: string): Promise<Upstream> {
  const upstream = await registry.getUpstream(name);
  if (upstream === undefined) throw new GatewayError('UPSTREAM_NOT_FOUND', `no upstream named ${JSON.stringify(name)} (upstream list shows them)`, { upstream: name });
  return upstream;
}

/** The row as `putUpstream` takes it back: the same content (which moves `updated_at`), or with other `rejected`. */
export function upstreamInputOf(upstream: Upstream, rejected: Upstream['rejected'] = upstream.rejected): UpstreamInput {
  return { name: upstream.name, transport: upstream.transport, prefix: upstream.prefix, approve: upstream.approve, permissions: upstream.permissions, rejected };
}

/** What `approveUpstreamTools` is asked. */
export interface ApproveOptions {
  /**
   * Pending (or rejected) tools to approve, by their names upstream or in the registry (prefix +
   * name). `TOOL@HASH` (the `definition_hash` pending showed) approves the tool only while the
   * upstream lists that definition: another one now is refused, naming the tool (no tool name
   * has an `@`).
   */
  readonly tools?: readonly string[];
  /** Every pending tool (changed and new). */
  readonly all?: boolean;
  /**
   * Register a breaking change that the registry's compatibility policy refuses, with the
   * registry's `allowIncompatible` override (each such approval is reported `forced`).
   */
  readonly force?: boolean;
}

/** One approved tool. */
export interface ApprovedTool {
  readonly tool: string;
  readonly tool_name: string;
  /** The version before (null for a new tool). */
  readonly from_version: string | null;
  readonly version: string;
  /** The schemas changed incompatibly (a major version). */
  readonly breaking: boolean;
  /** Registered past the registry's compatibility policy with `force`; its version then ends `+HASH.forced`. */
  readonly forced: boolean;
}

export interface ApproveResult {
  readonly approved: readonly ApprovedTool[];
  /** The upstream's row after the approval (its `updated_at` moved, so serving processes re-list). */
  readonly upstream: Upstream;
}

/** A definition hash as `upstreamDefinitionHash` writes it. */
const DEFINITION_HASH = /^[0-9a-f]{16}$/;

/** `TOOL@HASH` split (a tool name has no `@`); any other text is a tool name alone. */
function pinnedTool(given: string): { readonly tool: string; readonly hash?: string } {
  const at = given.lastIndexOf('@');
  const hash = given.slice(at + 1);
  return at > 0 && DEFINITION_HASH.test(hash) ? { tool: given.slice(0, at), hash } : { tool: given };
}

/**
 * The state of the tool named `tool`: by its name upstream, else by its name in the registry
 * (prefix + name, as `pending` prints it); a listed one before a gone one.
 */
function findState(states: readonly UpstreamToolState[], tool: string): UpstreamToolState | undefined {
  const named = (one: UpstreamToolState): boolean => one.tool === tool;
  const registered = (one: UpstreamToolState): boolean => one.tool_name === tool;
  for (const matches of [named, registered]) {
    const state = states.find((one) => matches(one) && one.state !== 'gone') ?? states.find(matches);
    if (state !== undefined) return state;
  }
  return undefined;
}

/**
 * Approves tools of an upstream: registers each one's listed definition as its next version
 * (`nextUpstreamVersion`) in one all-or-nothing `registerMany`, through the registry's
 * policies; a rejected definition approved this way is no longer rejected. The row is touched.
 * @throws GatewayError UPSTREAM_TOOL_NOT_FOUND (a tool not listed, or served, gone or
 *   unregistrable: `context.state`); PRECONDITION_FAILED (`PreconditionFailedError`) for a
 *   `TOOL@HASH` whose hash is not the listed definition's (`context.definition_hash`, `listed_hash`);
 *   TypeError when neither `tools` nor `all` is given; the registry's COMPATIBILITY_FAILED
 *   (message: `force` registers it anyway), VERSION_DOWNGRADE, ...
 */
export async function approveUpstreamTools(
  registry: ToolRegistry,
  upstream: Upstream,
  definitions: readonly UpstreamToolDefinition[],
  options: ApproveOptions,
): Promise<ApproveResult> {
  const all = options.all === true;
  const named = options.tools ?? [];
  if (!all && named.length === 0) throw new TypeError('approveUpstreamTools(): name the tools, or pass all: true');
  const states = await upstreamStates(registry, upstream, definitions);
  const chosen: UpstreamToolState[] = [];
  for (const given of new Set(named)) {
    const { tool, hash } = pinnedTool(given);
    const state = findState(states, tool);
    if (state === undefined) {
      const hint = given.includes('@') ? ' (a definition hash after @ is 16 hex digits, as pending shows it)' : '';
      throw new GatewayError('UPSTREAM_TOOL_NOT_FOUND', `upstream ${upstream.name} does not list a tool ${JSON.stringify(tool)}${hint}`, { upstream: upstream.name, tool });
    }
    if (state.state !== 'changed' && state.state !== 'new' && state.state !== 'rejected') {
      const why = state.state === 'served' ? 'its definition is approved and served already' : state.state === 'gone' ? 'the upstream no longer lists it' : (state.reason ?? 'it cannot be registered');
      throw new GatewayError('UPSTREAM_TOOL_NOT_FOUND', `cannot approve ${tool} of upstream ${upstream.name}: ${why}`, { upstream: upstream.name, tool, state: state.state });
    }
    // The upstream changed it between the operator's reading and this listing: what they read is not what would be registered.
    if (hash !== undefined && hash !== state.definition_hash) {
      const now = state.definition_hash as string;
      throw new PreconditionFailedError(`cannot approve ${tool} of upstream ${upstream.name}: the upstream lists another definition of it now (hash ${now}, not ${hash}); nothing was approved (read it again: tool-registry upstream pending ${upstream.name})`, {
        tool_name: state.tool_name,
        expected: hash,
        actual: now,
        exists: true,
        upstream: upstream.name,
        tool,
        definition_hash: hash,
        listed_hash: now,
      });
    }
    if (!chosen.includes(state)) chosen.push(state);
  }
  if (all) for (const state of states) if ((state.state === 'changed' || state.state === 'new') && !chosen.includes(state)) chosen.push(state);
  if (chosen.length === 0) return { approved: [], upstream };
  const policy = await registry.getPolicy();
  const force = options.force === true;
  // 'semver-major' accepts the major version a breaking change gets; only 'backward' needs the override.
  const refusesBreaking = policy.compatibility === 'backward';
  const planned = chosen.map((state) => {
    const breaking = state.diff !== undefined && !state.diff.compatible;
    // A forced approval says so in its version (`+HASH.forced`): history and the change feed show it.
    const forced = force && breaking && refusesBreaking;
    const next = state.next_version as string;
    const spec = upstreamToolSpec(upstream, state.definition as UpstreamToolDefinition, next.slice(0, next.indexOf('+')), { forced });
    return { state, spec, version: spec.version as string, breaking, forced, from: state.approved?.version ?? null };
  });
  try {
    await registry.registerMany(
      planned.map((one) => one.spec),
      force ? { allowIncompatible: true } : {},
    );
  } catch (error) {
    if (error instanceof ToolRegistryError && error.code === 'COMPATIBILITY_FAILED' && !force) {
      throw new CompatibilityFailedError(`${error.message}; nothing was approved (approving with force registers it anyway, past the policy)`, error.context as ConstructorParameters<typeof CompatibilityFailedError>[1]);
    }
    throw error;
  }
  const approvedTools = new Set(planned.map((one) => one.state.tool));
  const row = await registry.putUpstream(upstreamInputOf(upstream, upstream.rejected.filter((one) => !approvedTools.has(one.tool))));
  return {
    approved: planned.map((one) => ({
      tool: one.state.tool,
      tool_name: one.state.tool_name,
      from_version: one.from,
      version: one.version,
      breaking: one.breaking,
      forced: one.forced,
    })),
    upstream: row,
  };
}

/**
 * Rejects the definition an upstream lists now for one pending tool: it stays unserved and is
 * no longer pending, until the upstream lists another definition (pending again). The row is
 * written (`rejected`), which moves `updated_at`.
 * @throws GatewayError UPSTREAM_TOOL_NOT_FOUND (not listed, or served, gone or unregistrable)
 */
export async function rejectUpstreamTool(registry: ToolRegistry, upstream: Upstream, definitions: readonly UpstreamToolDefinition[], tool: string): Promise<{ readonly rejected: UpstreamToolState; readonly upstream: Upstream }> {
  const states = await upstreamStates(registry, upstream, definitions);
  const state = findState(states, tool);
  if (state === undefined) throw new GatewayError('UPSTREAM_TOOL_NOT_FOUND', `upstream ${upstream.name} does not list a tool ${JSON.stringify(tool)}`, { upstream: upstream.name, tool });
  if (state.state !== 'changed' && state.state !== 'new' && state.state !== 'rejected') {
    const why =
      state.state === 'served'
        ? `its definition is approved and served (to stop serving it: tool-registry disable ${state.tool_name})`
        : state.state === 'gone'
          ? 'the upstream no longer lists it'
          : (state.reason ?? 'it cannot be registered');
    throw new GatewayError('UPSTREAM_TOOL_NOT_FOUND', `cannot reject ${tool} of upstream ${upstream.name}: ${why}`, { upstream: upstream.name, tool, state: state.state });
  }
  const rejected = [...upstream.rejected.filter((one) => one.tool !== state.tool), { tool: state.tool, definition: state.definition_hash as string }];
  const row = await registry.putUpstream(upstreamInputOf(upstream, rejected));
  return { rejected: { ...state, state: 'rejected' }, upstream: row };
}
