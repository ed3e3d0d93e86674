// One invocation, shared by ToolSet and ToolBox: options, lookup, policy, arguments,
// handler, output, each failure returned as a frozen ToolResult.
import { types } from 'node:util';
import { previewValue } from '../core/issues.js';
import { internalsOf } from './define-tool.js';
import type { Tool, ToolHandlerOptions } from './define-tool.js';
import { checkCompiled, compilePolicy } from './policy.js';
import type { CompiledPolicy, ToolPolicy } from './policy.js';
import { failure, jsonIssue, now, success } from './tool-result.js';
import { isMcpContent } from './mcp-content.js';
import { logFunction, progressFunction, requestFunctions } from './call-context.js';
import type { LogEntry, ProgressReport, ToolClient } from './call-context.js';
import type { McpContent } from './mcp-content.js';
import type { ToolResult, ToolResultIssue } from './tool-result.js';

/** Options of `invoke`. Anything else than these types is a TypeError (misuse). */
export interface InvokeOptions<Context = unknown> {
  /** Handed to the handler as `context`, as it is (not copied). */
  readonly context?: Context;
  /** Aborting it ends the wait with `ABORTED` (before or during the call) and aborts the handler's signal. */
  readonly signal?: AbortSignal;
  /** Milliseconds (> 0; `Infinity` for none) after which the wait ends with `TIMEOUT`, even if the handler ignores its signal. */
  readonly timeoutMs?: number;
  /** Checked before anything runs: a denied tool is `PERMISSION_DENIED` and its handler is never called. */
  readonly policy?: ToolPolicy;
  /** Hears the handler's `progress(...)` reports, in order; without it they go nowhere. */
  readonly onProgress?: (report: ProgressReport) => void;
  /** Hears the handler's `log(...)` messages (every level); without it they go nowhere. */
  readonly onLog?: (entry: LogEntry) => void;
  /**
   * Answers the handler's `sample(...)` and `elicit(...)`. Without it they reject with
   * `ClientUnavailableError` (`CLIENT_UNAVAILABLE`). `createMcpServer` gives the calling session.
   */
  readonly client?: ToolClient;
}

/** The longest delay Node's timers keep (2^31 - 1 ms): a longer one runs after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;
/**
 * The abort of a call with a deadline (`timeoutMs`): its signal is made the first time the
 * handler reads it, already aborted if the call ended before. An AbortController made for
 * every call would cost more than the rest of invoke, and most handlers never look.
 */
class Deadline {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

/** progress and log when the caller hears neither: they only check their arguments. */
const QUIET_PROGRESS = progressFunction(undefined);
const QUIET_LOG = logFunction(undefined, '');

/**
 * The policies each call runs under (`invoke`'s `policy`, and those the set or box invoked was
 * derived under with `forPolicy`), by its handler options: `toolSearchTool` finds only what all allow.
 */
const callPolicies = new WeakMap<object, readonly CompiledPolicy[]>();

/** The policies the call whose handler got `options` runs under; `undefined` when none. */
export function callPolicyOf(options: unknown): readonly CompiledPolicy[] | undefined {
  return typeof options === 'object' && options !== null ? callPolicies.get(options) : undefined;
}

/**
 * The handler's options. `signal` is the caller's when only the caller can abort the call;
 * else it is made the first time the handler reads it: a signal of its own when nothing can
 * abort the call (a shared never-aborted signal would collect every call's listeners), or the
 * deadline's. Either way an own enumerable property like `context` and `tool_name` (a getter
 * on a prototype would be lost by a spread `{ ...options }` and missed by a deep equality
 * check) that gives the same signal every time, in the documented order.
 */
class CallOptions implements ToolHandlerOptions {
  declare readonly context: unknown;
  declare readonly signal: AbortSignal;
  declare readonly tool_name: string;
  declare readonly progress: ToolHandlerOptions['progress'];
  declare readonly log: ToolHandlerOptions['log'];
  declare readonly sample: ToolHandlerOptions['sample'];
  declare readonly elicit: ToolHandlerOptions['elicit'];
  #deadline: Deadline | undefined;
  #signal: AbortSignal | undefined;

  /** One descriptor object for every call: defining it costs one defineProperty, no closure. */
  static readonly #lazySignal: PropertyDescriptor = {
    get(this: CallOptions): AbortSignal {
      this.#signal ??= this.#deadline === undefined ? new AbortController().signal : this.#deadline.signal;
      return this.#signal;
    },
    enumerable: true,
    configurable: false,
  };

