// `tool-registry mcp`: load the tools, open the registry, follow it, serve one stdio session.
import { resolve } from 'node:path';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { checkToolPermission, createToolSet, liveToolSet, publishTools } from '../index.js';
import type { ToolPolicy } from '../index.js';
import { createCallRecorder, DEFAULT_MAX_MESSAGE_BYTES, gatewayToolSet, loadToolsModule, serveMcpStdio, ToolsModuleError } from '../mcp/index.js';
import type { CliContext } from './commands.js';
import { openReadOnly, openReadWrite } from './database.js';
import type { CliRegistry } from './database.js';
import { CliError } from './errors.js';
import { readPolicyFile } from './input.js';
import { callRetentionOf } from './mcp-command.js';
import type { McpCommandOptions } from './mcp-command.js';
import { endingOnStopSignal } from './stop-signals.js';
import { catchStrayErrors } from './stray-errors.js';
import type { StopSignals } from './stop-signals.js';

/** The tools of `--tools MODULE`; a module that cannot be used is a usage error. */
export async function readToolsModule(path: string): Promise<Awaited<ReturnType<typeof loadToolsModule>>> {
  // A module that calls process.exit() while it loads ended the command with its code (0 too)
  // and not a word, and an MCP client saw the server vanish: a usage error, as any failure to load.
  const exited = (code: number): void => {
    // SIGINT/SIGTERM while it loaded (a top-level await on a service): the operator's stop, exit 0.
    if (endingOnStopSignal()) return;
    process.stderr.write(`error USAGE: the tools module ${resolve(path)} ended the process while it loaded (process.exit(${code}))\n`);
    process.exitCode = 2;
  };
  process.once('exit', exited);
  try {
    return await loadToolsModule(path);
  } catch (error) {
    if (error instanceof ToolsModuleError) throw new CliError('USAGE', error.message, { cause: error });
    throw error;
  } finally {
    process.removeListener('exit', exited);
  }
}

/** How long a handler may run on after the session ended and aborted its call (the process ends within 2 s). */
const EXIT_GRACE_MS = 1_000;

function line(context: CliContext, text: string): void {
  context.stderr.write(`tool-registry mcp: ${text}\n`);
}

/**
 * The registry for writing (the audit log's rows, and --publish). Without --publish the
 * database must exist already (it is never created): it is opened read-only first, which
 * refuses a missing one, then for writing. A database this process may not write (a file of
 * another user) is served read-only, its calls not recorded, and the command says so.
 */
async function openForServing(context: CliContext, options: McpCommandOptions): Promise<{ registry: CliRegistry; recording: boolean }> {
  const retention = callRetentionOf(options);
  if (options.publish === true) return { registry: await openReadWrite(context.database, retention), recording: true };
  const reader = await openReadOnly(context.database);
  let writer: CliRegistry;
  try {
    writer = await openReadWrite(context.database, retention);
  } catch (error) {
    line(context, `calls are not recorded (the audit log): the database cannot be opened for writing: ${(error as Error).message ?? String(error)}`);
    return { registry: reader, recording: false };
  }
  await reader.close();
  return { registry: writer, recording: true };
}

/**
 * Standard output carries the protocol alone: whatever else the process writes there (a tools
 * module's `console.log`, at import or in a handler) goes to stderr instead. A stray line was
 * an error at the client, and a write without a newline spoiled the next answer (the client
 * waited for it until its timeout). The session writes through `protocol`.
 */
