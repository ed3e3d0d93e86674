// What the gateway makes of an upstream's tool: the spec the registry stores, and the hash
// that says whether the upstream still serves the definition that was approved. The hash
// covers everything a model or a policy sees (title, description, both schemas,
// annotations), so a "rug pull" (a changed description) is a different definition.
import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListToolsResultSchema, PaginatedResultSchema, ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '../../index.js';
import type { ToolRegistration, ToolSpecInput, Upstream } from '../../index.js';

/** A tool as an upstream's `tools/list` describes it (the fields the gateway keeps). */
export interface UpstreamToolDefinition {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly annotations?: Readonly<Record<string, unknown>>;
  /**
   * Set when the upstream's entry is not a valid MCP tool (the SDK's client refuses it, e.g. an
   * `inputSchema` not of type `object`), its JSON is over `MAX_DEFINITION_BYTES` (`OVERSIZED_DEFINITION` begins the reason), its name is empty (`EMPTY_TOOL_NAME`), or no hash can be
   * taken of it (`UNHASHABLE_DEFINITION` begins the reason): why. Such an entry is unregistrable, never served;
   * `name` is its name when it has one (else ''), `inputSchema` is `{}`.
   */
  readonly refused?: string;
}

/**
 * The definition of a tool as an upstream's `tools/list` gave it: the fields the hash covers,
 * absent ones left out. Every path that lists an upstream (add, sync, pending, a serving
 * process) reads it through this one function, so they all hash the same definition.
 */
export function definitionOf(tool: { readonly name: string; readonly [field: string]: unknown }): UpstreamToolDefinition {
  const definition: { -readonly [K in keyof UpstreamToolDefinition]: UpstreamToolDefinition[K] } = {
    name: tool.name,
    inputSchema: (tool.inputSchema ?? { type: 'object' }) as Record<string, unknown>,
  };
  if (typeof tool.title === 'string') definition.title = tool.title;
  if (typeof tool.description === 'string') definition.description = tool.description;
  if (tool.outputSchema !== undefined) definition.outputSchema = tool.outputSchema as Record<string, unknown>;
  if (tool.annotations !== undefined) definition.annotations = tool.annotations as Record<string, unknown>;
  return definition;
}

/**
 * Why the SDK's client refused a `tools/list` answer, in one line (its ZodError's message is the
 * issues as multi-line JSON): the first issue's place and message, and how many more.
 * Undefined for any other error.
 */
export function listingRefusal(error: unknown): string | undefined {
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (!(error instanceof Error) || !Array.isArray(issues) || issues.length === 0) return undefined;
  const first = issues[0] as { path?: readonly PropertyKey[]; message?: string };
  const place = (first.path ?? []).map(String).join('.');
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return `${place === '' ? 'the answer' : place}: ${first.message ?? 'is invalid'}${more}; the SDK's client refuses the whole listing for it`;
}

/** Pages of `tools/list` followed to the end, bounded (an upstream that pages forever is an error). */
export const MAX_LIST_PAGES = 100;

/**
 * Tools one upstream may list: a listing of more is an error, in the commands and a serving
 * process alike (the serving one used to stop reading pages here, silently leaving the rest
 * of what `add` had registered unserved).
 */
export const MAX_LISTED_TOOLS = 10_000;

/** The error of a listing of more than `MAX_LISTED_TOOLS` tools (`count` read so far). */
export function crowdedListing(count: number): Error {
  return new Error(`tools/list listed ${count} tools, more than the ${MAX_LISTED_TOOLS} one upstream may list; giving up`);
}

/** The error of a listing that gave a next page `MAX_LIST_PAGES` times. */
export function endlessListing(): Error {
  return new Error(`tools/list gave a next page ${MAX_LIST_PAGES} times; giving up`);
}

