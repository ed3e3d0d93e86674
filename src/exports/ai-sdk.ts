// The Vercel AI SDK: tools by name with plain JSON Schema. Provider quirks stay with the
// provider the AI SDK calls (lint for it with lintTools); the only rule here is that a name
// appears once, because it becomes a key.
import { exportWith } from './findings.js';
import type { ProviderRules } from './rule-set.js';
import { copyJson } from './schema.js';
import type { AiSdkTools, ExportItems, ExportOptions } from './types.js';

const aiSdkRules: ProviderRules = {
  provider: 'ai-sdk',
  label: 'the AI SDK',
  tool: () => [],
  request: () => [],
};

/**
 * The tools as a Vercel AI SDK tool record: `{ [tool_name]: { description?, inputSchema } }`
 * with plain JSON Schema (wrap each with the AI SDK's `jsonSchema()`; add `execute` yourself).
 * @throws PROVIDER_INCOMPATIBLE for a name given twice, unless `onIncompatible: 'skip'`
 */
export function toAiSdkTools(items: ExportItems, options: ExportOptions = {}): AiSdkTools {
  const entries = exportWith('toAiSdkTools', items, options, aiSdkRules, { strict: false, revision: '2025-11-25' }, (spec) => {
    const inputSchema = copyJson(spec.input_schema);
    return [spec.tool_name, spec.description === null ? { inputSchema } : { description: spec.description, inputSchema }] as const;
  });
  // fromEntries defines own data properties, so a tool named __proto__ stays a key.
  return Object.fromEntries(entries);
}
