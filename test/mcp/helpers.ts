// What the MCP tests share: the SDK's own Client over stdio (a spawned `tool-registry mcp`),
// every page of tools/list, and waiting for list_changed without timing assertions.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
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

/** A JSON-RPC reply as a raw stdio client reads it. */
export interface RawReply {
  readonly id: string | number | null;
  readonly result?: Record<string, unknown>;
  readonly error?: { code: number; message: string };
}

/** `tool-registry mcp` spoken to line by line, without the SDK: for what the SDK's client would never send. */
export interface RawStdio {
  readonly child: ChildProcess;
  /** Writes one line: a string as it is, anything else as its JSON. */
  send(message: unknown): void;
  /** Waits for the reply with this id. */
  reply(id: string | number): Promise<RawReply>;
  /** Waits until `count` replies with id null came, and returns them all, in order. */
  nullReplies(count: number): Promise<RawReply[]>;
  /** Every line of stdout so far, parsed (an array for a batch's answer). */
  lines(): unknown[];
  stderr(): string;
  /** Its exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
}

/** Spawns `tool-registry mcp ARGS` in `cwd` with its stdio as pipes. */
export function spawnRawStdio(args: readonly string[], cwd: string): RawStdio {
  const child = spawn(process.execPath, [CLI, 'mcp', ...args], { cwd, env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: unknown[] = [];
  let pending = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    for (const line of complete) lines.push(JSON.parse(line));
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // The child may be gone before a write lands (the tests that end it).
  child.stdin.on('error', () => undefined);
  // A generous deadline (a loaded machine starts a node process in seconds); a failure shows the child's stderr.
  const waitFor = (condition: () => boolean, what: string): Promise<void> =>
    until(condition, what, { timeoutMs: 60_000 }).catch((error: Error) => {
      throw new Error(`${error.message}; the child's stderr: ${JSON.stringify(stderr)}`);
    });
  const replies = (): RawReply[] => lines.filter((line): line is RawReply => typeof line === 'object' && line !== null && !Array.isArray(line) && 'id' in line);
  return {
    child,
    send: (message) => child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`),
    reply: async (id) => {
      await waitFor(() => replies().some((reply) => reply.id === id), `the reply to request ${JSON.stringify(id)}`);
      return replies().find((reply) => reply.id === id) as RawReply;
    },
    nullReplies: async (count) => {
      const nulls = (): RawReply[] => replies().filter((reply) => reply.id === null);
      await waitFor(() => nulls().length >= count, `${count} replies with id null`);
      return nulls();
    },
    lines: () => lines.slice(),
    stderr: () => stderr,
    exited: new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code))),
  };
}

/** The initialize request of a raw client, at `revision`. */
export function initializeRequest(id: number, revision = '2025-11-25'): object {
  return { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: revision, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
}
