// `tool-registry calls`: the audit log of MCP tool calls (registry.listCalls), newest first.
import type { CallRecord } from '../index.js';
import type { CliContext } from './commands.js';
import { withRegistry } from './database.js';
import { cell, formatTable, toJson } from './output.js';

export interface CallsCommandOptions {
  readonly tool?: string;
  readonly token?: string;
  readonly since?: string;
  readonly limit?: number;
  readonly before?: number;
  readonly json?: boolean;
}

const CALLS_LIMIT_DEFAULT = 100;

/** The table of `calls`: one row per call, newest first. */
export function formatCalls(calls: readonly CallRecord[]): string {
  const dash = (value: string | null): string => (value === null ? '-' : cell(value));
  return formatTable(
    ['ID', 'AT', 'TOKEN', 'PERSONA', 'NAMESPACE', 'TOOL', 'VERSION', 'UPSTREAM', 'MS', 'OUTCOME'],
    calls.map((call) => [
      String(call.id),
      cell(call.at),
      dash(call.token),
      dash(call.persona),
      cell(call.namespace),
      cell(call.tool),
      dash(call.version),
      dash(call.upstream),
      String(call.duration_ms),
      cell(call.outcome),
    ]),
  );
}

export async function callsCommand(context: CliContext, options: CallsCommandOptions): Promise<void> {
  await withRegistry(context.database, 'readonly', async (registry) => {
    const limit = options.limit ?? CALLS_LIMIT_DEFAULT;
    const calls = await registry.listCalls({
      limit,
      ...(options.tool === undefined ? {} : { tool: options.tool }),
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(options.since === undefined ? {} : { since: options.since }),
      ...(options.before === undefined ? {} : { before: options.before }),
    });
    const last = calls.at(-1);
    const nextBefore = calls.length === limit && last !== undefined ? last.id : null;
    if (options.json === true) context.stdout.write(toJson({ calls, next_before: nextBefore }));
    else if (calls.length === 0) context.stdout.write('no calls recorded that match\n');
    else context.stdout.write(formatCalls(calls) + (nextBefore === null ? '' : `older calls: --before ${nextBefore}\n`));
  });
}
