// The public shapes of the exports: lint findings, options, and what each exporter returns.
import type { JsonObject, JsonValue, ToolRegistration, ToolSpec, ToolSpecInput } from '../core/contracts.js';
import type { Tool } from '../runtime/define-tool.js';
import type { ToolSet } from '../runtime/tool-set.js';
import type { ToolBox } from '../runtime/tool-box.js';

/** The providers `lintTools` knows. `gemini` is the JSON Schema mode (`parametersJsonSchema`), `gemini-openapi` the `parameters` subset. */
export type LintProvider = 'mcp' | 'openai' | 'anthropic' | 'gemini' | 'gemini-openapi';

/** Every provider id, in the default order of `lintTools`. */
export const LINT_PROVIDERS: readonly LintProvider[] = Object.freeze(['mcp', 'openai', 'anthropic', 'gemini', 'gemini-openapi']);

/** `error`: the provider rejects it (exporters refuse it); `warning`: accepted, but likely to bite. */
export type LintSeverity = 'error' | 'warning';

/**
 * One problem a provider would have with a tool (or with the whole request).
 * `path` is a JSON Pointer into the ToolSpec (`/tool_name`, `/input_schema/properties/url/format`);
 * a finding about the whole request has `tool_name: null` and path `""`.
 */
export interface LintFinding {
  readonly tool_name: string | null;
  /** The provider whose rule it is; `ai-sdk` only for the AI SDK exporter's duplicate-name check. */
  readonly provider: LintProvider | 'ai-sdk';
  readonly path: string;
  /** A stable kebab-case rule id, such as `name-pattern` or `strict-additional-properties`. */
  readonly rule: string;
  readonly severity: LintSeverity;
  readonly message: string;
}

/**
 * Anything shaped like a runtime `Tool`: its `spec` and a `handler`. The exports read tools
 * by shape (a `Tool` from `defineTool` is one), so they depend on the runtime's types only.
 */
export interface ToolLike {
  readonly spec: ToolSpec | ToolSpecInput;
  readonly handler: (...args: never[]) => unknown;
}

/** Anything shaped like a `ToolSet`: `tools()` returns its tools. */
export interface ToolSetLike {
  tools(): readonly ToolLike[];
}

/** Anything shaped like a `ToolBox`: `all()` returns its current tools in insertion order. */
export interface ToolBoxLike {
  all(): readonly ToolLike[];
}

/** What exporters and `lintTools` take: runtime tools, specs or registrations (disabled ones are left out). */
export type ExportItem = Tool | ToolLike | ToolSpec | ToolSpecInput | ToolRegistration;
/** A list of items, a tool set (tools in name order) or a turn's tool box (in insertion order). */
export type ExportItems = readonly ExportItem[] | ToolSet | ToolSetLike | ToolBox | ToolBoxLike;

/** Options of `lintTools`. */
export interface LintOptions {
  /** Which providers' rules to run; default `['mcp', 'openai', 'anthropic', 'gemini']`. */
  readonly providers?: readonly LintProvider[];
  /** Also run the strict-mode rules of OpenAI and Anthropic; default false. */
  readonly strict?: boolean;
  /** The MCP revision the `mcp` rules check against; default `'2025-11-25'`. */
  readonly revision?: McpRevision;
}

/** What every exporter does with a tool the provider would reject. */
export interface ExportOptions {
  /** `'throw'` (default): `PROVIDER_INCOMPATIBLE`; `'skip'`: leave those tools out (`lintTools` says why). */
  readonly onIncompatible?: 'throw' | 'skip';
  /**
   * A deprecated registration (issue 27): `'annotate'` (default) adds a line `Deprecated: …`
   * (the message, the replacement, the sunset) to its description; `'keep'` exports it as
   * registered; `'omit'` leaves it out.
   */
  readonly deprecated?: 'annotate' | 'keep' | 'omit';
}

/** The MCP revisions the exporter knows. */
export type McpRevision = '2025-11-25' | '2025-06-18';

export interface McpExportOptions extends ExportOptions {
  /** Default `'2025-11-25'`. */
  readonly revision?: McpRevision;
  /**
   * An `output_schema` whose root is not `type: "object"` (MCP's `outputSchema` must be one):
   * `'error'` (default) refuses the tool; `'omit'` exports it without `outputSchema`, so a
   * client takes its results as text (what the MCP server does).
   */
  readonly nonObjectOutputSchema?: 'error' | 'omit';
}

