// MCP content a handler may return (text, image, audio, embedded resource, resource link),
// checked and frozen once by mcpContent(); invoke and the MCP server recognise it by identity.
import { z } from 'zod';
import { deepFreeze, hasPlainPrototype } from '../core/canonical.js';
import type { JsonObject } from '../core/contracts.js';
import { isMarkedMcpContent, markMcpContent } from '../core/mcp-content-mark.js';
import { jsonIssue } from './tool-result.js';

/** Optional hints on a content block, as MCP names them (`Annotations`). */
export interface McpContentAnnotations {
  readonly audience?: readonly ('user' | 'assistant')[];
  readonly priority?: number;
  readonly lastModified?: string;
}

interface BlockExtras {
  readonly annotations?: McpContentAnnotations;
  readonly _meta?: JsonObject;
}

/** A text block. */
export interface McpTextContent extends BlockExtras {
  readonly type: 'text';
  readonly text: string;
}
/** An image: base64 `data` and its `mimeType` (`image/png`). */
export interface McpImageContent extends BlockExtras {
  readonly type: 'image';
  readonly data: string;
  readonly mimeType: string;
}
/** Audio: base64 `data` and its `mimeType` (`audio/wav`). */
export interface McpAudioContent extends BlockExtras {
  readonly type: 'audio';
  readonly data: string;
  readonly mimeType: string;
}
/** The contents of a resource: `text` or base64 `blob`. */
export type McpResourceContents =
  | { readonly uri: string; readonly mimeType?: string; readonly text: string; readonly _meta?: JsonObject }
  | { readonly uri: string; readonly mimeType?: string; readonly blob: string; readonly _meta?: JsonObject };
/** A resource embedded in the result. */
export interface McpEmbeddedResource extends BlockExtras {
  readonly type: 'resource';
  readonly resource: McpResourceContents;
}
/** A link to a resource the client may read (`resources/read`); not embedded. */
export interface McpResourceLink extends BlockExtras {
  readonly type: 'resource_link';
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  readonly size?: number;
}
/** One block of an MCP tool result's `content`. */
export type McpContentBlock = McpTextContent | McpImageContent | McpAudioContent | McpEmbeddedResource | McpResourceLink;

/** What `mcpContent` takes: an MCP `CallToolResult`. */
export interface McpContentInput {
  readonly content: readonly McpContentBlock[];
  /** A JSON object; checked against the tool's `output_schema` when that schema constrains anything. */
  readonly structuredContent?: JsonObject;
  /** The tool's own verdict that the call failed (the model should see why). */
  readonly isError?: boolean;
  readonly _meta?: JsonObject;
}

/** A checked, deeply frozen MCP tool result, made only by `mcpContent` (see `isMcpContent`). */
export interface McpContent extends McpContentInput {
  readonly content: readonly McpContentBlock[];
}

/**
 * The full check's schema, built at its first use: zod builds a schema when it is declared, and
 * most processes that load the runtime never check an MCP result.
 */
function buildResultSchema() {
  // Base64 as MCP carries it (RFC 4648, padded; the SDK's client refuses anything else).
  const base64 = z.string().regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, { error: 'must be base64 (RFC 4648, padded)' });
  const meta = z.record(z.string(), z.unknown()).optional();
  const annotations = z
    .strictObject({
      audience: z.array(z.enum(['user', 'assistant'])).optional(),
      priority: z.number().min(0).max(1).optional(),
      lastModified: z.string().optional(),
    })
    .optional();
  const extras = { annotations, _meta: meta };
  const Block = z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('text'), text: z.string(), ...extras }),
    z.strictObject({ type: z.literal('image'), data: base64, mimeType: z.string().min(1), ...extras }),
    z.strictObject({ type: z.literal('audio'), data: base64, mimeType: z.string().min(1), ...extras }),
    z.strictObject({
      type: z.literal('resource'),
      resource: z.union([
        z.strictObject({ uri: z.string().min(1), mimeType: z.string().optional(), text: z.string(), _meta: meta }),
        z.strictObject({ uri: z.string().min(1), mimeType: z.string().optional(), blob: base64, _meta: meta }),
      ]),
      ...extras,
    }),
    z.strictObject({
      type: z.literal('resource_link'),
      uri: z.string().min(1),
      name: z.string(),
      title: z.string().optional(),
      description: z.string().optional(),
      mimeType: z.string().optional(),
      size: z.number().int().nonnegative().optional(),
      icons: z.array(z.record(z.string(), z.unknown())).optional(),
      ...extras,
    }),
  ]);
  return z.strictObject({
    content: z.array(Block),
    structuredContent: z.record(z.string(), z.unknown()).optional(),
    isError: z.boolean().optional(),
    _meta: meta,
  });
}
let resultSchema: ReturnType<typeof buildResultSchema> | undefined;

