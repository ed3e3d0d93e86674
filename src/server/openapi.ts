// The OpenAPI 3.1 document, generated from the route table's zod schemas with zod-openapi:
// every route (also under /v1/namespaces/{ns}), parameter, body, response and error.
import { createDocument } from 'zod-openapi';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject, ZodOpenApiResponsesObject } from 'zod-openapi';
import { z } from 'zod';
import { PROBLEM_STATUS } from './problems.js';
import type { RouteDefinition } from './route-table.js';
import { EXPORT_FORMATS } from './routes.js';
import { ProblemSchema, namespaceParam, toolNameParam } from './schemas.js';

const PATH_PARAMS: Readonly<Record<string, z.ZodType>> = {
  name: toolNameParam,
  ns: namespaceParam,
  format: z.enum(EXPORT_FORMATS).meta({ description: 'The provider format.' }),
};

/** The codes every route of a kind may answer besides its own (the edges of server.ts included). */
function commonErrors(route: RouteDefinition, prefixed: boolean): string[] {
  // Any route: a Host the server does not serve, an unknown query parameter, a stop, a failure.
  const codes = ['INTERNAL', 'SHUTTING_DOWN', 'HOST_NOT_ALLOWED', 'BAD_REQUEST'];
  if (route.scope !== null) codes.push('UNAUTHORIZED');
  if (route.scope !== null && route.scope !== 'token' && route.scope !== 'optional') codes.push('FORBIDDEN');
  // A method that changes something: a foreign Origin, a body that is not JSON or too large.
  if (route.method !== 'get') codes.push('ORIGIN_NOT_ALLOWED', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE');
  if (route.body !== undefined) codes.push(route.body.kind === 'snapshot' ? 'SNAPSHOT_INVALID' : 'VALIDATION_FAILED');
  // A namespace past --max-open-namespaces with every one in use, or no file handle left to open it;
  // its store (PostgreSQL) that cannot be reached: 503 with Retry-After.
  if (prefixed || route.namespaced) codes.push('NAMESPACE_NOT_FOUND', 'CAPACITY_EXCEEDED', 'STORAGE_UNAVAILABLE');
  if (route.namespaced && route.method !== 'get') codes.push('READ_ONLY', 'REGISTRY_CLOSED');
  // Any route of a namespace whose schema a new release must migrate, when the server's role may not.
  if (route.namespaced) codes.push('READ_ONLY');
  return codes;
}

function problemResponses(codes: readonly string[]): ZodOpenApiResponsesObject {
  const byStatus = new Map<number, string[]>();
  for (const code of new Set(codes)) {
    const status = PROBLEM_STATUS[code]?.status ?? 500;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const headers: Record<string, z.ZodType> = {};
    if (status === 401) headers['WWW-Authenticate'] = z.string().meta({ description: 'Bearer realm="tool-registry"' });
    if (status === 405) headers.Allow = z.string().meta({ description: 'The methods the path takes.' });
    if (status === 503 || status === 429) headers['Retry-After'] = z.string().meta({ description: 'Seconds to wait before retrying.' });
    responses[String(status) as `${1 | 2 | 3 | 4 | 5}${string}`] = {
      description: `A problem: ${list.sort().join(', ')}.`,
      ...(Object.keys(headers).length === 0 ? {} : { headers: z.object(headers) }),
      content: { 'application/problem+json': { schema: ProblemSchema } },
    };
  }
  return responses;
}

function operation(route: RouteDefinition, prefixed: boolean, tokens: boolean): ZodOpenApiOperationObject {
  const fullPath = prefixed ? `/v1/namespaces/{ns}${route.path.slice(3)}` : route.path;
  const pathNames = [...fullPath.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  const pathShape = Object.fromEntries(pathNames.map((name) => [name, route.pathParams?.[name] ?? PATH_PARAMS[name] ?? z.string()]));
  const headerShape = Object.fromEntries(
    Object.entries(route.headers ?? {}).map(([name, description]) => [name, z.string().optional().meta({ description })]),
  );
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, doc] of Object.entries(route.responses)) {
    const content: Record<string, { schema: z.ZodType }> = {};
    if (doc.schema !== undefined) content[doc.contentType ?? 'application/json'] = { schema: doc.schema };
    if (route.operationId === 'changes') content['text/event-stream'] = { schema: z.string().meta({ description: 'Server-Sent Events: `id: REVISION`, `event: change`, `data: ChangeEvent`.' }) };
    const headers = Object.fromEntries(Object.entries(doc.headers ?? {}).map(([name, description]) => [name, z.string().meta({ description })]));
    responses[status as `${1 | 2 | 3 | 4 | 5}${string}`] = {
      description: doc.description,
      ...(Object.keys(headers).length === 0 ? {} : { headers: z.object(headers) }),
      ...(Object.keys(content).length === 0 ? {} : { content }),
    };
  }
  Object.assign(responses, problemResponses([...route.errors, ...commonErrors(route, prefixed)]));
  return {
    operationId: prefixed ? `${route.operationId}InNamespace` : route.operationId,
    summary: prefixed ? `${route.summary} (in a namespace)` : route.summary,
    tags: [route.tag],
    ...(route.scope === null || !tokens ? { security: [] } : route.scope === 'optional' ? { security: [{}, { bearer: [] }] } : { security: [{ bearer: [] }] }),
    requestParams: {
      ...(pathNames.length === 0 ? {} : { path: z.object(pathShape) }),
      ...(route.query === undefined ? {} : { query: route.query }),
      ...(Object.keys(headerShape).length === 0 ? {} : { header: z.object(headerShape) }),
    },
    ...(route.body === undefined
      ? {}
      : { requestBody: { required: true, description: route.body.description, content: { 'application/json': { schema: route.body.schema } } } }),
    responses,
  };
}