/** MCP's `ToolAnnotations`: behaviour hints a client may show or use (never for safety). */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface OpenAIExportOptions extends ExportOptions {
  /** `'chat'` (Chat Completions, default) or `'responses'` (Responses API). */
  readonly api?: 'chat' | 'responses';
  /** Structured Outputs for function calls; default false. Always emitted as a boolean. */
  readonly strict?: boolean;
  /**
   * Tool search (issue 26; Responses API only): `true` marks every function
   * `defer_loading: true` and adds `{ "type": "tool_search" }`; an object may `keep` tools
   * loaded, or leave the search tool out (`toolSearch: 'none'`).
   */
  readonly deferLoading?: boolean | DeferLoadingOptions<'hosted' | 'none'>;
}

export interface AnthropicExportOptions extends ExportOptions {
  /** Strict tool use: adds `strict: true` to every tool and runs the strict rules; default false. */
  readonly strict?: boolean;
  /**
   * Tool search (issue 26): `true` marks every tool `defer_loading: true` and adds Anthropic's
   * BM25 tool search tool (`tool_search_tool_bm25_20251119`); an object chooses: `keep` names
   * tools sent loaded (your own search tool, say), `toolSearch` the server tool (`'bm25'`,
   * `'regex'`) or `'client'` (none: your tool answers with `toAnthropicToolReferences`).
   */
  readonly deferLoading?: boolean | DeferLoadingOptions<'bm25' | 'regex' | 'client'>;
}

/** Which tools stay loaded, and which search tool is added (issue 26). */
export interface DeferLoadingOptions<Search extends string> {
  /** Names of tools sent without `defer_loading` (the model sees them from the start). */
  readonly keep?: readonly string[];
  /** The search tool added after the tools. */
  readonly toolSearch?: Search;
}

/** Anthropic's server-side tool search tools (`BetaToolSearchToolBm25_20251119` and the regex one). */
export type AnthropicToolSearchTool =
  | { type: 'tool_search_tool_bm25_20251119'; name: 'tool_search_tool_bm25' }
  | { type: 'tool_search_tool_regex_20251119'; name: 'tool_search_tool_regex' };

/** A `tool_reference` content block of a `tool_result`: loads a deferred tool. */
export interface AnthropicToolReference {
  type: 'tool_reference';
  tool_name: string;
}

/** OpenAI's hosted tool search tool of the Responses API. */
export interface OpenAIToolSearchTool {
  type: 'tool_search';
}

export interface GeminiExportOptions extends ExportOptions {
  /** `'json'` (default): `parametersJsonSchema`; `'openapi'`: `parameters` (the OpenAPI subset). */
  readonly schema?: 'json' | 'openapi';
}

/** A JSON Schema whose root is an object schema, as every provider requires. */
export type ObjectJsonSchema = { type: 'object'; [key: string]: JsonValue };

/** One entry of an MCP `tools/list` result. */
export interface McpTool {
  name: string;
  /** A runtime Tool's `title`, when it has one. */
  title?: string;
  description?: string;
  inputSchema: ObjectJsonSchema;
  outputSchema?: ObjectJsonSchema;
  /** A runtime Tool's `annotations`, when it has any. */
  annotations?: McpToolAnnotations;
}

/** A Chat Completions tool (`ChatCompletionTool` of the `openai` package). */
export interface OpenAIChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters: ObjectJsonSchema; strict: boolean };
}

/** A Responses API function tool (`FunctionTool` of the `openai` package). */
export interface OpenAIResponsesTool {
  type: 'function';
  name: string;
  description?: string;
  parameters: ObjectJsonSchema;
  strict: boolean;
  /** Set with `deferLoading`: the model sees the name and description until a search loads it. */
  defer_loading?: true;
}

/** A custom tool of the Anthropic Messages API (`Tool` of `@anthropic-ai/sdk`). */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: ObjectJsonSchema;
  strict?: true;
  /** Set with `deferLoading`: left out of the prompt until a tool search loads it. */
  defer_loading?: true;
}

/** One Gemini function declaration; a tool without parameters has neither parameters field. */
export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parametersJsonSchema?: ObjectJsonSchema;
  parameters?: ObjectJsonSchema;
}

/** The Gemini `Tool` object: `{ functionDeclarations }`. */
export interface GeminiTools {
  functionDeclarations: GeminiFunctionDeclaration[];
}

/** Vercel AI SDK tools by name: plain JSON Schema (wrap it with the AI SDK's `jsonSchema()`). */
export type AiSdkTools = Record<string, { description?: string; inputSchema: JsonObject }>;
