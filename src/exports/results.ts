// The loop back: a runtime ToolResult (ToolSet.invoke's answer) as each provider wants it.
import type { JsonObject } from '../core/contracts.js';
import { isPlainRecord } from '../core/canonical.js';
import type { ToolResult } from '../runtime/tool-result.js';
import { isMarkedMcpContent } from '../core/mcp-content-mark.js';
import type { McpContent, McpContentBlock } from '../runtime/mcp-content.js';

/** An MCP `CallToolResult`. */
export interface McpCallToolResult {
  content: McpContentBlock[];
  structuredContent?: JsonObject;
  isError?: boolean;
  _meta?: JsonObject;
}

/** An Anthropic `tool_result` content block. */
export interface AnthropicToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: true;
}

/** A Chat Completions tool message. */
export interface OpenAIChatToolOutput {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

/** A Responses API `function_call_output` input item. */
export interface OpenAIResponsesToolOutput {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

function checkResult(caller: string, result: unknown): asserts result is ToolResult {
  if (typeof result !== 'object' || result === null || typeof (result as { success?: unknown }).success !== 'boolean') {
    throw new TypeError(`${caller}: expected a ToolResult ({ success: true, data } or { success: false, code, error })`);
  }
  if (!(result as { success: boolean }).success && typeof (result as { error?: unknown }).error !== 'string') {
    throw new TypeError(`${caller}: an unsuccessful ToolResult needs an error message`);
  }
}

function checkId(caller: string, name: string, id: unknown): asserts id is string {
  if (typeof id !== 'string' || id === '') throw new TypeError(`${caller}: ${name} must be a non-empty string, got ${JSON.stringify(id)}`);
}

/**
 * The text a model reads: a string result as it is, other data as JSON (`""` for
 * undefined); a failure as `CODE: message`, then one line per argument issue (`/path: message`).
 */
export function resultText(caller: string, result: ToolResult): string {
  if (!result.success) {
    const issues = (result.issues ?? []).map((issue) => `\n${issue.path === '' ? '/' : issue.path}: ${issue.message}`);
    return `${result.code}: ${result.error}${issues.join('')}`;
  }
  const { data } = result;
  if (typeof data === 'string') return data;
  if (data === undefined) return '';
  let text: string | undefined;
  try {
    text = JSON.stringify(data);
  } catch (error) {
    throw new TypeError(`${caller}: the result's data is not JSON: ${(error as Error).message}`, { cause: error });
  }
  if (text === undefined) throw new TypeError(`${caller}: the result's data is not JSON (a ${typeof data})`);
  return text;
}

/**
 * A `ToolResult` as an MCP `CallToolResult`: `{ content: [{ type: 'text', text }],
 * structuredContent?, isError? }`. `structuredContent` (a copy) only when the data is a
 * plain object, as the protocol requires; `isError: true` for a failure. Data made by
 * `mcpContent` is that `CallToolResult` as it is.
 */
export function toMcpCallToolResult(result: ToolResult): McpCallToolResult {
  checkResult('toMcpCallToolResult', result);
  // A handler's MCP content goes as it is (a shallow copy the caller may add `_meta` to).
  if (result.success && isMarkedMcpContent(result.data)) {
    const data = result.data as McpContent;
    return { ...data, content: [...data.content] } as McpCallToolResult;
  }
  const text = resultText('toMcpCallToolResult', result);
  const out: McpCallToolResult = { content: [{ type: 'text', text }] };
  if (result.success && isPlainRecord(result.data)) {
    // What was sent, parsed back; a toJSON can turn an object into a string, array or null.
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) out.structuredContent = parsed as JsonObject;
  }
  if (!result.success) out.isError = true;
  return out;
}

/** A `ToolResult` as an Anthropic `tool_result` block: `{ type, tool_use_id, content, is_error? }`. */
export function toAnthropicToolResult(result: ToolResult, toolUseId: string): AnthropicToolResult {
  checkResult('toAnthropicToolResult', result);
  checkId('toAnthropicToolResult', 'toolUseId', toolUseId);
  const out: AnthropicToolResult = { type: 'tool_result', tool_use_id: toolUseId, content: resultText('toAnthropicToolResult', result) };
  if (!result.success) out.is_error = true;
  return out;
}

/**
 * A `ToolResult` as an OpenAI tool output: Chat `{ role: 'tool', tool_call_id, content }`
 * (default) or Responses `{ type: 'function_call_output', call_id, output }`.
 */
export function toOpenAIToolOutput(result: ToolResult, callId: string, options?: { api?: 'chat' }): OpenAIChatToolOutput;
export function toOpenAIToolOutput(result: ToolResult, callId: string, options: { api: 'responses' }): OpenAIResponsesToolOutput;
export function toOpenAIToolOutput(result: ToolResult, callId: string, options: { api?: 'chat' | 'responses' } = {}): OpenAIChatToolOutput | OpenAIResponsesToolOutput {
  checkResult('toOpenAIToolOutput', result);
  checkId('toOpenAIToolOutput', 'callId', callId);
  const api = options.api ?? 'chat';
  if (api !== 'chat' && api !== 'responses') throw new TypeError(`toOpenAIToolOutput: api must be 'chat' or 'responses', got ${JSON.stringify(api)}`);
  const text = resultText('toOpenAIToolOutput', result);
  return api === 'chat' ? { role: 'tool', tool_call_id: callId, content: text } : { type: 'function_call_output', call_id: callId, output: text };
}