function reserveStdout(): { protocol: NodeJS.WritableStream; restore(): void } {
  const stdout = process.stdout;
  const ownWrite = Object.hasOwn(stdout, 'write');
  const write = stdout.write;
  const protocol = new Proxy(stdout, {
    get: (target, key) => {
      const value: unknown = key === 'write' ? write : Reflect.get(target, key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  stdout.write = process.stderr.write.bind(process.stderr) as typeof stdout.write;
  return {
    protocol,
    restore: () => {
      if (ownWrite) stdout.write = write;
      else delete (stdout as { write?: unknown }).write;
    },
  };
}

/** Serves one session until its input ends or SIGINT/SIGTERM (`stop`, caught by the action). */
export async function mcpRun(context: CliContext, options: McpCommandOptions, stop: StopSignals): Promise<void> {
  if (context.stdout !== process.stdout) return serveMcpCommand(context, options, stop, false);
  // Before the tools module is imported: what it prints then must not reach the client either.
  const stdout = reserveStdout();
  try {
    await serveMcpCommand({ ...context, stdout: stdout.protocol }, options, stop, true);
  } finally {
    stdout.restore();
  }
}

/** The longest line the MCP SDK's stdio client buffers (the SDK's own bound, as the gateway reads it): past it, the client drops its session. */
const SDK_STDIO_CLIENT_LINE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;
/** What a result's line holds besides the result: `{"jsonrpc":"2.0","id":ID,"result":` … `}` and the newline, 34 bytes and the id's digits. */
const RESPONSE_ENVELOPE_BYTES = 64;

/** `ownsProcess`: the session is this process's own stdio, which ends the process when it closes. */
async function serveMcpCommand(context: CliContext, options: McpCommandOptions, stop: StopSignals, ownsProcess: boolean): Promise<void> {
  const upstreams = options.upstreams !== false;
  if (options.tools === undefined && !upstreams) throw new CliError('USAGE', 'nothing to serve: give --tools MODULE, or leave out --no-upstreams to serve the upstream tools');
  // Taken, as the operator's choice, but said: a line past the SDK's stdio client's buffer ends that
  // client's session, and the line is the result and its response (at 10 MiB exactly, one ended it).
  if (options.maxResultBytes !== undefined && options.maxResultBytes > SDK_STDIO_CLIENT_LINE_BYTES - RESPONSE_ENVELOPE_BYTES) {
    line(
      context,
      `--max-result-bytes ${options.maxResultBytes} and the response around a result (up to ${RESPONSE_ENVELOPE_BYTES} bytes) are over the ${SDK_STDIO_CLIENT_LINE_BYTES} bytes (10 MiB) a line the MCP SDK's stdio client reads: a result that long ends such a client's session`,
    );
  }
  const tools = options.tools === undefined ? createToolSet([]) : await readToolsModule(options.tools);
  const policy = options.policy === undefined ? undefined : ((await readPolicyFile(options.policy)) as ToolPolicy);
  // Checked before the database is opened (VALIDATION_FAILED naming the field).
  if (policy !== undefined) checkToolPermission(policy, { name: 'x' });
  const { registry, recording } = await openForServing(context, options);
  // Every tools/call leaves a row in the audit log, written in batches (never in the call's way).
  const recorder = recording
    ? createCallRecorder(registry, { onError: (error, rows) => line(context, `the audit log could not write ${rows} call record(s): ${(error as Error).message ?? String(error)}`) })
    : undefined;
  try {
    if (options.publish === true) await publishTools(registry, tools);
    // The policy filters the session (serveMcpStdio validates it), not the set: a call of a
    // tool the policy denies is then recorded as PERMISSION_DENIED, not as an unknown tool.
    const follow = { onError: (error: unknown) => line(context, `cannot follow the registry: ${(error as Error).message ?? String(error)} (retrying)`) };
    // With upstreams, the registry's approved upstream tools are served beside the module's.
    const live = upstreams
      ? await gatewayToolSet(registry, tools, { ...follow, ...(options.syncInterval === undefined ? {} : { syncIntervalMs: options.syncInterval }), onWarning: (message) => line(context, message) })
      : await liveToolSet(registry, tools, follow);
    try {
      const excluded = live.current().excluded;
      if (excluded.length > 0) line(context, `not served now: ${excluded.map((entry) => `${entry.tool_name} (${entry.reason})`).join(', ')}`);
      const session = await serveMcpStdio(live, {
        stdin: context.stdin,
        stdout: context.stdout,
        ...(policy === undefined ? {} : { policy }),
        ...(options.callTimeoutMs === undefined ? {} : { callTimeoutMs: options.callTimeoutMs }),
        ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
        ...(options.maxResultBytes === undefined ? {} : { maxResultBytes: options.maxResultBytes }),
        ...(options.maxCallsInFlight === undefined ? {} : { maxCallsInFlight: options.maxCallsInFlight }),
        ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }),
        ...(recorder === undefined ? {} : { onCall: recorder.record }),
        onWarning: (message) => line(context, message),
      });
      // A handler's stray rejection is a line and the session goes on; a stray exception, a line and exit 1 (until the process exits).
      if (ownsProcess) catchStrayErrors('the session', (text) => line(context, text), (text) => line(context, text));
      const stopped = stop.running();
      let signalled = false;
      const onStop = (): void => {
        signalled = true;
        void session.close();
      };
      // Already aborted when a signal came while it started and did not end the process (in-process use).
      if (stopped.aborted) onStop();
      else stopped.addEventListener('abort', onStop, { once: true });
      try {
        await session.closed;
        // The session went on past an over-long line, but the client lost that message: when its input
        // ends, the exit status says so (a signal is the operator's stop: exit 0 as ever).
        const skipped = session.skippedMessages;
        if (skipped > 0 && !signalled) {
          throw new CliError('IO_ERROR', `${skipped} message${skipped === 1 ? ' was' : 's were'} over --max-message-bytes (${options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES} bytes) on standard input, skipped with an error reply`);
        }
      } finally {
        stop.dispose();
        // The upstream connections first: the grace below must not end the process while a
        // stdio upstream child is still being stopped (it would outlive us).
        await live.close();
        // The session's end aborted the calls still running (their signal). A handler that
        // ignores its signal must not keep the process: when this process serves its own
        // stdio, it ends at the latest EXIT_GRACE_MS later (the event loop may end it sooner).
        if (ownsProcess) {
          setTimeout(() => {
            // A timer or a connection the tools module keeps open holds the process as well (no call need be running).
            line(context, `still running ${EXIT_GRACE_MS} ms after the session closed (a tool handler that ignores its abort signal, or a timer or connection of the tools module); exiting without it`);
            process.exit();
          }, EXIT_GRACE_MS).unref();
        }
      }
    } finally {
      await live.close();
    }
  } finally {
    // What waits is written before the registry closes.
    await recorder?.close();
    await registry.close();
  }
}