  constructor(context: unknown, toolName: string, checked: CheckedOptions, signal: AbortSignal | Deadline | undefined, scope: readonly CompiledPolicy[] | undefined) {
    this.context = context;
    if (signal === undefined || signal instanceof Deadline) {
      this.#deadline = signal;
      Object.defineProperty(this, 'signal', CallOptions.#lazySignal);
    } else {
      this.signal = signal;
    }
    this.tool_name = toolName;
    this.progress = checked.onProgress === undefined ? QUIET_PROGRESS : progressFunction(checked.onProgress);
    this.log = checked.onLog === undefined ? QUIET_LOG : logFunction(checked.onLog, toolName);
    const { sample, elicit } = requestFunctions(checked.client, toolName, () => this.signal);
    this.sample = sample;
    this.elicit = elicit;
    if (checked.client?.session !== undefined) (this as { session?: object }).session = checked.client.session;
    if (checked.policy !== undefined) callPolicies.set(this, scope === undefined ? [checked.policy] : [...scope, checked.policy]);
    else if (scope !== undefined) callPolicies.set(this, scope);
  }
}

interface CheckedOptions {
  readonly context: unknown;
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number | undefined;
  readonly policy: CompiledPolicy | undefined;
  readonly onProgress: ((report: ProgressReport) => void) | undefined;
  readonly onLog: ((entry: LogEntry) => void) | undefined;
  readonly client: ToolClient | undefined;
}

const NO_OPTIONS: CheckedOptions = { context: undefined, signal: undefined, timeoutMs: undefined, policy: undefined, onProgress: undefined, onLog: undefined, client: undefined };

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function' &&
    typeof (value as AbortSignal).removeEventListener === 'function'
  );
}

function checkOptions(options: InvokeOptions | undefined): CheckedOptions {
  if (options === undefined) return NO_OPTIONS;
  if (typeof options !== 'object' || options === null) throw new TypeError(`invoke(): options must be an object, got ${previewValue(options)}`);
  const { context, signal, timeoutMs, policy, onProgress, onLog, client } = options;
  if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError(`invoke(): onProgress must be a function, got ${previewValue(onProgress)}`);
  if (onLog !== undefined && typeof onLog !== 'function') throw new TypeError(`invoke(): onLog must be a function, got ${previewValue(onLog)}`);
  if (client !== undefined && (typeof client !== 'object' || client === null || typeof client.createMessage !== 'function' || typeof client.elicitInput !== 'function')) {
    throw new TypeError(`invoke(): client must have createMessage and elicitInput functions, got ${previewValue(client)}`);
  }
  // instanceof first: reading `aborted` of a real AbortSignal costs several times more (Node 20).
  if (signal !== undefined && !(signal instanceof AbortSignal) && !isAbortSignal(signal)) throw new TypeError(`invoke(): signal must be an AbortSignal, got ${previewValue(signal)}`);
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0 && (timeoutMs <= MAX_TIMER_MS || timeoutMs === Infinity))) {
    throw new TypeError(`invoke(): timeoutMs must be a number > 0 and <= ${MAX_TIMER_MS} (or Infinity), got ${previewValue(timeoutMs)}`);
  }
  return {
    context,
    signal,
    timeoutMs: timeoutMs === Infinity ? undefined : timeoutMs,
    policy: policy === undefined ? undefined : compilePolicy(policy),
    onProgress,
    onLog,
    client,
  };
}

function describe(issues: readonly ToolResultIssue[]): string {
  const shown = issues.slice(0, 5).map((issue) => `${issue.path === '' ? '(root)' : issue.path} ${issue.message}`);
  if (issues.length > shown.length) shown.push(`and ${issues.length - shown.length} more`);
  return shown.join('; ');
}

/**
 * The message of what a handler threw: an Error's (from any realm), a string, or a preview.
 * Never throws: a thrown value whose `message` cannot be read (a getter or proxy trap that
 * throws, a revoked proxy) must still become a TOOL_FAILED result.
 */
function messageOf(error: unknown): string {
  try {
    if (typeof error === 'string') return error;
    const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
    return typeof message === 'string' ? message : previewValue(error);
  } catch {
    return 'a value whose message cannot be read';
  }
}

/**
 * A schema check's issues. A value that makes the check itself throw (a getter that throws, a
 * cycle under a recursive schema overflowing the stack) fails it with one issue at the root.
 */
