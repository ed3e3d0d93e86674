// MCP content a handler may return (text, image, audio, embedded resource, resource link),
// checked and frozen once by mcpContent(); invoke and the MCP server recognise it by identity.
import { z } from 'zod';
import { deepFreeze } from '../core/canonical.js';
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
const Result = z.strictObject({
  content: z.array(Block),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
  _meta: meta,
});

function build(input: McpContentInput): McpContent {
  const parsed = Result.safeParse(input);
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
