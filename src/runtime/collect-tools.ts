import { DuplicateToolError } from '../core/errors.js';
import { previewValue } from '../core/issues.js';
import { assertTool } from './define-tool.js';
import type { Tool } from './define-tool.js';

/**
 * The tools of a constructor argument, in the given order: each must be a Tool made by
 * `defineTool` (else TypeError), and no name may come twice (`DUPLICATE_TOOL`, paths `[i]`).
 */
export function collectTools(where: string, tools: unknown): Tool[] {
  if (tools === null || typeof tools !== 'object' || typeof (tools as Iterable<unknown>)[Symbol.iterator] !== 'function') {
    throw new TypeError(`${where}: tools must be an array (or iterable) of Tools, got ${previewValue(tools)}`);
  }
  const seen = new Map<string, number>();
  const list: Tool[] = [];
  for (const tool of tools as Iterable<unknown>) {
    assertTool(tool, `${where}: tools[${list.length}]`);
    const earlier = seen.get(tool.name);
    if (earlier !== undefined) throw new DuplicateToolError(tool.name, `[${list.length}]`, `[${earlier}]`);
    seen.set(tool.name, list.length);
    list.push(tool);
  }
  return list;
}
