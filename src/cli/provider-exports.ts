// The provider exports and their lint, loaded by the commands that use them (`export --format`,
// `lint`) only: every other command starts without that code (the `exports` chunk).
export { lintTools, toAiSdkTools, toAnthropicTools, toGeminiTools, toMcpTools, toOpenAITools } from '../index.js';
