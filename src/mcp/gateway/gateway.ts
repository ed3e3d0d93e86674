// The gateway of one serving process over one registry: a connection per upstream row, and a
// LiveToolSet of the local tools plus every upstream tool that is served (approved: the
// registered version's hash is the hash of what the upstream lists now). An upstream tool is
// a runtime Tool whose spec is the registered one and whose handler forwards, so policies,
// permissions, enabled flags, deprecation and the call path apply to it as to a local tool.
import { canonicalJson, liveToolSet, MAX_TIMER_MS, ToolBox, ToolSet as ToolSetClass } from '../../index.js';
import type { LiveToolSet, LiveToolSetChange, LiveToolSetOptions, Tool, ToolRegistration, ToolRegistry, ToolSet, ToolSource, ToolSpec, Upstream } from '../../index.js';
import { approvedDefinitionHash, refusedByGateway, repeatedNameTest, upstreamDefinitionHash, upstreamTag, upstreamToolName } from './upstream-definition.js';
import type { UpstreamToolDefinition } from './upstream-definition.js';
import { MAX_UNWRITTEN_BYTES } from './connect.js';
import { UpstreamLink } from './upstream-link.js';
import { upstreamTool } from './upstream-tool.js';
import { markRelayedTool } from '../relayed-call.js';

/** How often each upstream is listed again even when it said nothing: 5 minutes (`--sync-interval`). */
export const DEFAULT_SYNC_INTERVAL_MS = 300_000;
/** How often the upstream rows (and the registry's revision) are read: 2 s. */
export const UPSTREAM_POLL_MS = 2_000;
/** The default wait for an upstream's connection (and for its tools/list): 30 s (a stdio server started by `npx` may install first). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** How long `gatewayToolSet` waits for the upstreams' first connections before it resolves: 10 s. Later ones are announced by list_changed. */
export const DEFAULT_STARTUP_WAIT_MS = 10_000;
/** The default wait for an upstream's answer to a forwarded tools/call: 60 s (the session's own call timeout usually ends it first). */
export const DEFAULT_UPSTREAM_CALL_TIMEOUT_MS = 60_000;
/** Registry commits read to decide whether one touched an upstream tool; more than this: derive again. */
const CHANGES_CHECKED = 200;

/** Options of `gatewayToolSet`: the live set's, and the gateway's. */
export interface GatewayOptions extends LiveToolSetOptions {
  /** List every upstream again this often (ms), whatever it said. Default 300,000 (5 min). */
  readonly syncIntervalMs?: number;
  /** Read the upstream rows and the registry's revision this often (ms). Default 2,000. */
  readonly pollIntervalMs?: number;
  /** Give up a connection attempt (and a listing) after this long (ms). Default 30,000. */
  readonly connectTimeoutMs?: number;
  /** `gatewayToolSet` resolves once every upstream's first attempt ended, or after this long (ms). Default 10,000. */
  readonly startupWaitMs?: number;
  /** Give up waiting for an upstream's answer to a call after this long (ms): `UPSTREAM_UNAVAILABLE`. Default 60,000. */
  readonly upstreamCallTimeoutMs?: number;
  /** Close a stdio upstream as failed once it leaves this many bytes of the gateway's messages unread. Default `MAX_UNWRITTEN_BYTES` (16 MiB). */
  readonly maxUnwrittenBytes?: number;
  /** Where `${VAR}` in upstream headers and environment comes from. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Hears what an operator should know: an upstream that cannot be reached or listed, a tool that cannot be served. Default: a process warning. */
  readonly onWarning?: (message: string) => void;
}

/** What a gateway knows of one upstream now. */
export interface UpstreamStatus {
  readonly name: string;
  readonly connected: boolean;
  /** The definitions it listed last (undefined: never listed in this process). */
  readonly listed: readonly UpstreamToolDefinition[] | undefined;
  /** The `updated_at` of the row its last listing was made under (undefined: never listed). A row changed since is listed again at the next poll. */
  readonly listedFor: string | undefined;
  /** Its tools served now (before any session's policy). */
  readonly served: readonly string[];
  readonly error: string | undefined;
}