/** Returned by the quick copy for anything it leaves to the full check. */
const UNUSUAL = Symbol('unusual');
/** Objects and arrays the quick copy makes at most; a bigger result (or a shared object met very often) takes the full check. */
const QUICK_NODES = 100_000;
const QUICK_DEPTH = 64;

/** Budget of one quick copy. */
interface Budget {
  nodes: number;
}

/**
 * A frozen copy of JSON data (own enumerable keys; a key whose value is undefined is kept as
 * structuredClone keeps it), or UNUSUAL for anything the full check should judge: a value
 * that is not JSON, a `__proto__` key, an array with holes or extra keys, too deep or big.
 */
function quickJson(value: unknown, depth: number, budget: Budget): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : UNUSUAL;
    case 'object':
      break;
    default:
      return UNUSUAL;
  }
  if (value === null) return null;
  if (depth > QUICK_DEPTH || --budget.nodes < 0) return UNUSUAL;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype || Object.keys(value).length !== value.length) return UNUSUAL;
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === undefined) return UNUSUAL;
      const copy = quickJson(item, depth + 1, budget);
      if (copy === UNUSUAL) return UNUSUAL;
      out[i] = copy;
    }
    return Object.freeze(out);
  }
  if (!hasPlainPrototype(value)) return UNUSUAL;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return UNUSUAL;
    const copy = quickJson((value as Record<string, unknown>)[key], depth + 1, budget);
    if (copy === UNUSUAL) return UNUSUAL;
    out[key] = copy;
  }
  return Object.freeze(out);
}

/** A record of a result (`structuredContent`, `_meta`) the quick path takes: JSON with string keys only (the schema refuses a symbol key). */
function quickRecord(value: unknown, budget: Budget): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.getOwnPropertySymbols(value).length > 0) return UNUSUAL;
  return quickJson(value, 1, budget);
}

/**
 * What `build` makes of the usual result, in one walk: text blocks only (`{ type: 'text',
 * text }`), JSON records, a boolean `isError`: the same checks and the same frozen copy as the
 * full path, without zod, the separate JSON walk and structuredClone. UNUSUAL for anything
 * else (other blocks, annotations, a value to refuse): the full path judges it.
 */
function quickContent(input: unknown): McpContent | typeof UNUSUAL {
  if (typeof input !== 'object' || input === null || !hasPlainPrototype(input)) return UNUSUAL;
  const given = input as Record<string, unknown>;
  // The schema's objects are strict as zod makes them: a key `for...in` yields that is not the
  // schema's is refused (a symbol key never is; structuredClone dropped it), so the same walk.
  let fields = 0;
  for (const key in given) {
    if (key !== 'content' && key !== 'structuredContent' && key !== 'isError' && key !== '_meta') return UNUSUAL;
    fields++;
  }
  const { content, structuredContent, isError, _meta } = given;
  if (!Array.isArray(content) || Object.getPrototypeOf(content) !== Array.prototype) return UNUSUAL;
  const blocks = new Array<McpTextContent>(content.length);
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i];
    if (typeof block !== 'object' || block === null || !hasPlainPrototype(block)) return UNUSUAL;
    let keys = 0;
    for (const key in block) {
      if (key !== 'type' && key !== 'text') return UNUSUAL;
      keys++;
    }
    const { type, text } = block as { type?: unknown; text?: unknown };
    if (keys !== 2 || type !== 'text' || typeof text !== 'string') return UNUSUAL;
    blocks[i] = Object.freeze({ type, text });
  }
  if (Object.keys(content).length !== content.length) return UNUSUAL;
  const out: { -readonly [K in keyof McpContentInput]: McpContentInput[K] } = { content: Object.freeze(blocks) };
  let present = 1;
  const budget: Budget = { nodes: QUICK_NODES };
  if (structuredContent !== undefined) {
    const copy = quickRecord(structuredContent, budget);
    if (copy === UNUSUAL) return UNUSUAL;
    out.structuredContent = copy as JsonObject;
    present++;
  }
  if (isError !== undefined) {
    if (typeof isError !== 'boolean') return UNUSUAL;
    out.isError = isError;
    present++;
  }
  if (_meta !== undefined) {
    const copy = quickRecord(_meta, budget);
    if (copy === UNUSUAL) return UNUSUAL;
    out._meta = copy as JsonObject;
    present++;
  }
  // A key given as undefined (the full path keeps it as it is) takes the full path.
  if (present !== fields) return UNUSUAL;
  return Object.freeze(out) as McpContent;
}

