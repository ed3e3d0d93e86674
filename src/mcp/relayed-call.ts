// A tools/call a session answers itself, without the SDK's Server dispatching it: the calls of
// the gateway's upstream tools (docs/gateway.md, "How a call is relayed"). The session passes a
// RelayedCall as the handler's `context`, and the handler (an upstream link) relays the call
// without an AbortSignal of its own: the session ends it through `cancel`.

/** The tools whose handlers take a RelayedCall (the gateway marks its upstream tools). */
const relayed = new WeakSet<object>();

/** Marks `tool` as one a session may call as a RelayedCall. */
export function markRelayedTool(tool: object): void {
  relayed.add(tool);
}

/** Whether `tool` was marked by `markRelayedTool`. */
export function isRelayedTool(tool: object): boolean {
  return relayed.has(tool);
}

/**
 * One call a session answers itself. `cancel` ends it (the client cancelled, its session
 * ended, or the call timed out): the handler's `onCancel` hears it once, and `signal` (made
 * only when asked for: an AbortController costs more than the rest of a call) aborts.
 */
export class RelayedCall {
  #cancelled = false;
  #reason: string | undefined;
  #controller: AbortController | undefined;
  #onCancel: ((reason: string) => void) | undefined;

  get cancelled(): boolean {
    return this.#cancelled;
  }

  /** Hears the cancellation (at once if the call was cancelled already). One listener: the handler's. */
  set onCancel(listener: ((reason: string) => void) | undefined) {
    this.#onCancel = listener;
    if (this.#cancelled) listener?.(this.#reason as string);
  }

  /** A signal aborted when the call is cancelled (for what takes a signal: a request to the client, a task). */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#cancelled) this.#controller.abort(new Error(this.#reason));
    }
    return this.#controller.signal;
  }

  cancel(reason: string): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.#reason = reason;
    this.#controller?.abort(new Error(reason));
    const listener = this.#onCancel;
    this.#onCancel = undefined;
    listener?.(reason);
  }
}

/** The RelayedCall a handler was given as its `context`, if it was given one. */
export function relayedCallOf(context: unknown): RelayedCall | undefined {
  return context instanceof RelayedCall ? context : undefined;
}
