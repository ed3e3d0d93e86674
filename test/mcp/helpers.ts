// What the MCP tests share: the SDK's own Client over stdio (a spawned `tool-registry mcp`),
// every page of tools/list, and waiting for list_changed without timing assertions.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { join } from 'node:path';
import { CLI, ROOT, childEnv } from '../cli/helpers.js';
import { until } from '../support/waiting.js';

export const TOOLS_MODULE = join(ROOT, 'test', 'fixtures', 'mcp-tools.mjs');

/** A client, and how many list_changed notifications it got so far. */
export interface Watched {
  readonly client: Client;
  readonly changes: () => number;
  /** Waits until more than `seen` notifications came (a generous deadline, no timing assertion). */
  readonly changedAfter: (seen: number) => Promise<void>;
  readonly stderr: () => string;
}

export function watch(client: Client, stderr: () => string = () => ''): Watched {
  let count = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    count += 1;
  });
  return { client, changes: () => count, changedAfter: (seen) => until(() => count > seen, 'notifications/tools/list_changed', { timeoutMs: 10_000 }), stderr };
}

/** Spawns `tool-registry mcp ARGS` in `cwd` and connects the SDK's Client to it. */
export async function connectStdio(args: readonly string[], cwd: string): Promise<Watched> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...args], cwd, env: childEnv() as Record<string, string>, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'tool-registry-test', version: '1.0.0' });
  const watched = watch(client, () => stderr);
  await client.connect(transport);
  return watched;
}

/** Every tool of tools/list, following nextCursor; and the size of each page. */
export async function listAll(client: Client): Promise<{ tools: Tool[]; pages: number[] }> {
  const tools: Tool[] = [];
  const pages: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    pages.push(page.tools.length);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { tools, pages };
}

/** The JSON-RPC error code a promise rejects with. */
export async function protocolErrorOf(promise: Promise<unknown>): Promise<number | undefined> {
  try {
    await promise;
  } catch (error) {
    return (error as { code?: number }).code;
  }
  throw new Error('expected a protocol error, got a result');
}

/** The text of a tools/call result's first block. */
export function textOf(result: object): string {
  const [first] = ((result as { content?: unknown }).content ?? []) as { type: string; text?: string }[];
  return first?.text ?? '';
}
