// The server in-process over a real socket (listen() on 127.0.0.1:0), and a checker that
// holds every response the tests get against the OpenAPI document's schema for it.
import { request as httpRequest } from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { beforeAll } from 'vitest';
import { createToolRegistryServer, listen } from '../../src/server/index.js';
import type { ListeningServer, ToolRegistryServer, ToolRegistryServerOptions } from '../../src/server/index.js';

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed JSON body (undefined when not JSON). */
  readonly body: unknown;
}

export interface Running {
  readonly url: string;
  readonly server: ToolRegistryServer;
  readonly listening: ListeningServer;
  /** fetch + read + record for the documented-schema check. */
  call(method: string, path: string, init?: { body?: unknown; raw?: string | Buffer; headers?: Record<string, string>; token?: string }): Promise<Reply>;
  close(): Promise<void>;
}

/** Every response a file's tests got, for the document check (emptied by `recordThisFile`). */
export const recorded: { method: string; path: string; status: number; contentType: string; body: unknown; headers?: readonly string[] }[] = [];

/**
 * Empties `recorded` before the file's first test. The files of a worker share this module
 * (`isolate: false`), so without it a file's document check also held the answers of whatever
 * file ran before it in the same worker to its own server's document, and passed or failed
 * by the order files happened to run in.
 */
export function recordThisFile(): void {
  beforeAll(() => {
    recorded.length = 0;
  });
}

export async function start(options: ToolRegistryServerOptions): Promise<Running> {
  const server = createToolRegistryServer(options);
  const listening = await listen(server);
  return {
    url: listening.url,
    server,
    listening,
    async call(method, path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
      let body: string | Buffer | undefined = init.raw;
      if (init.body !== undefined) {
        body = JSON.stringify(init.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(`${listening.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
      const text = await response.text();
      let parsed: unknown;
      const contentType = (response.headers.get('content-type') ?? '').split(';')[0] as string;
      try {
        parsed = JSON.parse(text);
      } catch {
        // A text body (GET /metrics) is held to its documented string schema as it is.
        parsed = contentType === 'text/plain' ? text : undefined;
      }
      recorded.push({ method: method.toLowerCase(), path: path.split('?')[0] as string, status: response.status, contentType, body: parsed, headers: [...response.headers.keys()] });
      return { status: response.status, headers: response.headers, text, body: parsed };
    },
    close: () => listening.close(),
  };
}

/** A raw request (no URL normalisation by the client: `/v1/tools/..` goes out as written; any Host). */
export function rawRequest(url: string, method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown; contentType: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    // `headers` may set Host, which fetch() does not let a caller choose.
    const req = httpRequest({ host: hostname, port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), contentType: res.headers['content-type'] ?? '' }));
    });
    req.on('error', reject);
    req.end();
  });
}

export const spec = (name: string, version: string | null = '1', extra: Record<string, unknown> = {}) => ({
  tool_name: name,
  version,
  input_schema: { type: 'object', properties: { city: { type: 'string' } } },
  output_schema: {},
  ...extra,
});

type Operation = { responses: Record<string, { content?: Record<string, { schema: object }>; headers?: Record<string, unknown> }> };

/**
 * Response headers any HTTP answer may carry that a document does not declare: the message's
 * framing, caching and proxy hints, and CORS (the preflight declares the CORS headers).
 */
const GENERIC_HEADERS = /^(content-type|content-length|date|connection|keep-alive|transfer-encoding|vary|cache-control|x-accel-buffering|access-control-.*)$/;

/** Compiles the document's response schemas and checks recorded responses against them. */
export function documentChecker(document: Record<string, unknown>) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const components = document.components as Record<string, unknown>;
  const paths = document.paths as Record<string, Record<string, Operation>>;
  const matchers = Object.keys(paths).map((template) => ({
    template,
    regex: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`),
    params: (template.match(/\{/g) ?? []).length,
  }));
  const compiled = new Map<string, ValidateFunction>();
  const templateOf = (path: string): string | undefined =>
    matchers.filter((m) => m.regex.test(path)).sort((a, b) => a.params - b.params)[0]?.template;
  return {
    templateOf,
    /** Problems with the recorded responses: undocumented statuses, headers, or bodies that do not match. */
    check(responses: typeof recorded): string[] {
      const wrong: string[] = [];
      for (const r of responses) {
        const template = templateOf(r.path);
        const operation = template === undefined ? undefined : paths[template]?.[r.method];
        if (operation === undefined) continue; // an undocumented path or method (404, 405): nothing to hold it to
        const doc = operation.responses[String(r.status)];
        if (doc === undefined) {
          wrong.push(`${r.method.toUpperCase()} ${r.path} answered ${r.status}, which ${template} does not document`);
          continue;
        }
        const declared = new Set(Object.keys(doc.headers ?? {}).map((name) => name.toLowerCase()));
        for (const name of r.headers ?? []) {
          if (!GENERIC_HEADERS.test(name) && !declared.has(name)) wrong.push(`${r.method.toUpperCase()} ${r.path} ${r.status}: header ${name} is not documented`);
        }
        if (r.contentType === 'text/event-stream') continue;
        // A documented answer without content (a preflight's 204) holds when none came.
        if (doc.content === undefined && r.contentType === '' && r.body === undefined) continue;
        const schema = doc.content?.[r.contentType]?.schema;
        if (schema === undefined) {
          wrong.push(`${r.method.toUpperCase()} ${r.path} ${r.status}: content type ${r.contentType} is not documented`);
          continue;
        }
        // Keyed by the schema itself: every problem response shares one ($ref Problem), compiled once.
        const key = JSON.stringify(schema);
        let validate = compiled.get(key);
        if (validate === undefined) {
          validate = ajv.compile({ ...schema, components });
          compiled.set(key, validate);
        }
        if (!validate(r.body)) wrong.push(`${r.method.toUpperCase()} ${r.path} ${r.status}: ${ajv.errorsText(validate.errors)}`);
      }
      return wrong;
    },
  };
}