/** What the document says of a mount: its name and the statuses its handler answers itself. */
export interface MountDescription {
  readonly name: string;
  /** Status to description; absent: the handler's answers are the operation's `default`. */
  readonly responses: Readonly<Record<string, string>> | undefined;
  /** Status to the headers (name to description) the handler's answers of that status carry. */
  readonly headers?: Readonly<Record<string, Readonly<Record<string, string>>>> | undefined;
  /** Method to the statuses whose answers carry no body. */
  readonly noContent?: Readonly<Record<string, readonly string[]>> | undefined;
}

/** The methods a mount's paths are described with (it is handed every one; others are its own 405). */
const MOUNT_METHODS = ['get', 'post', 'delete'] as const;

/** The codes the server's edges answer before a mount's handler runs (server.ts), and its limits. */
const MOUNT_ERRORS = ['INTERNAL', 'SHUTTING_DOWN', 'HOST_NOT_ALLOWED', 'BAD_REQUEST', 'UNAUTHORIZED', 'FORBIDDEN', 'ORIGIN_NOT_ALLOWED', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'NAMESPACE_NOT_FOUND', 'CAPACITY_EXCEEDED', 'TOKEN_LIMIT_EXCEEDED', 'STORAGE_UNAVAILABLE'];

/** One method of a mount at `/{name}` or `/v1/namespaces/{ns}/{name}`: the edges' problems plus the handler's own answers (any JSON, or an event stream). */
function mountOperation(mount: MountDescription, method: string, prefixed: boolean, tokens: boolean): ZodOpenApiOperationObject {
  const responses = problemResponses(MOUNT_ERRORS) as Record<string, { description: string; headers?: unknown; content?: Record<string, { schema: z.ZodType }> }>;
  const own = { 'application/json': { schema: z.unknown().meta({ description: "The handler's own JSON (for MCP: a JSON-RPC message or batch)." }) }, 'text/event-stream': { schema: z.string() } };
  for (const [status, description] of Object.entries(mount.responses ?? { default: `the answers of the handler mounted at /${mount.name}` })) {
    const edge = responses[status];
    const declared = Object.entries(mount.headers?.[status] ?? {}).map(([name, text]) => [name, z.string().optional().meta({ description: text })] as const);
    const headers = declared.length === 0 ? {} : { headers: z.object(Object.fromEntries(declared)) };
    // An answer with no body is declared without content: a client reads none (the MCP DELETE's 200).
    const content = mount.noContent?.[method]?.includes(status) === true ? undefined : own;
    const merged = edge === undefined ? content : content === undefined ? edge.content : { ...own, ...edge.content };
    responses[status] = { ...edge, description: edge === undefined ? description : `${description}. Or ${edge.description}`, ...(merged === undefined ? {} : { content: merged }), ...headers };
  }
  return {
    operationId: `${mount.name}${method[0]?.toUpperCase()}${method.slice(1)}${prefixed ? 'InNamespace' : ''}`,
    summary: `The handler mounted at /${mount.name}${prefixed ? ' (in a namespace)' : ''}`,
    tags: [mount.name],
    ...(tokens ? { security: [{ bearer: [] }] } : { security: [] }),
    ...(prefixed ? { requestParams: { path: z.object({ ns: namespaceParam }) } } : {}),
    responses: responses as ZodOpenApiResponsesObject,
  };
}

/**
 * The codes the edges answer a preflight with before it is answered (a mount's also checks
 * Origin): an `OPTIONS` that says it carries a body over the limit is a 413 too (no browser
 * sends one; it was answered and not declared).
 */
