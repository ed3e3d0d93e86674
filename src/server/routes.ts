// The registry's routes (everything under /v1 that a namespace has). Thin: parse, call the
// library, map the result. Errors are thrown and answered at one edge (problems.ts).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  LINT_PROVIDERS,
  StorageUnavailableError,
  ToolNotFoundError,
  ToolRegistryError,
  checkSpecs,
  checkToolPermission,
  diffVersions,
  lintTools,
  registerManyWithActions,
  registerWithAction,
  toAiSdkTools,
  toAnthropicTools,
  toGeminiTools,
  toMcpTools,
  toOpenAITools,
} from '../index.js';
import type { DeprecationInput, LintProvider, RegistrationOptions, ToolPolicy, ToolRegistration, ToolSpecInput, Upstream, WriteOptions } from '../index.js';
import { HttpProblem } from './problems.js';
import { jsonWithRequestId } from './request-id.js';
import { json } from './route-table.js';
import type { RouteContext, RouteDefinition } from './route-table.js';
import {
  AnyJsonSchema,
  ChangesPageSchema,
  CheckReportSchema,
  DeprecationRequestSchema,
  HistorySchema,
  ImportReportSchema,
  LintResultSchema,
  ManyResultSchema,
  RemovedSchema,
  SnapshotSchema,
  ToolPageSchema,
  ToolRegistrationSchema,
  ToolSpecSchema,
  VersionDiffSchema,
  WriteResultSchema,
  parseBoolean,
  queryBoolean,
  queryCount,
} from './schemas.js';
import { beyondTheLog, changeStream, wantsEventStream } from './sse.js';

/** The most specs one `POST /v1/check` takes (docs/server.md, "Limits"). */
const MAX_CHECK_SPECS = 10_000;

/** The formats of `GET /v1/exports/{format}`: every exporter of the library. */
export const EXPORT_FORMATS = ['mcp', 'openai', 'openai-responses', 'anthropic', 'gemini', 'ai-sdk'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const TOOL_PAGE_MAX = 1000;
const TOOL_PAGE_DEFAULT = 100;
/** search()'s default page. */
const SEARCH_PAGE_DEFAULT = 10;
const SEARCH_QUERY_MAX = 1000;
export const CHANGES_PAGE_MAX = 10_000;

const expectedVersionQuery = z
  .string()
  .optional()
  .meta({ description: 'Write only if the stored version is exactly this one (412 PRECONDITION_FAILED otherwise).' });

/** What the `If-None-Match` request header means on a route that takes `expected_version`. */
const ifNoneMatchHeader = { 'if-none-match': '`*`: the tool must not exist (412 PRECONDITION_FAILED otherwise), as `expectedVersion: null`.' };

/** A write's condition: `?expected_version=V`, or `If-None-Match: *` (the tool must not exist). */
function expectation(context: RouteContext): WriteOptions {
  const expected = context.query.expected_version as string | undefined;
  const ifNoneMatch = context.request.headers.get('if-none-match');
  if (ifNoneMatch === null) return expected === undefined ? {} : { expectedVersion: expected };
  if (ifNoneMatch.trim() !== '*') {
    throw new HttpProblem('BAD_REQUEST', `If-None-Match takes only *, got ${JSON.stringify(ifNoneMatch)}`, { context: { header: 'If-None-Match' } });
  }
  if (expected !== undefined) throw new HttpProblem('BAD_REQUEST', 'If-None-Match: * and expected_version cannot be used together');
  return { expectedVersion: null };
}

/**
 * A registration's JSON text, written once per registration object: registrations are deeply
 * frozen, and a store's read cache hands out the same object until the tool changes (a change,
 * in any process, makes a new object), so the text can never be stale.
 */
const registrationTexts = new WeakMap<ToolRegistration, string>();
function registrationJson(registration: ToolRegistration): string {
  let text = registrationTexts.get(registration);
  if (text === undefined) registrationTexts.set(registration, (text = JSON.stringify(registration)));
  return text;
}

/**
 * A read a write makes before it writes (the server's opening of the namespace). When the store cannot be reached there, nothing was written: the 503 says so in `context.outcome`, as the
 * write's own failure does, so a client deciding whether to retry finds it on every write's 503.
 */
export async function readBeforeWrite<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof ToolRegistryError && error.code === 'STORAGE_UNAVAILABLE' && error.context.outcome === undefined) {
      throw new StorageUnavailableError(error.message, { ...error.context, outcome: 'not_written' }, error.cause);
    }
    throw error;
  }
}