/** One page of an upstream's `tools/list`: its definitions (refused entries included), the tools it runs only as tasks, the next cursor. */
export interface UpstreamToolsPage {
  readonly definitions: UpstreamToolDefinition[];
  readonly taskRequired: string[];
  readonly nextCursor: string | undefined;
}

/**
 * Lists one page. The SDK's client refuses a whole page for one entry that is not a valid MCP
 * tool; then the page is read again as it is and each entry checked alone (ToolSchema), so one
 * broken tool is refused by itself (`refused`) and the others are governed as ever. A page
 * that is no tools list at all still throws the client's error.
 */
export async function listUpstreamToolsPage(client: Client, cursor: string | undefined, options: { readonly timeout?: number } | undefined): Promise<UpstreamToolsPage> {
  const params = cursor === undefined ? {} : { cursor };
  let tools: readonly unknown[];
  let nextCursor: string | undefined;
  try {
    // Not client.listTools: it compiles every outputSchema (for its own callTool, which the
    // gateway does not use for these) and throws for one ajv refuses, failing the whole
    // listing; such a tool is refused alone here (`upstreamServingRefusal`), as one with such an inputSchema is.
    const result = await client.request({ method: 'tools/list', params }, ListToolsResultSchema, options);
    tools = result.tools;
    nextCursor = result.nextCursor;
  } catch (error) {
    if (listingRefusal(error) === undefined) throw error;
    const raw = await client.request({ method: 'tools/list', params }, PaginatedResultSchema, options);
    if (!Array.isArray(raw.tools)) throw error;
    tools = raw.tools;
    nextCursor = raw.nextCursor;
  }
  const definitions: UpstreamToolDefinition[] = [];
  const taskRequired: string[] = [];
  for (const entry of tools) {
    // First of all: a definition past the bound is never parsed again, hashed or compiled.
    const oversized = oversizedReason(entry);
    if (oversized !== undefined) {
      const name = (entry as { name?: unknown } | null)?.name;
      definitions.push({ name: typeof name === 'string' ? name : '', inputSchema: {}, refused: oversized });
      continue;
    }
    const parsed = ToolSchema.safeParse(entry);
    if (!parsed.success) {
      const name = (entry as { name?: unknown } | null)?.name;
      definitions.push({ name: typeof name === 'string' ? name : '', inputSchema: {}, refused: listingRefusal(parsed.error)?.replace(/; the SDK's client refuses .*$/, '') ?? parsed.error.message });
      continue;
    }
    // The SDK's schema takes '', which the prefix alone would make a tool name (`NAME_`): refused, never renamed.
    if (parsed.data.name === '') {
      definitions.push({ name: '', inputSchema: {}, refused: EMPTY_TOOL_NAME });
      continue;
    }
    const definition = definitionOf(parsed.data);
    const unhashable = unhashableReason(definition);
    if (unhashable !== undefined) {
      definitions.push({ name: definition.name, inputSchema: {}, refused: unhashable });
      continue;
    }
    definitions.push(definition);
    if (parsed.data.execution?.taskSupport === 'required') taskRequired.push(parsed.data.name);
  }
  return { definitions, taskRequired, nextCursor };
}

/** How the reason of a definition that cannot be hashed begins (`refused`): a valid MCP tool, but no JSON data the registry can hold. */
export const UNHASHABLE_DEFINITION = 'its definition is not JSON data the gateway can hash';

/** The reason (`refused`) of an entry whose name is empty: MCP's tool names are 1 to 128 characters. */
export const EMPTY_TOOL_NAME = 'its name is empty (an MCP tool name is 1 to 128 characters)';

/**
 * The most bytes of JSON one listed tool's definition may have (the whole entry as listed: name,
 * title, description, schemas, annotations, anything else): 1 MiB, the server's default request
 * body limit (`serve --max-body`), so no tool the gateway registers is one that could not be
 * registered over HTTP at the defaults. A 9.6 MB schema of 115,000 properties, within the 10 MiB
 * of one message, made `upstream sync` and `pending` take 15-18 s, 20 CPU-s and 1.7 GB (ajv
 * compiling it); the registry itself sets no size on a spec.
 */
export const MAX_DEFINITION_BYTES = 1024 * 1024;

/** How the reason of a definition over `MAX_DEFINITION_BYTES` begins (`refused`). */
export const OVERSIZED_DEFINITION = 'its definition is too large';

/** Whether `refused` is the gateway's own refusal of a valid MCP entry (said as is), not the SDK schema's. */
export function refusedByGateway(refused: string): boolean {
  return refused === EMPTY_TOOL_NAME || refused.startsWith(UNHASHABLE_DEFINITION) || refused.startsWith(OVERSIZED_DEFINITION);
}

/**
 * Why a listed entry is refused for its size (its JSON over `MAX_DEFINITION_BYTES` bytes of
 * UTF-8), or undefined. Asked before anything else is done with the entry: its schema check,
 * its hash, ajv's compile.
 */
function oversizedReason(entry: unknown): string | undefined {
  let text: string | undefined;
  try {
    text = JSON.stringify(entry);
  } catch {
    return undefined; // nested too deep for JSON.stringify: the checks after this one refuse it
  }
  // A UTF-8 byte is at most one character: a text this short is within the bound.
  if (text === undefined || text.length <= MAX_DEFINITION_BYTES / 3) return undefined;
  const bytes = Buffer.byteLength(text, 'utf8');
  return bytes <= MAX_DEFINITION_BYTES ? undefined : `${OVERSIZED_DEFINITION}: ${bytes} bytes of JSON, over the ${MAX_DEFINITION_BYTES} one tool's definition may have (the server's default request body limit)`;
}

/**
 * The nesting a definition may have: canonicalJson refuses 1,000 levels, and the gateway hashes
 * definitions inside other values too (a listing is an array of them: one level more).
 */
const MAX_DEFINITION_DEPTH = 900;

/**
 * Why a listed definition cannot be hashed (canonicalJson throws on it: a number JSON.parse
 * read as infinite, `1e999`, or nesting near 1,000 levels), or undefined. Such an entry is
 * refused alone: hashed later, it threw out of a serving process's listing (an unhandled
 * rejection ended `serve` and `mcp`) and out of `upstream add` (`error INTERNAL`).
 */
function unhashableReason(definition: UpstreamToolDefinition): string | undefined {
  const where = whereUnhashable(definitionBody(definition), '', 0);
  return where === undefined ? undefined : `${UNHASHABLE_DEFINITION} (${where})`;
}

/** The first place in parsed JSON that canonicalJson refuses, or would inside a listing: `path: what` (never deeper on the stack than MAX_DEFINITION_DEPTH). */
function whereUnhashable(value: unknown, path: string, depth: number): string | undefined {
  if (typeof value === 'number') {
    // A path hundreds of keys long says less than its first key and its depth.
    const place = path.length > 120 ? `${path.slice(0, path.indexOf('.'))} at depth ${depth}` : path;
    return Number.isFinite(value) ? undefined : `${place}: a number out of range, read as ${value}`;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth >= MAX_DEFINITION_DEPTH) return `${path.slice(0, path.indexOf('.'))}: nested ${MAX_DEFINITION_DEPTH} levels deep or more`;
  for (const [key, item] of Object.entries(value)) {
    const where = whereUnhashable(item, path === '' ? key : `${path}.${key}`, depth + 1);
    if (where !== undefined) return where;
  }
  return undefined;
}

/** What the tag of an upstream's tools begins with: `upstream:NAME` (`upstreamTag`). */
export const UPSTREAM_TAG_PREFIX = 'upstream:';

/** The tag every tool of upstream NAME carries. */
export function upstreamTag(upstreamName: string): string {
  return `${UPSTREAM_TAG_PREFIX}${upstreamName}`;
}

/** The definition's fields the hash covers, absent ones left out (so a missing title and no title are one definition). */
function definitionBody(definition: UpstreamToolDefinition): Record<string, unknown> {
  const body: Record<string, unknown> = { name: definition.name, inputSchema: definition.inputSchema };
  if (definition.title !== undefined) body.title = definition.title;
  if (definition.description !== undefined) body.description = definition.description;
  if (definition.outputSchema !== undefined) body.outputSchema = definition.outputSchema;
  if (definition.annotations !== undefined) body.annotations = definition.annotations;
  return body;
}

/** The first 16 hex digits of SHA-256 over the definition's canonical JSON: equal exactly when the definitions are. */
export function upstreamDefinitionHash(definition: UpstreamToolDefinition): string {
  return createHash('sha256').update(canonicalJson(definitionBody(definition))).digest('hex').slice(0, 16);
}

/**
 * A test asked of a listing's entries in order: true for one whose name an earlier entry had.
 * Only the first entry of a name counts, refused or not, for `sync` and the serving gateway
 * alike (two of one name, identical and so both approved, made the live set refuse the whole list).
 */
export function repeatedNameTest(): (definition: Pick<UpstreamToolDefinition, 'name'>) => boolean {
  const seen = new Set<string>();
  return (definition) => {
    if (seen.has(definition.name)) return true;
    seen.add(definition.name);
    return false;
  };
}

/** The registry's name of an upstream tool: the upstream's prefix + the upstream's name. */
export function upstreamToolName(upstream: Pick<Upstream, 'prefix'>, definition: Pick<UpstreamToolDefinition, 'name'>): string {
  return upstream.prefix + definition.name;
}

/**
 * The build metadata identifier that marks a version approved past the registry's compatibility
 * policy (`upstream approve --force`): `2.0.0+HASH.forced`. It is in the version, so history,
 * the change feed, `get` and the console show that the approval was forced; SemVer ignores
 * build metadata, so the policies judge the version as `2.0.0`.
 */
export const FORCED_BUILD_MARK = 'forced';

/**
 * The definition hash a registered upstream tool was approved with: the first identifier of
 * its version's build metadata (`1.2.0+HASH`, `2.0.0+HASH.forced`), or undefined for a version
 * the gateway did not write.
 */
export function approvedDefinitionHash(registration: Pick<ToolRegistration, 'spec'>): string | undefined {
  const version = registration.spec.version;
  const plus = version === null ? -1 : version.indexOf('+');
  return plus < 0 ? undefined : (version as string).slice(plus + 1).split('.')[0];
}

/** Whether a registered upstream tool's version says it was approved with `--force` past the compatibility policy. */
export function approvedByForce(registration: Pick<ToolRegistration, 'spec'>): boolean {
  const version = registration.spec.version;
  const plus = version === null ? -1 : version.indexOf('+');
  return plus >= 0 && (version as string).slice(plus + 1).split('.').includes(FORCED_BUILD_MARK);
}

/**
 * The spec an upstream tool is registered as. `version` is SemVer with the definition's hash as
 * build metadata (`1.0.0+HASH`; `+HASH.forced` with `forced`): the hash changes exactly when the
 * definition does, and the SemVer part lets the registry's `versionOrder`/`compatibility`
 * policies judge the change.
 */
export function upstreamToolSpec(upstream: Pick<Upstream, 'name' | 'prefix'>, definition: UpstreamToolDefinition, semver: string, options: { readonly forced?: boolean } = {}): ToolSpecInput {
  return {
    tool_name: upstreamToolName(upstream, definition),
    version: `${semver}+${upstreamDefinitionHash(definition)}${options.forced === true ? `.${FORCED_BUILD_MARK}` : ''}`,
    description: definition.description ?? null,
    input_schema: { ...definition.inputSchema } as ToolSpecInput['input_schema'],
    output_schema: (definition.outputSchema === undefined ? {} : { ...definition.outputSchema }) as ToolSpecInput['output_schema'],
    tags: [upstreamTag(upstream.name)],
  };
}