/** A LiveToolSet of local and upstream tools. `close()` also closes every upstream connection. */
export interface GatewayToolSet extends LiveToolSet {
  /** Each upstream's state, by name. */
  upstreams(): UpstreamStatus[];
  /** Reads the rows and lists every upstream (or the one named) again now; settles when done. */
  sync(name?: string): Promise<void>;
}

type Listener = (change: LiveToolSetChange) => void;

function positive(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  // setTimeout's limit: a longer delay would fire at once.
  if (typeof value !== 'number' || !(value > 0) || !(value <= MAX_TIMER_MS)) throw new TypeError(`gatewayToolSet(): ${name} must be a number > 0 and <= ${MAX_TIMER_MS} (ms), got ${JSON.stringify(value)}`);
  return value;
}

function warnProcess(message: string): void {
  process.emitWarning(`gateway: ${message}`, 'ToolRegistryWarning');
}

/** Whether a registry can hold upstreams (a store of an older release cannot). */
function hasUpstreams(registry: ToolRegistry): boolean {
  return typeof (registry as Partial<ToolRegistry>).listUpstreams === 'function';
}

class Gateway implements GatewayToolSet {
  readonly #registry: ToolRegistry;
  readonly #local: readonly Tool[];
  readonly #localNames: ReadonlySet<string>;
  readonly #options: GatewayOptions;
  readonly #warn: (message: string) => void;
  readonly #links = new Map<string, UpstreamLink>();
  /** Each link's row as last read (`updated_at` and the transport decide what to do). */
  readonly #rows = new Map<string, Upstream>();
  /** Tools made for upstream definitions, by what they are made of: the same definition keeps its Tool (sessions compare by identity). */
  #made = new Map<string, Tool>();
  /** The upstream tools served now, by name. */
  #served: readonly Tool[] = [];
  /** The upstream of each tool in `#served`, by the tool's name: a call of it reads that row (`latest`). */
  #servedBy: ReadonlyMap<string, string> = new Map();
  #inner: LiveToolSet;
  #unsubscribe: () => void;
  readonly #listeners = new Set<Listener>();
  #revision = 0;
  #timers: ReturnType<typeof setInterval>[] = [];
  #closed = false;
  /** A derivation is running; `#again` asks for one more. */
  #deriving: Promise<void> | undefined;
  #again = false;
  /** The last derivation failed (the registry could not be read): the next poll derives again. */
  #stale = false;
  #polling: Promise<void> | undefined;
  /** The connections and listings the last poll started; polls do not wait for them (a link derives when it has listed). */
  #starting: Promise<unknown> = Promise.resolve();
  /**
   * Warned already (a tool that cannot be served), so a warning is said once: only what the
   * last derivation found, so a hostile upstream that lists new broken tools at every
   * listing cannot grow it (a tool that leaves the listing and comes back is warned of again).
   */
  #said = new Set<string>();
  /** The last poll failure warned of (one: a poll that succeeds forgets it), so a failing poll warns once, not every interval. */
  #pollFailure: string | undefined;

  constructor(registry: ToolRegistry, local: readonly Tool[], inner: LiveToolSet, options: GatewayOptions) {
    this.#registry = registry;
    this.#local = local;
    this.#localNames = new Set(local.map((tool) => tool.name));
    this.#options = options;
    this.#warn = options.onWarning ?? warnProcess;
    this.#inner = inner;
    this.#unsubscribe = inner.subscribe((change) => this.#emit(change));
  }

  current(): ToolSet {
    return this.#inner.current();
  }