const PREFLIGHT_ERRORS = ['INTERNAL', 'SHUTTING_DOWN', 'HOST_NOT_ALLOWED', 'BAD_REQUEST', 'PAYLOAD_TOO_LARGE'];

/** `OPTIONS` of a path under `cors` (server.ts): 204 with the CORS headers, no token needed. */
function preflightOperation(path: string, mount: boolean): ZodOpenApiOperationObject {
  const responses = problemResponses(mount ? [...PREFLIGHT_ERRORS, 'ORIGIN_NOT_ALLOWED'] : PREFLIGHT_ERRORS);
  responses['204'] = {
    description: `A CORS preflight (serve --cors): the methods the path takes and the CORS headers, no token needed${mount ? '; from the --cors origin or the server\'s own only (403 otherwise)' : ''}.`,
    headers: z.object({
      Allow: z.string().meta({ description: 'The methods the path takes.' }),
      'Access-Control-Allow-Methods': z.string().meta({ description: 'The same methods.' }),
      'Access-Control-Allow-Origin': z.string().meta({ description: 'The --cors origin.' }),
    }),
  };
  return {
    operationId: `preflight${path.replace(/\{(\w)/g, (_, first: string) => first.toUpperCase()).replace(/[^A-Za-z0-9]+(\w?)/g, (_, next: string) => next.toUpperCase())}`,
    summary: 'CORS preflight (only with serve --cors; without it, 405)',
    tags: ['service'],
    security: [],
    ...(path.includes('{') ? { requestParams: { path: z.object(Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1] as string, z.string()]))) } } : {}),
    responses,
  };
}

export function buildOpenApiDocument(options: { routes: readonly RouteDefinition[]; version: string; tokens: boolean; mounts: readonly MountDescription[]; cors?: boolean }): Record<string, unknown> {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of options.routes) {
    const copies = route.namespaced ? [false, true] : [false];
    for (const prefixed of copies) {
      const path = prefixed ? `/v1/namespaces/{ns}${route.path.slice(3)}` : route.path;
      paths[path] = { ...paths[path], [route.method]: operation(route, prefixed, options.tokens) };
    }
  }
  for (const mount of options.mounts) {
    for (const prefixed of [false, true]) {
      paths[prefixed ? `/v1/namespaces/{ns}/${mount.name}` : `/${mount.name}`] = Object.fromEntries(MOUNT_METHODS.map((method) => [method, mountOperation(mount, method, prefixed, options.tokens)]));
    }
  }
  if (options.cors === true) {
    const mountPaths = new Set(options.mounts.flatMap((mount) => [`/${mount.name}`, `/v1/namespaces/{ns}/${mount.name}`]));
    for (const path of Object.keys(paths)) paths[path] = { ...paths[path], options: preflightOperation(path, mountPaths.has(path)) };
  }
  const document = createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'tool-registry',
        version: options.version,
        description:
          'The tool registry as a service. Every registry route also lives under /v1/namespaces/{ns}; the unprefixed routes are namespace `default`. ' +
          'Errors are application/problem+json (RFC 9457) with our `code` and `context`.' +
          (options.mounts.length === 0 ? '' : ` Also mounted, every path below them included: ${options.mounts.map((m) => `/${m.name}`).join(', ')} (their bodies are the handler's own).`),
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A token from `tool-registry token create`.' } } },
      ...(options.tokens ? { security: [{ bearer: [] }] } : {}),
      paths,
    },
    {
      // The contracts' JSON objects (input_schema, output_schema) are zod custom checks: plain objects here.
      override: (ctx) => {
        if (ctx.zodSchema._zod.def.type === 'custom' && Object.keys(ctx.jsonSchema).length === 0) ctx.jsonSchema.type = 'object';
      },
    },
  );
  // Every answer carries X-Request-Id (request-id.ts), whichever route, edge or mount gave it.
  const components = (document.components ??= {}) as { headers?: Record<string, unknown> };
  components.headers = { ...components.headers, RequestId: REQUEST_ID_HEADER };
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item as Record<string, { responses?: Record<string, { headers?: Record<string, unknown> }> }>)) {
      for (const response of Object.values(operation.responses ?? {})) response.headers = { ...response.headers, 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
    }
  }
  return document as unknown as Record<string, unknown>;
}

const REQUEST_ID_HEADER = {
  required: true,
  description: "The request's id, also its log line's `request_id`: the request's own X-Request-Id when it was 1-64 of A-Z a-z 0-9 . _ -, else a new UUID.",
  schema: { type: 'string' },
};