function build(input: McpContentInput): McpContent {
  const quick = quickContent(input);
  if (quick !== UNUSUAL) {
    markMcpContent(quick);
    return quick;
  }
  const parsed = (resultSchema ??= buildResultSchema()).safeParse(input);
  if (!parsed.success) {
    const first = parsed.error.issues[0] as z.core.$ZodIssue;
    throw new TypeError(`mcpContent(): ${first.path.length === 0 ? 'the result' : first.path.map(String).join('.')} ${first.message}`);
  }
  const issue = jsonIssue(input, []);
  if (issue !== undefined) throw new TypeError(`mcpContent(): ${issue.path === '' ? 'the result' : issue.path} ${issue.message}`);
  // A copy: the caller's objects stay theirs, the result is frozen.
  const copy = deepFreeze(structuredClone(parsed.data)) as McpContent;
  markMcpContent(copy);
  return copy;
}

/**
 * Makes an MCP tool result a handler can return: `content` blocks (text, image, audio,
 * embedded resource, resource link), with optional `structuredContent`, `isError` and
 * `_meta`. Checked at once (a block MCP clients would refuse, such as image data that is not
 * base64, is a TypeError) and deeply frozen (a copy). Over MCP (`createMcpServer`,
 * `serve --tools`, `mcp --tools`) it is sent as that `CallToolResult` unchanged; in-process,
 * `invoke`'s `result.data` is this very object. With an `output_schema` that constrains
 * anything, `structuredContent` is what is checked (absent: `INVALID_OUTPUT`), unless
 * `isError` is true. The constructors `mcpContent.text`, `.image`, `.audio`, `.resource` and
 * `.resourceLink` make single blocks.
 * @example
 * handler: async () => mcpContent({ content: [mcpContent.text('A red dot'), mcpContent.image(png, 'image/png')] })
 * @throws TypeError naming the first field MCP would refuse
 */
export const mcpContent: {
  (result: McpContentInput): McpContent;
  /** A text block: `{ type: 'text', text }`. */
  text(text: string): McpTextContent;
  /** An image block: base64 `data` (a Uint8Array is encoded) and its `mimeType`. */
  image(data: string | Uint8Array, mimeType: string): McpImageContent;
  /** An audio block: base64 `data` (a Uint8Array is encoded) and its `mimeType`. */
  audio(data: string | Uint8Array, mimeType: string): McpAudioContent;
  /** An embedded resource: `{ uri, mimeType?, text }` or `{ uri, mimeType?, blob }` (base64). */
  resource(resource: McpResourceContents): McpEmbeddedResource;
  /** A link to a resource: `{ uri, name, title?, description?, mimeType?, size? }`. */
  resourceLink(link: Omit<McpResourceLink, 'type'>): McpResourceLink;
} = Object.assign(build, {
  text: (text: string): McpTextContent => ({ type: 'text', text }),
  image: (data: string | Uint8Array, mimeType: string): McpImageContent => ({ type: 'image', data: encode(data), mimeType }),
  audio: (data: string | Uint8Array, mimeType: string): McpAudioContent => ({ type: 'audio', data: encode(data), mimeType }),
  resource: (resource: McpResourceContents): McpEmbeddedResource => ({ type: 'resource', resource }),
  resourceLink: (link: Omit<McpResourceLink, 'type'>): McpResourceLink => ({ type: 'resource_link', ...link }),
});

function encode(data: string | Uint8Array): string {
  return typeof data === 'string' ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
}

/** Whether `value` was made by `mcpContent` (a handler's rich MCP result). */
export function isMcpContent(value: unknown): value is McpContent {
  return isMarkedMcpContent(value);
}
