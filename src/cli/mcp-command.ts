// `tool-registry mcp`: the command's wiring (light: --help loads nothing else); mcp-run.ts does the work.
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import type { CliContext } from './commands.js';
import { parseNonEmpty } from './database-path.js';
import { catchStopSignals } from './stop-signals.js';

/** The options of `mcp`, as commander parses them. */
export interface McpCommandOptions {
  readonly tools?: string;
  /** `--no-upstreams` makes it false. */
  readonly upstreams?: boolean;
  readonly syncInterval?: number;
  readonly publish?: boolean;
  readonly policy?: string;
  readonly callTimeoutMs?: number;
  readonly pageSize?: number;
  readonly maxResultBytes?: number;
  readonly maxCallsInFlight?: number;
  readonly maxMessageBytes?: number;
  readonly callRetentionDays?: number;
  readonly callRetentionRows?: number;
}

/** The store's `callRetention` from `--call-retention-days` and `--call-retention-rows` (absent: the store's defaults). */
export function callRetentionOf(options: { readonly callRetentionDays?: unknown; readonly callRetentionRows?: unknown }): { callRetention?: { maxAgeDays?: number; maxRows?: number } } {
  const retention = {
    ...(typeof options.callRetentionDays === 'number' ? { maxAgeDays: options.callRetentionDays } : {}),
    ...(typeof options.callRetentionRows === 'number' ? { maxRows: options.callRetentionRows } : {}),
  };
  return Object.keys(retention).length === 0 ? {} : { callRetention: retention };
}

/** The audit log's bounds, for `mcp` and `serve` (docs/gateway.md, "Audit log"). */
function retentionOptions(command: Command): Command {
  return command
    .option('--call-retention-days <days>', 'keep audit rows (MCP tool calls) at most this many days (default 30)', parsePositive)
    .option('--call-retention-rows <rows>', 'keep at most this many audit rows, the newest (default 100000)', parsePositive);
}

/** A duration or a count on the command line: a whole number > 0. */
export function parsePositive(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) === 0) {
    throw new InvalidArgumentError(`expected a whole number > 0, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/**
 * The longest delay Node's timers keep; a longer one runs after 1 ms. The library's
 * MAX_TIMER_MS, written here because option parsing runs before the library is loaded.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** A time in ms on the command line: a whole number from 1 to the longest timer Node keeps. */
export function parseMilliseconds(value: string): number {
  const ms = /^\d{1,10}$/.test(value) ? Number(value) : 0;
  if (ms < 1 || ms > MAX_TIMER_MS) throw new InvalidArgumentError(`expected a time in ms, 1 to ${MAX_TIMER_MS}, got ${JSON.stringify(value)}`);
  return ms;
}

/**
 * A duration on the command line, in ms: a whole number with a unit (`ms`, `s`, `m`, `h`);
 * a bare number is seconds (`--sync-interval 300`, `--sync-interval 5m`).
 */
export function parseDuration(value: string): number {
  const match = /^(\d+)(ms|s|m|h)?$/.exec(value);
  const ms = match === null ? Number.NaN : Number(match[1]) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  if (!Number.isSafeInteger(ms) || ms <= 0 || ms > MAX_TIMER_MS) throw new InvalidArgumentError(`expected a duration from 1ms to ${Math.floor(MAX_TIMER_MS / 3_600_000)}h (the longest timer Node keeps) such as 300, 90s, 5m or 1h (a bare number is seconds), got ${JSON.stringify(value)}`);
  return ms;
}

/** `--sync-interval` with `--no-upstreams` is a usage error (`mcp` and `serve`): it was taken and did nothing. */
export function checkUpstreamOptions(options: object, cmd: Command): void {
  const { upstreams, syncInterval } = options as { readonly upstreams?: unknown; readonly syncInterval?: unknown };
  if (upstreams === false && syncInterval !== undefined) cmd.error('error: --sync-interval applies to the upstream tools, which --no-upstreams leaves out');
}

/** The gateway's options, shared by `mcp` and `serve`. */
function upstreamOptions(command: Command): Command {
  return command
    .option('--no-upstreams', "do not serve the registry's upstream MCP servers (tool-registry upstream add)")
    .option('--sync-interval <duration>', 'list every upstream again this often, besides its list_changed and its row changing (default 5m; a bare number is seconds)', parseDuration);
}

/** Adds the options and the action of `mcp` to `command` (made by program.ts with its --db). */
export function mcpCommand(command: Command, context: (cmd: Command) => CliContext): Command {
  upstreamOptions(command)
    .description("serve the tools of a module and the registry's approved upstream MCP tools to one MCP client over stdio (what Claude Desktop or Cursor runs), kept current from the registry")
    .option('--tools <module>', 'an ES module exporting the tools: a default array of Tools (or a ToolSet), or named Tool exports', parseNonEmpty('a module file'))
    .option('--publish', 'publish the tools first (publishTools); otherwise they must already be published')
    .option('--policy <file>', 'a JSON ToolPolicy ({ "persona", "allowed_permissions", "allowed_tools" }): the session sees and calls only what it allows', parseNonEmpty('a file name'))
    .option('--call-timeout-ms <ms>', 'end each tools/call with a TIMEOUT error result after this long (default 30000)', parseMilliseconds)
    .option('--page-size <count>', 'tools per tools/list page (default 500)', parsePositive)
    .option('--max-result-bytes <bytes>', "a tool's tools/call result longer than this (text and structuredContent together) becomes an error result (default 4194304); the server's own error results may take 1024", parsePositive)
    .option('--max-calls-in-flight <n>', 'tools/calls unanswered at once; one more is refused at once with a JSON-RPC error (default 100)', parsePositive)
    .option('--max-message-bytes <bytes>', 'a line from the client longer than this is skipped with an error reply (default 4194304)', parsePositive);
  return retentionOptions(command).action(async (options: McpCommandOptions, cmd: Command) => {
    // Alone it published nothing, yet created the database (opened for writing to publish).
    if (options.publish === true && options.tools === undefined) cmd.error('error: --publish needs --tools MODULE (it publishes the tools of that module)');
    checkUpstreamOptions(options, cmd);
    const run = context(cmd);
    // Caught before the session's code loads and the database opens: a signal then was the process's death (143).
    const stop = catchStopSignals(run.stdout === process.stdout);
    try {
      await (await import('./mcp-run.js')).mcpRun(run, options, stop);
    } finally {
      stop.dispose();
    }
  });
}

/** Adds the MCP endpoint's options to `serve` (made by serve-commands.ts); serve-mounts.ts reads them. */
export function serveMcpOptions(serve: Command): Command {
  return upstreamOptions(retentionOptions(serve))
    .option('--tools <module>', 'serve MCP (Streamable HTTP) at /mcp and /v1/namespaces/{ns}/mcp with the tools of this ES module, beside the upstream tools', parseNonEmpty('a module file'))
    .option('--session-idle-ms <ms>', 'end an MCP session nobody used for this long (default 600000)', parseMilliseconds)
    .option('--call-timeout-ms <ms>', 'end each MCP tools/call with a TIMEOUT error result after this long (default 30000)', parseMilliseconds)
    .option('--page-size <count>', 'tools per MCP tools/list page (default 500)', parsePositive)
    .option('--max-result-bytes <bytes>', "a tool's MCP tools/call result longer than this (text and structuredContent together) becomes an error result (default 4194304); the server's own error results may take 1024", parsePositive)
    .option('--max-calls-in-flight <n>', 'MCP tools/calls one session may have unanswered at once; one more is refused at once with a JSON-RPC error (default 100)', parsePositive);
}