  /**
   * The registry's revision, and for a served upstream tool its upstream's row: a row removed
   * (`upstream remove --keep-tools`, whose tools stay registered) or changed since the last
   * poll, by any process, reads the rows again first, so a call that starts after the removal
   * committed is refused, not relayed until the next poll. One small read per upstream call;
   * none for a local tool's.
   */
  async latest(tool?: string): Promise<ToolSet> {
    const upstream = tool === undefined ? undefined : this.#servedBy.get(tool);
    if (upstream === undefined) return this.#inner.latest();
    const [set, row] = await Promise.all([this.#inner.latest(), this.#registry.getUpstream(upstream)]);
    if (row !== undefined && row.updated_at === this.#rows.get(upstream)?.updated_at) return set;
    // A poll under way may have read the rows before the change: one that starts now.
    await this.#polling?.catch(() => undefined);
    await this.poll();
    return this.#inner.latest();
  }

  get revision(): number {
    return this.#inner.revision;
  }

  get closed(): boolean {
    return this.#closed;
  }

  subscribe(listener: Listener): () => void {
    if (typeof listener !== 'function') throw new TypeError('LiveToolSet.subscribe(): listener must be a function');
    const entry: Listener = (change) => listener(change);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  #emit(change: LiveToolSetChange): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(change);
      } catch (error) {
        this.#warn(`a listener failed: ${(error as Error).message}`);
      }
    }
  }

  upstreams(): UpstreamStatus[] {
    return [...this.#links.values()].map((link) => ({
      name: link.upstream.name,
      connected: link.connected,
      listed: link.definitions,
      listedFor: link.listedFor,
      served: this.#served.filter((tool) => tool.spec.tags.includes(upstreamTag(link.upstream.name))).map((tool) => tool.name),
      error: link.lastError,
    }));
  }

  async sync(name?: string): Promise<void> {
    await this.poll();
    await this.#starting;
    const links = name === undefined ? [...this.#links.values()] : [this.#links.get(name)].filter((link) => link !== undefined);
    await Promise.all(links.map((link) => (link.connected ? link.relist() : link.start())));
    await this.derive();
  }

  /** Settles when the connections and listings started so far have ended (either way). */
  started(): Promise<unknown> {
    return this.#starting;
  }

  /** Starts the timers: the rows and revision every poll interval, every upstream every sync interval. */
  startTimers(): void {
    const poll = setInterval(
      () =>
        void this.poll().then(
          () => {
            this.#pollFailure = undefined;
          },
          (error: unknown) => {
            const message = `cannot read the upstreams: ${(error as Error).message}`;
            if (message === this.#pollFailure) return;
            this.#pollFailure = message;
            this.#warn(message);
          },
        ),
      positive('pollIntervalMs', this.#options.pollIntervalMs, UPSTREAM_POLL_MS),
    );
    const sync = setInterval(() => {
      for (const link of this.#links.values()) void link.relist();
    }, positive('syncIntervalMs', this.#options.syncIntervalMs, DEFAULT_SYNC_INTERVAL_MS));
    poll.unref?.();
    sync.unref?.();
    this.#timers = [poll, sync];
  }

  /**
   * Reads the rows: a new upstream is connected, a removed one closed, one whose transport
   * changed connected again, one whose row changed otherwise listed again (without waiting
   * for them: each derives the set when it has listed). Then the registry's revision: a
   * commit that touched an upstream tool derives the set again.
   */
  poll(): Promise<void> {
    if (this.#polling !== undefined) return this.#polling;
    this.#polling = (async () => {
      try {
        await this.#pollOnce();
      } finally {
        this.#polling = undefined;
      }
    })();
    return this.#polling;
  }

  async #pollOnce(): Promise<void> {
    if (this.#closed) return;
    const rows = hasUpstreams(this.#registry) ? await this.#registry.listUpstreams() : [];
    let changed = false;
    const starting: Promise<void>[] = [];
    const named = new Set(rows.map((row) => row.name));
    for (const [name, link] of this.#links) {
      if (named.has(name)) continue;
      this.#links.delete(name);
      this.#rows.delete(name);
      changed = true;
      void link.close();
    }
    for (const row of rows) {
      const known = this.#rows.get(row.name);
      const link = this.#links.get(row.name);
      if (known !== undefined && link !== undefined && known.updated_at === row.updated_at) continue;
      this.#rows.set(row.name, row);
      changed = true;
      if (link === undefined) {
        const made = new UpstreamLink(row, {
          ...(this.#options.env === undefined ? {} : { env: this.#options.env }),
          connectTimeoutMs: positive('connectTimeoutMs', this.#options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS),
          callTimeoutMs: positive('upstreamCallTimeoutMs', this.#options.upstreamCallTimeoutMs, DEFAULT_UPSTREAM_CALL_TIMEOUT_MS),
          maxUnwrittenBytes: this.#options.maxUnwrittenBytes ?? MAX_UNWRITTEN_BYTES,
          onWarning: this.#warn,
          // Awaited by the listing: the derivation is part of what a listing costs (LISTING_COST_FACTOR).
          onChange: () => this.derive(),
        });
        this.#links.set(row.name, made);
        starting.push(made.start());
      } else if (canonicalJson(known?.transport as never) !== canonicalJson(row.transport as never)) {
        link.upstream = row;
        starting.push(link.reconnect());
      } else {
        link.upstream = row;
        starting.push(link.relist());
      }
    }
    if (starting.length > 0) this.#starting = Promise.all([this.#starting, ...starting.map((attempt) => attempt.catch(() => undefined))]);
    if (await this.#registryChanged()) changed = true;
    if (changed || this.#stale) await this.derive();
  }

  /** Whether a commit since the last look touched a name an upstream tool has or would have. */
  async #registryChanged(): Promise<boolean> {
    const since = this.#revision;
    const { revision } = await this.#registry.changes({ limit: 0 });
    if (revision === since) return false;
    this.#revision = revision;
    if (revision < since || revision - since > CHANGES_CHECKED) return true;
    try {
      const page = await this.#registry.changes({ since, limit: CHANGES_CHECKED });
      if (page.events.length >= CHANGES_CHECKED) return true;
      const names = this.#candidateNames();
      return page.events.some((event) => names.has(event.tool_name));
    } catch {
      return true; // an expired cursor, a restore: derive
    }
  }

  /** The registry names of every tool the upstreams list now. */
  #candidateNames(): Set<string> {
    const names = new Set<string>();
    for (const link of this.#links.values()) for (const definition of link.definitions ?? []) if (definition.refused === undefined) names.add(upstreamToolName(link.upstream, definition));
    return names;
  }

  /** Derives the served upstream tools again (coalesced) and, when they changed, the live set. */
  derive(): Promise<void> {
    if (this.#deriving !== undefined) {
      this.#again = true;
      return this.#deriving;
    }
    this.#deriving = (async () => {
      try {
        do {
          this.#again = false;
          await this.#deriveOnce();
        } while (this.#again && !this.#closed);
        this.#stale = false;
      } catch (error) {
        this.#stale = true;
        if (!this.#closed) this.#warn(`cannot derive the served tools: ${(error as Error).message}`);
      } finally {
        this.#deriving = undefined;
      }
    })();
    return this.#deriving;
  }

  async #deriveOnce(): Promise<void> {
    if (this.#closed) return;
    const said = new Set<string>();
    const wanted: { link: UpstreamLink; definition: UpstreamToolDefinition; name: string }[] = [];
    for (const link of this.#links.values()) {
      const repeated = repeatedNameTest();
      for (const definition of link.definitions ?? []) {
        if (repeated(definition)) {
          this.#once(said, `twice:${link.upstream.name}:${definition.name}`, `upstream ${link.upstream.name} lists ${JSON.stringify(definition.name)} more than once: only the first is served`);
          continue;
        }
        // An entry MCP clients refuse is never served (pending and the API show it unregistrable).
        if (definition.refused !== undefined) {
          this.#once(said, `refused:${link.upstream.name}:${definition.name}:${definition.refused}`, `upstream ${link.upstream.name}'s tool ${JSON.stringify(definition.name)} is not served: ${refusedByGateway(definition.refused) ? definition.refused : `not a valid MCP tool (${definition.refused})`}`);
          continue;
        }
        wanted.push({ link, definition, name: upstreamToolName(link.upstream, definition) });
      }
    }
    const registrations = await Promise.all(wanted.map(({ name }) => this.#registry.get(name)));
    const made = new Map<string, Tool>();
    const served: Tool[] = [];
    const servedBy = new Map<string, string>();
    wanted.forEach(({ link, definition, name }, index) => {
      const registration = registrations[index];
      if (registration === undefined || !this.#approved(link.upstream, definition, registration)) return;
      // A registration tagged for two upstreams whose tools take one name: the first is served.
      if (servedBy.has(name)) {
        this.#once(said, `taken:${name}`, `upstream ${link.upstream.name}'s tool ${definition.name} is not served: upstream ${servedBy.get(name)} serves ${name}`);
        return;
      }
      if (this.#localNames.has(name)) {
        this.#once(said, `collision:${name}`, `upstream ${link.upstream.name}'s tool ${definition.name} is not served: a local tool is named ${name}`);
        return;
      }
      const tool = this.#toolFor(link, definition, registration.spec, made, said);
      if (tool === undefined) return;
      served.push(tool);
      servedBy.set(tool.name, link.upstream.name);
    });
    this.#made = made;
    this.#said = said;
    if (served.length === this.#served.length && served.every((tool, index) => tool === this.#served[index])) return;
    // Kept only once the new set stands: a failed swap is tried again by the next derivation.
    await this.#swap(served);
    this.#served = served;
    this.#servedBy = servedBy;
  }

  /** The rule of GATEWAY.md: registered under the upstream's tag, and the version's hash is the hash of the definition listed now. */
  #approved(upstream: Upstream, definition: UpstreamToolDefinition, registration: ToolRegistration): boolean {
    return registration.spec.tags.includes(upstreamTag(upstream.name)) && approvedDefinitionHash(registration) === upstreamDefinitionHash(definition);
  }

  /** Warns of `key` unless the last derivation did; `said` collects this derivation's keys. */
  #once(said: Set<string>, key: string, message: string): void {
    said.add(key);
    if (!this.#said.has(key)) this.#warn(message);
  }

  /** The runtime Tool of a served upstream tool: the registered spec, the upstream's title and annotations, its row's permissions, a forwarding handler. */
  #toolFor(link: UpstreamLink, definition: UpstreamToolDefinition, spec: ToolSpec, made: Map<string, Tool>, said: Set<string>): Tool | undefined {
    const upstream = link.upstream;
    const key = canonicalJson({ upstream: upstream.name, spec, title: definition.title ?? null, annotations: definition.annotations ?? null, permissions: upstream.permissions } as never);
    const known = this.#made.get(key) ?? made.get(key);
    if (known !== undefined) {
      made.set(key, known);
      return known;
    }
    const upstreamName = definition.name;
    let tool: Tool;
    try {
      // The link of the moment: a row whose transport changed keeps the same link object.
      tool = upstreamTool(upstream, definition, spec, (args, call) => (this.#links.get(upstream.name) ?? link).call(upstreamName, args, call));
    } catch (error) {
      // The reason `upstream add`, `sync`, `pending` and the API give (`upstreamServingRefusal`: the same call).
      this.#once(said, `invalid:${key}`, `upstream ${upstream.name}'s tool ${upstreamName} is not served: ${(error as Error).message}`);
      return undefined;
    }
    // Sessions answer its calls themselves, the link relaying them (docs/gateway.md, "How a call is relayed").
    markRelayedTool(tool);
    made.set(key, tool);
    return tool;
  }

  /** A new live set of the local and served tools replaces the current one; listeners hear the change. */
  async #swap(served: readonly Tool[]): Promise<void> {
    const next = await liveToolSet(this.#registry, [...this.#local, ...served], this.#liveOptions());
    if (this.#closed) {
      await next.close();
      return;
    }
    const previous = this.#inner;
    this.#unsubscribe();
    this.#inner = next;
    this.#unsubscribe = next.subscribe((change) => this.#emit(change));
    this.#emit(Object.freeze({ current: next.current(), previous: previous.current(), revision: next.revision }));
    await previous.close();
  }

  #liveOptions(): LiveToolSetOptions {
    const { policy, clock, onError } = this.#options;
    return { ...(policy === undefined ? {} : { policy }), ...(clock === undefined ? {} : { clock }), ...(onError === undefined ? {} : { onError }) };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const timer of this.#timers) clearInterval(timer);
    this.#listeners.clear();
    this.#unsubscribe();
    await this.#polling?.catch(() => undefined);
    await this.#deriving;
    await Promise.all([...this.#links.values()].map((link) => link.close()));
    this.#links.clear();
    await this.#inner.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * A `liveToolSet` of `tools` plus the registry's upstream MCP servers' served tools: one
 * connection per upstream row (stdio children, Streamable HTTP or SSE), re-listed on the
 * upstream's `notifications/tools/list_changed`, when its row's `updated_at` changes (rows
 * are read every `pollIntervalMs`), and every `syncIntervalMs`; reconnected with backoff
 * (1 s doubling to 60 s), and a failed listing tried again likewise. An upstream tool is
 * served when it is registered under the upstream's prefix with the tag `upstream:NAME` and
 * its version's hash (`1.2.0+HASH`) is the hash of the definition the upstream lists now;
 * then it is a tool of the set like any other (enabled flag, policy, the row's
 * `permissions`, deprecation), whose handler forwards the call. Resolves once every upstream made its first connection attempt, or after
 * `startupWaitMs` (10 s; a later one is announced with list_changed). `close()` closes
 * every connection (stdio children end).
 * @throws VALIDATION_FAILED for an invalid policy; DUPLICATE_TOOL; TypeError for misuse; the store's errors on the first read
 */
export async function gatewayToolSet(registry: ToolRegistry, tools: ToolSource, options: GatewayOptions = {}): Promise<GatewayToolSet> {
  if (typeof options !== 'object' || options === null) throw new TypeError('gatewayToolSet(): options must be an object');
  positive('syncIntervalMs', options.syncIntervalMs, DEFAULT_SYNC_INTERVAL_MS);
  positive('pollIntervalMs', options.pollIntervalMs, UPSTREAM_POLL_MS);
  positive('connectTimeoutMs', options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS);
  positive('upstreamCallTimeoutMs', options.upstreamCallTimeoutMs, DEFAULT_UPSTREAM_CALL_TIMEOUT_MS);
  const unwritten = options.maxUnwrittenBytes;
  if (unwritten !== undefined && !(Number.isSafeInteger(unwritten) && unwritten > 0)) throw new TypeError(`gatewayToolSet(): maxUnwrittenBytes must be an integer > 0 (bytes), got ${JSON.stringify(unwritten)}`);
  if (options.onWarning !== undefined && typeof options.onWarning !== 'function') throw new TypeError('gatewayToolSet(): onWarning must be a function');
  // The local tools as a list (a set of them checks for duplicates and non-tools first).
  const local = new ToolSetClass(ToolBox.isToolBox(tools) ? tools.all() : tools instanceof ToolSetClass ? tools.tools() : [...tools]).tools();
  const inner = await liveToolSet(registry, local, options);
  const gateway = new Gateway(registry, local, inner, options);
  // The rows that cannot be read now (an outage, a store of an older release) leave the local
  // tools served; the poll tries again every interval.
  await gateway.poll().catch((error: unknown) => (options.onWarning ?? warnProcess)(`cannot read the upstreams: ${(error as Error).message}`));
  // The first sessions should see the upstream tools: wait for the first connections, bounded.
  const wait = positive('startupWaitMs', options.startupWaitMs, DEFAULT_STARTUP_WAIT_MS);
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([gateway.started(), new Promise((resolve) => (timer = setTimeout(resolve, wait)))]);
  clearTimeout(timer);
  await gateway.derive();
  gateway.startTimers();
  return gateway;
}