const allowDowngradeQuery = queryBoolean(
  'Under the policy versionOrder semver, accept a version lower than the stored one (a rollback; 409 VERSION_DOWNGRADE otherwise).',
);

function registrationOptions(context: RouteContext): RegistrationOptions {
  return parseBoolean(context.query.allow_downgrade as string | undefined, false) ? { ...expectation(context), allowDowngrade: true } : expectation(context);
}

function notOurCursor(cursor: string): HttpProblem {
  const shown = cursor.length > 200 ? `${JSON.stringify(cursor.slice(0, 200))}… (${cursor.length} characters)` : JSON.stringify(cursor);
  return new HttpProblem('BAD_REQUEST', `cursor ${shown} is not a cursor this server gave out for this query in this namespace`, { context: { parameter: 'cursor' } });
}

/**
 * A page cursor as the server gives it out: the registry's, behind a short hash of the namespace.
 * The registry's cursor is bound to the query and filters only (every store gives the same one), so
 * without this another namespace took it and answered a page of its own tools ranked with the
 * first namespace's statistics.
 */
function namespacedCursor(namespace: string, cursor: string | null): string | null {
  return cursor === null ? null : `${namespaceTag(namespace)}.${cursor}`;
}

function namespaceTag(namespace: string): string {
  return createHash('sha256').update(namespace).digest('base64url').slice(0, 8);
}

/** The registry's cursor inside one `namespacedCursor` gave out; another namespace's is a 400 naming `cursor`. */
function registryCursor(namespace: string, cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const prefix = `${namespaceTag(namespace)}.`;
  if (!cursor.startsWith(prefix)) throw notOurCursor(cursor);
  return cursor.slice(prefix.length);
}

/** A page cursor the registry refused is the request's fault: a 400 naming the parameter, as every bad query parameter. */
async function paging<T>(cursor: string | undefined, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ToolRegistryError && error.code === 'VALIDATION_FAILED' && error.context.path === 'cursor') throw notOurCursor(cursor ?? '');
    throw error;
  }
}

function exportAs(format: ExportFormat, tools: readonly ToolRegistration[], strict: boolean, onIncompatible: 'throw' | 'skip'): unknown {
  switch (format) {
    case 'mcp':
      return toMcpTools(tools, { onIncompatible });
    case 'openai':
    case 'openai-responses':
      return toOpenAITools(tools, { api: format === 'openai' ? 'chat' : 'responses', strict, onIncompatible });
    case 'anthropic':
      return toAnthropicTools(tools, { strict, onIncompatible });
    case 'gemini':
      return toGeminiTools(tools, { onIncompatible });
    case 'ai-sdk':
      return toAiSdkTools(tools, { onIncompatible });
  }
}

/**
 * The tools a token's persona policy allows, for what is shown to a model (`/v1/exports`): a
 * model must never see a tool its persona may not call, as over MCP. A tool this process has
 * code for (`toolPermissions`, from `serve --tools`) requires what its code requires, as the MCP
 * session checks it (the local tool is served, never an upstream's of its name). Else a
 * registered spec names no permissions, so for a local tool the policy's `allowed_tools`
 * decides; an upstream's tool (tag `upstream:NAME`) requires its row's `permissions`, as the
 * gateway checks them. A tool tagged with several upstreams requires every row's (the gateway
 * checks only the row that serves it, which the registry does not record): the export may hide
 * a tool a session shows, never the reverse. A deprecation names its replacement only
 * when that tool is shown too (its message is the operator's text). Without a policy, every tool.
 */