function checkSafely(check: (value: unknown) => ToolResultIssue[] | undefined, value: unknown): ToolResultIssue[] | undefined {
  try {
    return check(value);
  } catch (error) {
    return [{ path: '', message: `could not be checked: ${messageOf(error)}` }];
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}

/** Promise.prototype.then as the module found it: a handler's promise may carry a `then` of its own. */
const promiseThen = Promise.prototype.then;

/**
 * A native promise with no own properties and Promise.prototype as its prototype: the intrinsic
 * `then` on it returns a native Promise (its species is Promise). Neither check can run code of
 * the handler's (a native promise is never a proxy).
 */
function isPlainPromise(value: unknown): boolean {
  return types.isPromise(value) && Object.getPrototypeOf(value) === Promise.prototype && Reflect.ownKeys(value as object).length === 0;
}

/**
 * Calls `onValue` or `onError` once the handler's value settles; never throws. A native
 * promise is followed through the intrinsic `then`, so a `then` or `constructor` replaced on
 * it (one that throws, returns undefined or never calls back) is never called; any other
 * thenable is adopted the way `await` adopts it (its own `then`, called later).
 */
function follow(value: PromiseLike<unknown>, onValue: (data: unknown) => void, onError: (error: unknown) => void): void {
  try {
    // The reactions are on `value` itself; the promise `then` derives (of the value's species,
    // perhaps the handler's own class) is ignored: it settles with what they return, never a rejection.
    Reflect.apply(promiseThen, types.isPromise(value) ? value : Promise.resolve(value), [onValue, onError]);
  } catch (error) {
    // A promise whose species constructor throws: it cannot be followed.
    onError(error);
  }
}

/**
 * Invokes `tool` (looked up by `name`; `undefined` when there is none); `scope` is the
 * policies the set or box it came from was derived under (`forPolicy`). Resolves to a
 * frozen ToolResult for every tool-level failure; rejects only for misuse (TypeError) and
 * an invalid policy (VALIDATION_FAILED). Not an async function: the common path (a promise
 * from the handler, no signal, no timeout) then costs one `then` instead of an await chain.
 */
export function invokeTool(
  tool: Tool | undefined,
  name: unknown,
  args: unknown,
  options: InvokeOptions | undefined,
  scope?: readonly CompiledPolicy[],
): Promise<ToolResult> {
  const started = now();
  let checked: CheckedOptions;
  let abortedBefore: boolean;
  try {
    if (typeof name !== 'string') throw new TypeError(`invoke(): the tool name must be a string, got ${previewValue(name)}`);
    checked = checkOptions(options);
    // Read here: an object that passed for a signal (AbortSignal.prototype without being one) throws.
    abortedBefore = checked.signal?.aborted === true;
  } catch (error) {
    return Promise.reject(error);
  }
  const onProgress = checked.onProgress;
  if (onProgress === undefined) return run(tool, name, args, checked, abortedBefore, started, scope);
  // Progress stops when the call ends (MCP: "progress notifications MUST stop after completion"):
  // a report the handler makes after its result was decided (a timeout, say) is dropped.
  let open = true;
  const gated = { ...checked, onProgress: (report: ProgressReport) => void (open && onProgress(report)) };
  const close = (): void => {
    open = false;
  };
  const result = run(tool, name, args, gated, abortedBefore, started, scope);
  void result.then(close, close);
  return result;
}

/** invokeTool after its checks: never rejects. */
function run(
  tool: Tool | undefined,
  name: string,
  args: unknown,
  checked: CheckedOptions,
  abortedBefore: boolean,
  started: number,
  scope: readonly CompiledPolicy[] | undefined,
): Promise<ToolResult> {
  const { signal, timeoutMs, policy } = checked;
  if (abortedBefore) return Promise.resolve(failure('ABORTED', `Tool '${name}' was not called: the signal was already aborted`, started));
  if (tool === undefined) return Promise.resolve(failure('TOOL_NOT_FOUND', `Tool '${name}' not found`, started));
  if (policy !== undefined) {
    const verdict = checkCompiled(policy, tool);
    if (!verdict.allowed) return Promise.resolve(failure('PERMISSION_DENIED', verdict.reason, started));
  }
  const { checkInput, checkOutput, argsCopier } = internalsOf(tool) as NonNullable<ReturnType<typeof internalsOf>>;
  let copy: unknown;
  try {
    copy = argsCopier.copy(args === undefined ? {} : args);
  } catch (error) {
    const issues = [{ path: '', message: `is not JSON data: ${messageOf(error)}` }];
    return Promise.resolve(failure('INVALID_ARGUMENTS', `Invalid arguments for tool '${name}': ${describe(issues)}`, started, issues));
  }
  const problems = checkSafely(checkInput, copy);
  if (problems !== undefined) {
    return Promise.resolve(failure('INVALID_ARGUMENTS', `Invalid arguments for tool '${name}': ${describe(problems)}`, started, problems));
  }

  // finish and failed never throw: whatever the handler produced ends as a ToolResult.
  const finish = (data: unknown): ToolResult => {
    if (isMcpContent(data)) return finishContent(data);
    const wrong = checkOutput === undefined ? undefined : checkSafely(checkOutput, data);
    if (wrong !== undefined) return failure('INVALID_OUTPUT', `Tool '${name}' returned output that fails its output_schema: ${describe(wrong)}`, started, wrong);
    try {
      // What a model is shown is JSON: a value JSON would change or cannot carry is refused.
      const objects: object[] = [];
      const issue = jsonIssue(data, objects);
      if (issue !== undefined) return failure('INVALID_OUTPUT', `Tool '${name}' returned output that is not JSON data: ${describe([issue])}`, started, [issue]);
      return success(data, started, objects);
    } catch (error) {
      // A value that cannot be frozen (a proxy refusing it) or read (a getter that throws, a revoked proxy).
      return failure('TOOL_FAILED', `Tool '${name}' returned a value that cannot be frozen: ${messageOf(error)}`, started);
    }
  };
  // MCP content (checked and frozen by mcpContent): output_schema judges its structuredContent.
  const finishContent = (data: McpContent): ToolResult => {
    if (checkOutput !== undefined && data.isError !== true) {
      const wrong =
        data.structuredContent === undefined
          ? [{ path: '', message: 'is MCP content without structuredContent, which the output_schema asks for' }]
          : checkSafely(checkOutput, data.structuredContent);
      if (wrong !== undefined) return failure('INVALID_OUTPUT', `Tool '${name}' returned structuredContent that fails its output_schema: ${describe(wrong)}`, started, wrong);
    }
    return success(data, started, []);
  };
  const failed = (error: unknown): ToolResult => failure('TOOL_FAILED', `Tool '${name}' failed: ${messageOf(error)}`, started);

  const deadline = timeoutMs === undefined ? undefined : new Deadline();
  const call = new CallOptions(checked.context, name, checked, deadline ?? signal, scope);
  let value: unknown;
  try {
    value = tool.handler(copy as Record<string, unknown>, call);
    // Reading `then` (a getter, a revoked proxy) can throw too; a native promise's is never read.
    if (!types.isPromise(value) && !isThenable(value)) return Promise.resolve(finish(value));
  } catch (error) {
    return Promise.resolve(failed(error));
  }
  const pending = value as PromiseLike<unknown>;
  // A plain native promise (nothing of its own, the usual case) is followed by one `then`.
  if (deadline === undefined && signal === undefined) {
    if (isPlainPromise(pending)) return Reflect.apply(promiseThen, pending, [finish, failed]) as Promise<ToolResult>;
    return new Promise<ToolResult>((resolve) => follow(pending, (data) => resolve(finish(data)), (error) => resolve(failed(error))));
  }
  return new Promise<ToolResult>((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    // The first of handler, timer and caller's signal decides; the others find `settled`.
    const settle = (result: () => ToolResult): void => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      resolve(result());
      try {
        signal?.removeEventListener('abort', onAbort);
      } catch {
        // A look-alike signal whose removeEventListener throws: the call is decided all the same.
      }
    };
    const onAbort = (): void => {
      settle(() => failure('ABORTED', `Tool '${name}' was aborted by the caller's signal`, started));
      deadline?.abort(signal?.reason);
    };
    if (deadline !== undefined) {
      timer = setTimeout(() => {
        settle(() => failure('TIMEOUT', `Tool '${name}' did not finish within ${timeoutMs} ms`, started));
        deadline.abort(new DOMException(`Tool '${name}' timed out after ${timeoutMs} ms`, 'TimeoutError'));
      }, timeoutMs);
    }
    if (signal !== undefined) {
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    }
    follow(
      pending,
      (data) => settle(() => finish(data)),
      (error: unknown) => settle(() => failed(error)),
    );
  });
}
