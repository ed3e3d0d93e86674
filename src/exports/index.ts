// The exports' public surface; src/index.ts re-exports it.
export { toMcpTools } from './mcp.js';
export { toOpenAITools } from './openai.js';
export { toAnthropicTools, toAnthropicToolReferences } from './anthropic.js';
export { toGeminiTools } from './gemini.js';
export { toAiSdkTools } from './ai-sdk.js';
export { lintTools } from './lint.js';
export { toMcpCallToolResult, toAnthropicToolResult, toOpenAIToolOutput } from './results.js';
export type { McpCallToolResult, AnthropicToolResult, OpenAIChatToolOutput, OpenAIResponsesToolOutput } from './results.js';
export { LINT_PROVIDERS } from './types.js';
export type * from './types.js';