function allowedBy(
  policy: ToolPolicy | null | undefined,
  tools: readonly ToolRegistration[],
  upstreams: readonly Upstream[],
  toolPermissions: ((toolName: string) => readonly string[] | undefined) | undefined,
): readonly ToolRegistration[] {
  if (policy === null || policy === undefined) return tools;
  const permissionsByTag = new Map(upstreams.map((upstream) => [`upstream:${upstream.name}`, upstream.permissions]));
  const required = (tool: ToolRegistration): readonly string[] => {
    const name = tool.spec.tool_name;
    const code = toolPermissions?.(name);
    if (code === undefined) return tool.spec.tags.flatMap((tag) => permissionsByTag.get(tag) ?? []);
    // The operator's function, not a request: a wrong answer is this server's fault (a 500), never read as "requires nothing".
    if (!Array.isArray(code) || code.some((permission) => typeof permission !== 'string')) {
      throw new TypeError(`toolPermissions(${JSON.stringify(name)}) must return an array of strings or undefined, got ${JSON.stringify(code) ?? typeof code}`);
    }
    return code;
  };
  const allowed = tools.filter((tool) => checkToolPermission(policy, { name: tool.spec.tool_name, permissions: { required: required(tool) } }).allowed);
  const names = new Set(allowed.map((tool) => tool.spec.tool_name));
  return allowed.map((tool) =>
    tool.deprecation === null || tool.deprecation.replacement === null || names.has(tool.deprecation.replacement) ? tool : { ...tool, deprecation: { ...tool.deprecation, replacement: null } },
  );
}

/** The lint providers with a strict mode (`strict` adds their rules). */
const LINT_STRICT_PROVIDERS: readonly LintProvider[] = ['openai', 'anthropic'];

/** A `tag` filter: a tag as the contract has them, never empty. */
const tagFilter = z.string().min(1, 'a tag is a non-empty string');

