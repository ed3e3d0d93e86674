// `--tools MODULE`: the tools an ES module exports.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ToolRegistryError, ToolSet } from '../index.js';
import type { Tool } from '../index.js';

/** A tools module that cannot be loaded or exports no tools; `message` says which and why. */
export class ToolsModuleError extends Error {
  readonly code = 'TOOLS_MODULE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ToolsModuleError';
  }
}

/** What a module threw, in one readable line: an Error's name and message, anything else (`throw null`, `throw 42`) as its JSON. */
function describeThrown(error: unknown): string {
  try {
    return describe(error);
  } catch {
    // A getter of its message, or a Proxy, that throws (even on instanceof): reading it must not turn a usage error into INTERNAL.
    return 'it threw a value that cannot be shown (reading its name or message threw)';
  }
}

function describe(error: unknown): string {
  if (error instanceof StalledImport) return error.message;
  if (!(error instanceof Error)) {
    let text: string | undefined;
    try {
      text = JSON.stringify(error);
    } catch {
      // A value JSON cannot show (a cycle, a BigInt): its type says enough.
    }
    return `it threw ${text ?? typeof error} (not an Error)`;
  }
  return `${error.name}: ${error.message}`;
}

/** The import of a module whose top-level await nothing is left to settle. */
class StalledImport extends Error {
  constructor() {
    super('its top-level await never settled (nothing was left to run that could settle it)');
    this.name = 'StalledImport';
  }
}

/**
 * `import(href)`, rejected with StalledImport when the event loop runs empty first: a
 * top-level await that nothing will settle. Node would otherwise end the process with exit
 * code 13 and not a word. Rejected too with what the module threw outside its import's own
 * promise while it loaded: a throw in a timer its top-level await waits on, or a rejection
 * its evaluation left unhandled (heard one turn of the event loop after the import settled);
 * Node would otherwise end the process with exit code 1 and a stack, after the usage error.
 */
async function importUnlessStalled(href: string): Promise<Record<string, unknown>> {
  let fail: ((error: unknown) => void) | undefined;
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  const stalled = (): void => fail?.(new StalledImport());
  const thrown = (error: unknown): void => fail?.(error);
  process.once('beforeExit', stalled);
  process.on('uncaughtException', thrown);
  process.on('unhandledRejection', thrown);
  try {
    const namespace = (await Promise.race([import(href), failed])) as Record<string, unknown>;
    await Promise.race([new Promise((settle) => setImmediate(settle)), failed]);
    return namespace;
  } finally {
    process.removeListener('beforeExit', stalled);
    process.removeListener('uncaughtException', thrown);
    process.removeListener('unhandledRejection', thrown);
  }
}

function looksLikeTool(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'spec' in value && typeof (value as { handler?: unknown }).handler === 'function';
}

function looksLikeToolSet(value: unknown): value is { tools(): unknown[] } {
  return typeof value === 'object' && value !== null && typeof (value as ToolSet).tools === 'function' && typeof (value as ToolSet).resolve === 'function';
}

/** The tools of `candidates` as one ToolSet; a forged or foreign Tool is named. */
function toolSetOf(where: string, candidates: readonly unknown[]): ToolSet {
  try {
    return new ToolSet(candidates as Tool[]);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    throw new ToolsModuleError(
      `${where}: ${error.message}. Tools must come from defineTool() of the same tool-registry package this command runs ` +
        `(install tool-registry in the project and run its own command, e.g. npx tool-registry)`,
      { cause: error },
    );
  }
}

/**
 * The tools an ES module exports: its default export when that is an array of Tools or a
 * ToolSet, else every named export that is a Tool. `path` is a file path, relative to the
 * working folder or absolute. Returns them as a ToolSet (names unique, in name order).
 * @throws ToolsModuleError (`code` TOOLS_MODULE) when the file is missing, fails to load or
 *   exports no tools (an empty default export included); DUPLICATE_TOOL when two share a name
 */
export async function loadToolsModule(path: string): Promise<ToolSet> {
  if (typeof path !== 'string' || path === '') throw new TypeError('loadToolsModule(): path must be a non-empty string');
  const file = resolve(path);
  if (!existsSync(file)) throw new ToolsModuleError(`the tools module ${file} does not exist`);
  let namespace: Record<string, unknown>;
  try {
    namespace = await importUnlessStalled(pathToFileURL(file).href);
  } catch (error) {
    throw new ToolsModuleError(`cannot load the tools module ${file}: ${describeThrown(error)}`, { cause: error });
  }
  try {
    return toolsOf(file, namespace);
  } catch (error) {
    // A getter or a Proxy among the exports that throws while they are read: the module's fault, said as such.
    if (error instanceof ToolsModuleError || error instanceof ToolRegistryError) throw error;
    throw new ToolsModuleError(`the tools module ${file}: reading its exports failed: ${describeThrown(error)}`, { cause: error });
  }
}

/** The tools of a loaded module's default export, an array or a ToolSet; one without any is refused as no tools at all. */
function defaultTools(file: string, tools: readonly unknown[]): ToolSet {
  // Served as it was, without a word (nothing at all under --no-upstreams): as much a mistake as no tools exported.
  if (tools.length === 0) throw new ToolsModuleError(`the tools module ${file} exports no tools: its default export holds none (an empty array or ToolSet)`);
  return toolSetOf(`${file}: the default export`, tools);
}

/** The tools of a loaded module's exports (see loadToolsModule). */
function toolsOf(file: string, namespace: Record<string, unknown>): ToolSet {
  const given = namespace.default;
  if (Array.isArray(given)) return defaultTools(file, given);
  if (looksLikeToolSet(given)) {
    let tools: unknown[];
    try {
      tools = given.tools();
    } catch (error) {
      throw new ToolsModuleError(`the tools module ${file}: the default export's tools() failed: ${describeThrown(error)}`, { cause: error });
    }
    return defaultTools(file, tools);
  }
  const named = Object.entries(namespace).filter(([name, value]) => name !== 'default' && looksLikeTool(value));
  if (named.length === 0) {
    throw new ToolsModuleError(`the tools module ${file} exports no tools: export an array of tools (or a ToolSet) as default, or each tool by name`);
  }
  return toolSetOf(`${file}: the named exports (${named.map(([name]) => name).join(', ')})`, named.map(([, value]) => value));
}