/** The routes every namespace has (the prefix `/v1/namespaces/{ns}` is added for the namespaced copies). */
export const REGISTRY_ROUTES: readonly RouteDefinition[] = [
  {
    method: 'get',
    path: '/v1/tools',
    operationId: 'listTools',
    summary: 'List tools, sorted by name, a page at a time; with q, search them',
    tag: 'tools',
    scope: 'read',
    namespaced: true,
    query: z.object({
      q: z
        .string()
        .max(SEARCH_QUERY_MAX)
        .optional()
        .meta({ description: "Search: the tools matching the query's terms, best first (ties by name), with their `scores` (the registry's search())." }),
      include_disabled: queryBoolean('Also list disabled tools (default false).'),
      // Tags are never empty: `tag=` matched nothing, silently (`tool-registry list --tag ''` is a usage error).
      tag: z.union([tagFilter, z.array(tagFilter)]).optional().meta({ description: 'Only tools with this tag; repeat it to require several.' }),
      limit: queryCount(`At most this many tools (default ${TOOL_PAGE_DEFAULT}; with q, ${SEARCH_PAGE_DEFAULT})`, TOOL_PAGE_MAX),
      cursor: z.string().optional().meta({ description: 'The `next_cursor` of the previous page (of the same q and filters, in the same namespace; any other is a 400 naming cursor).' }),
    }),
    repeatable: ['tag'],
    responses: { 200: { description: 'A page of tools.', schema: ToolPageSchema } },
    errors: [],
    handle: async ({ registry, namespace, query }) => {
      const includeDisabled = parseBoolean(query.include_disabled as string | undefined, false);
      const tags = (query.tag as string[] | undefined) ?? [];
      const q = query.q as string | undefined;
      const given = query.cursor as string | undefined;
      const cursor = registryCursor(namespace, given);
      const limit = query.limit === undefined ? (q === undefined ? TOOL_PAGE_DEFAULT : SEARCH_PAGE_DEFAULT) : Number(query.limit);
      const options = { includeDisabled, tags, limit: Math.max(limit, 1), ...(cursor === undefined ? {} : { cursor }) };
      if (limit === 0) {
        // An empty page (as before listPage and search); a cursor given is still checked: a 400 naming it.
        if (cursor !== undefined) await paging<unknown>(given, () => (q === undefined ? registry.listPage(options) : registry.search(q, options)));
        return json(q === undefined ? { tools: [], next_cursor: null } : { tools: [], scores: [], next_cursor: null });
      }
      if (q === undefined) {
        const page = await paging(given, () => registry.listPage(options));
        return json({ tools: page.registrations, next_cursor: namespacedCursor(namespace, page.next_cursor) });
      }
      const page = await paging(given, () => registry.search(q, options));
      return json({ tools: page.results.map((r) => r.registration), scores: page.results.map((r) => r.score), next_cursor: namespacedCursor(namespace, page.next_cursor) });
    },
  },
  {
    method: 'post',
    path: '/v1/tools',
    operationId: 'registerMany',
    summary: 'Register several specs, all or nothing',
    tag: 'tools',
    scope: 'write',
    namespaced: true,
    query: z.object({ allow_downgrade: allowDowngradeQuery }),
    body: { schema: z.array(ToolSpecSchema), description: 'An array of ToolSpecs.' },
    responses: { 200: { description: 'Each registration in the given order, with what happened to it.', schema: ManyResultSchema } },
    errors: ['VALIDATION_FAILED', 'DUPLICATE_TOOL', 'VERSION_CONFLICT', 'VERSION_DOWNGRADE', 'COMPATIBILITY_FAILED', 'STORAGE_BUSY'],
    handle: async (context) => {
      const { registry, body } = context;
      if (!Array.isArray(body)) throw new HttpProblem('BAD_REQUEST', 'the body must be a JSON array of ToolSpecs', { context: { path: '' } });
      // Each action is what this request did, decided in the write's atomic step: of batches
      // racing to add one tool (through one server or several), one says `added`.
      const outcomes = await registerManyWithActions(registry, body as ToolSpecInput[], {
        allowDowngrade: parseBoolean(context.query.allow_downgrade as string | undefined, false),
      });
      return json({ tools: outcomes.map(({ registration, action }) => ({ ...registration, action })) });
    },
  },
  {
    method: 'get',
    path: '/v1/tools/{name}',
    operationId: 'getTool',
    summary: 'One tool',
    tag: 'tools',
    scope: 'read',
    namespaced: true,
    responses: { 200: { description: 'The registration.', schema: ToolRegistrationSchema } },
    errors: ['TOOL_NOT_FOUND'],
    handle: async ({ registry, params, requestId }) => {
      const found = await registry.get(params.name as string);
      if (found === undefined) throw new ToolNotFoundError(params.name as string);
      return jsonWithRequestId(registrationJson(found), requestId);
    },
  },
  {
    method: 'put',
    path: '/v1/tools/{name}',
    operationId: 'registerTool',
    summary: 'Register a spec by the registration rule',
    tag: 'tools',
    scope: 'write',
    namespaced: true,
    query: z.object({ expected_version: expectedVersionQuery, allow_downgrade: allowDowngradeQuery }),
    headers: ifNoneMatchHeader,
    body: { schema: ToolSpecSchema, description: 'A ToolSpec whose tool_name is the path name.' },
    responses: {
      200: { description: 'Updated or unchanged.', schema: WriteResultSchema },
      201: { description: 'Added.', schema: WriteResultSchema },
    },
    errors: ['VALIDATION_FAILED', 'VERSION_CONFLICT', 'VERSION_DOWNGRADE', 'COMPATIBILITY_FAILED', 'PRECONDITION_FAILED', 'STORAGE_BUSY'],
    handle: async (context) => {
      const { registry, params, body } = context;
      const name = params.name as string;
      const given = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { tool_name?: unknown }).tool_name : undefined;
      if (given !== name) {
        throw new HttpProblem('BAD_REQUEST', `the body's tool_name ${JSON.stringify(given)} is not the name in the path ${JSON.stringify(name)}`, {
          context: { tool_name: name, path: 'tool_name' },
        });
      }
      // The action is decided in the write's atomic step: of two PUTs at once, one says what it did, the other unchanged.
      const { registration, action } = await registerWithAction(registry, body as ToolSpecInput, registrationOptions(context));
      return json({ ...registration, action }, action === 'added' ? 201 : 200);
    },
  },
  {
    method: 'delete',
    path: '/v1/tools/{name}',
    operationId: 'removeTool',
    summary: 'Remove a tool (its history is kept); idempotent',
    tag: 'tools',
    scope: 'write',
    namespaced: true,
    query: z.object({ expected_version: expectedVersionQuery }),
    headers: ifNoneMatchHeader,
    responses: { 200: { description: 'Whether something was removed.', schema: RemovedSchema } },
    errors: ['PRECONDITION_FAILED', 'STORAGE_BUSY'],
    handle: async (context) => json({ removed: await context.registry.remove(context.params.name as string, expectation(context)) }),
  },
  ...(['enable', 'disable'] as const).map(
    (verb): RouteDefinition => ({
      method: 'post',
      path: `/v1/tools/{name}/${verb}`,
      operationId: `${verb}Tool`,
      summary: verb === 'enable' ? 'Enable a tool' : 'Disable a tool (a new version keeps it disabled)',
      tag: 'tools',
      scope: 'write',
      namespaced: true,
      query: z.object({ expected_version: expectedVersionQuery }),
      headers: ifNoneMatchHeader,
      responses: { 200: { description: 'The registration.', schema: ToolRegistrationSchema } },
      errors: ['TOOL_NOT_FOUND', 'PRECONDITION_FAILED', 'STORAGE_BUSY'],
      handle: async (context) => json(await context.registry.setEnabled(context.params.name as string, verb === 'enable', expectation(context))),
    }),
  ),
  {
    method: 'get',
    path: '/v1/tools/{name}/history',
    operationId: 'toolHistory',
    summary: 'Every distinct spec ever stored under the name, oldest first',
    tag: 'tools',
    scope: 'read',
    namespaced: true,
    responses: { 200: { description: 'The history ([] for a name never registered).', schema: HistorySchema } },
    errors: [],
    handle: async ({ registry, params }) => json({ history: await registry.history(params.name as string) }),
  },
  {
    method: 'post',
    path: '/v1/tools/{name}/deprecate',
    operationId: 'deprecateTool',
    summary: 'Deprecate a tool (or change its deprecation); it keeps working until its sunset',
    tag: 'versions',
    scope: 'write',
    namespaced: true,
    query: z.object({ expected_version: expectedVersionQuery }),
    headers: ifNoneMatchHeader,
    body: { schema: DeprecationRequestSchema, description: '`{ message, replacement?, sunset? }`.' },
    responses: { 200: { description: 'The registration with its deprecation.', schema: ToolRegistrationSchema } },
    errors: ['VALIDATION_FAILED', 'TOOL_NOT_FOUND', 'PRECONDITION_FAILED', 'STORAGE_BUSY'],
    handle: async (context) => json(await context.registry.deprecate(context.params.name as string, context.body as DeprecationInput, expectation(context))),
  },
  {
    method: 'post',
    path: '/v1/tools/{name}/undeprecate',
    operationId: 'undeprecateTool',
    summary: "Lift a tool's deprecation (a tool not deprecated is answered unchanged)",
    tag: 'versions',
    scope: 'write',
    namespaced: true,
    query: z.object({ expected_version: expectedVersionQuery }),
    headers: ifNoneMatchHeader,
    responses: { 200: { description: 'The registration, its deprecation null.', schema: ToolRegistrationSchema } },
    errors: ['TOOL_NOT_FOUND', 'PRECONDITION_FAILED', 'STORAGE_BUSY'],
    handle: async (context) => json(await context.registry.undeprecate(context.params.name as string, expectation(context))),
  },
  {
    method: 'get',
    path: '/v1/tools/{name}/diff',
    operationId: 'diffTool',
    summary: 'How two versions of a tool differ: the schema differences and whether they break callers or consumers',
    tag: 'versions',
    scope: 'read',
    namespaced: true,
    query: z.object({
      from: z.string().optional().meta({ description: 'The version to compare from (default: the spec stored just before `to`).' }),
      to: z.string().optional().meta({ description: 'The version to compare to (default: the current spec).' }),
    }),
    responses: { 200: { description: "The library's diffVersions().", schema: VersionDiffSchema } },
    errors: ['TOOL_NOT_FOUND'],
    handle: async ({ registry, params, query }) =>
      json(
        await diffVersions(registry, params.name as string, {
          ...(query.from === undefined ? {} : { from: query.from as string }),
          ...(query.to === undefined ? {} : { to: query.to as string }),
        }),
      ),
  },
  {
    method: 'post',
    path: '/v1/check',
    operationId: 'checkSpecs',
    summary: 'What registering a spec (or an array, as POST /v1/tools) would do, by the rule and the policies; changes nothing',
    tag: 'versions',
    scope: 'read',
    namespaced: true,
    query: z.object({ allow_downgrade: allowDowngradeQuery }),
    body: {
      schema: z.union([ToolSpecSchema, z.array(ToolSpecSchema)]),
      description: 'A ToolSpec or an array of them. An invalid spec is not a 400: it is a result `refused` with its VALIDATION_FAILED.',
    },
    responses: { 200: { description: 'The report: `ok` false when one spec would be refused (each result says why).', schema: CheckReportSchema } },
    errors: [],
    handle: async ({ registry, query, body }) => {
      // Every spec gets a result (a refused one: its check and ~700 bytes): 300,000 `{}`s in 1 MiB were 12 s and a 215 MB answer.
      if (Array.isArray(body) && body.length > MAX_CHECK_SPECS) {
        throw new HttpProblem('BAD_REQUEST', `the body holds ${body.length} specs; POST /v1/check takes at most ${MAX_CHECK_SPECS} at once: check them in parts`, { context: { path: '', limit: MAX_CHECK_SPECS } });
      }
      return json(await checkSpecs(registry, body, { allowDowngrade: parseBoolean(query.allow_downgrade as string | undefined, false) }));
    },
  },
  {
    method: 'get',
    path: '/v1/changes',
    operationId: 'changes',
    summary: 'The change log after a revision; with Accept: text/event-stream, the live feed',
    tag: 'changes',
    scope: 'read',
    namespaced: true,
    query: z.object({
      since: queryCount('Events after this revision (default 0; for the stream: default the current revision)', Number.MAX_SAFE_INTEGER),
      limit: queryCount('At most this many events (default 1000; page only)', CHANGES_PAGE_MAX),
    }),
    headers: {
      accept: '`text/event-stream` for the live feed (Server-Sent Events: `id:` is the revision, a heartbeat comment every 15 s).',
      'last-event-id': 'The stream resumes after this revision; it wins over `since`.',
    },
    responses: {
      200: { description: 'A page of events (JSON), or the live feed (text/event-stream).', schema: ChangesPageSchema },
    },
    errors: ['CHANGES_EXPIRED', 'CAPACITY_EXCEEDED', 'TOKEN_LIMIT_EXCEEDED'],
    handle: async (context) => {
      const { registry, query, request } = context;
      if (wantsEventStream(request)) return changeStream(context);
      const since = query.since === undefined ? 0 : Number(query.since);
      const limit = query.limit === undefined ? 1000 : Number(query.limit);
      return json(await beyondTheLog(registry, since, await registry.changes({ since, limit })));
    },
  },
  {
    method: 'get',
    path: '/v1/snapshot',
    operationId: 'exportSnapshot',
    summary: 'Every tool, disabled ones too (a ToolRegistrySnapshot)',
    tag: 'snapshot',
    scope: 'read',
    namespaced: true,
    responses: {
      200: {
        description: 'The snapshot.',
        schema: SnapshotSchema,
        headers: { 'Tool-Registry-Revision': 'The revision the snapshot reflects at least (read before the export): follow the change feed from it.' },
      },
    },
    errors: [],
    handle: async ({ registry }) => {
      // Read first: a change landing in between is in the snapshot and delivered again by the feed, never missed.
      const { revision } = await registry.changes({ limit: 0 });
      return json(await registry.exportSnapshot(), 200, { 'tool-registry-revision': String(revision) });
    },
  },
  {
    method: 'post',
    path: '/v1/snapshot',
    operationId: 'importSnapshot',
    summary: 'Import a snapshot all or nothing (dry_run: the plan, nothing written)',
    tag: 'snapshot',
    scope: 'write',
    namespaced: true,
    query: z.object({
      mode: z.enum(['merge', 'replace']).optional().meta({ description: 'merge (default) leaves other tools alone; replace restores.' }),
      dry_run: queryBoolean('Plan only: the report with its plan, nothing written.'),
    }),
    body: { schema: SnapshotSchema, description: 'A ToolRegistrySnapshot.', kind: 'snapshot' },
    responses: { 200: { description: 'The import report.', schema: ImportReportSchema } },
    errors: ['SNAPSHOT_INVALID', 'DUPLICATE_TOOL', 'VERSION_CONFLICT', 'STORAGE_BUSY'],
    handle: async ({ registry, query, body }) =>
      json(await registry.importSnapshot(body, { mode: (query.mode as 'merge' | 'replace' | undefined) ?? 'merge', dryRun: parseBoolean(query.dry_run as string | undefined, false) })),
  },
  {
    method: 'get',
    path: '/v1/exports/{format}',
    operationId: 'exportTools',
    summary: "The enabled tools as a model provider takes them (those the token's persona policy allows)",
    tag: 'exports',
    scope: 'read',
    namespaced: true,
    query: z.object({
      strict: queryBoolean('Strict mode (openai, openai-responses, anthropic).'),
      skip_incompatible: queryBoolean('Leave out the tools the provider would reject instead of answering 422.'),
    }),
    responses: { 200: { description: "The provider's tool list.", schema: AnyJsonSchema } },
    errors: ['PROVIDER_INCOMPATIBLE', 'NOT_FOUND'],
    handle: async ({ registry, params, query, token, toolPermissions }) => {
      const format = params.format as ExportFormat;
      if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
        throw new HttpProblem('NOT_FOUND', `no export format ${JSON.stringify(format)}; the formats are ${EXPORT_FORMATS.join(', ')}`, {
          context: { format, allowed: [...EXPORT_FORMATS] },
        });
      }
      const strict = parseBoolean(query.strict as string | undefined, false);
      if (strict && !['openai', 'openai-responses', 'anthropic'].includes(format)) {
        throw new HttpProblem('BAD_REQUEST', `strict applies to openai, openai-responses and anthropic only, not ${format}`, { context: { parameter: 'strict' } });
      }
      const skip = parseBoolean(query.skip_incompatible as string | undefined, false);
      const policy = token?.policy;
      const upstreams = policy === null || policy === undefined ? [] : await registry.listUpstreams();
      return json(exportAs(format, allowedBy(policy, await registry.listAll(), upstreams, toolPermissions), strict, skip ? 'skip' : 'throw'));
    },
  },
  {
    method: 'get',
    path: '/v1/lint',
    operationId: 'lintTools',
    summary: "The enabled tools against each provider's rules",
    tag: 'exports',
    scope: 'read',
    namespaced: true,
    query: z.object({
      provider: z
        .union([z.enum(LINT_PROVIDERS as [LintProvider, ...LintProvider[]]), z.array(z.enum(LINT_PROVIDERS as [LintProvider, ...LintProvider[]]))])
        .optional()
        .meta({ description: 'Only this provider; repeat it for several (default mcp, openai, anthropic, gemini).' }),
      strict: queryBoolean('Also the strict-mode rules of openai and anthropic.'),
    }),
    repeatable: ['provider'],
    responses: { 200: { description: 'The findings (none: every tool passes).', schema: LintResultSchema } },
    errors: [],
    handle: async ({ registry, query }) => {
      // A provider named twice is linted once, as `tool-registry lint --provider` does (its findings came twice).
      const providers = query.provider === undefined ? undefined : [...new Set(query.provider as LintProvider[])];
      const strict = parseBoolean(query.strict as string | undefined, false);
      // As the exports' `strict` and `tool-registry lint --strict`: asked of providers without a strict mode, it checked nothing more, silently.
      if (strict && providers !== undefined && providers.length > 0 && !providers.some((provider) => LINT_STRICT_PROVIDERS.includes(provider))) {
        throw new HttpProblem('BAD_REQUEST', `strict applies to provider ${LINT_STRICT_PROVIDERS.join(', ')} only, not ${providers.join(', ')}`, { context: { parameter: 'strict' } });
      }
      const tools = await registry.listAll();
      return json({ findings: lintTools(tools, { strict, ...(providers === undefined || providers.length === 0 ? {} : { providers }) }) });
    },
  },
  {
    method: 'get',
    path: '/v1/agent/tools',
    operationId: 'agentTools',
    summary: "The seed's agent endpoint: exactly a ToolRegistrySnapshot of the enabled (or all) tools",
    tag: 'agent',
    scope: 'read',
    namespaced: true,
    query: z.object({ include_disabled: queryBoolean('Also the disabled tools (default false).') }),
    responses: { 200: { description: "The seed's ToolRegistrySnapshot.", schema: SnapshotSchema } },
    errors: [],
    handle: async ({ registry, query }) => {
      const tools = await registry.listAll({ includeDisabled: parseBoolean(query.include_disabled as string | undefined, false) });
      // As a snapshot writes them: `deprecation` only when set, so the Python registry reads it (extra fields forbidden).
      return json({ tools: tools.map(({ deprecation, ...rest }) => (deprecation === null ? rest : { ...rest, deprecation })) });
    },
  },
];
