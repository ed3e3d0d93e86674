import { compareCodePoints } from '../../core/canonical.js';
import { RegistryClosedError } from '../../core/errors.js';
import type { ToolRegistration } from '../../core/contracts.js';
import { BaseToolRegistry, refuseUnknownOptions, runPlanSync } from '../../core/base-tool-registry.js';
import type { ChangeLogPage, StoredTool, StoreReader, StoreScope, StoreWriter, WritePlan } from '../../core/base-tool-registry.js';
import type { ChangeEvent, HistoryEntry, RegistryOptions } from '../../core/registry.js';
import { CHANGE_LOG_TRIM_EVERY, changeAction, changeLogRetained } from '../../core/rules.js';
import type { ToolRecord } from '../../core/rules.js';
import { makeRegistration, materializeSpec } from '../../core/validation.js';
import { DEFAULT_POLICY } from '../../core/versions.js';
import type { RegistryPolicy } from '../../core/versions.js';
import { makeUpstream } from '../../core/upstreams.js';
import type { CallPrune, CallRecord, CallRecordInput, ParsedCallsQuery, Upstream } from '../../core/upstreams.js';

export type InMemoryToolRegistryOptions = RegistryOptions;

/** What the memory store's `status()` reports: the counts and the revision the other stores' `status()` report too. */
export interface InMemoryStatus {
  readonly tools: number;
  readonly enabled: number;
  readonly disabled: number;
  /** The store-wide revision (0 before the first change), as `changes()` reports it. */
  readonly revision: number;
  /** Distinct specs ever stored under a current or former name. */
  readonly specHistory: number;
  /** Always `false`: a memory store is never read-only. */
  readonly readonly: false;
}

interface Entry {
  readonly record: ToolRecord;
  readonly registration: ToolRegistration;
}

/** A change made inside a write, logged when the write succeeds. */
interface PendingChange {
  readonly tool_name: string;
  readonly action: ChangeEvent['action'];
  readonly version: string | null;
  /** How many tools there were right after the change. */
  readonly tools: number;
  readonly rollback?: true;
}

/** One distinct spec stored under a name; `entry` is built on first read. */
interface HistoryRow {
  readonly fingerprint: string;
  readonly json: string;
  readonly first_registered_at: string;
  entry?: HistoryEntry;
}

/**
 * A registry held in this process's memory: nothing survives the process. Instances share
 * nothing. Writes are atomic: a failed step is rolled back from an undo log. The change log
 * is bounded like the SQLite store's (the last 10,000 changes, or one per tool if more).
 */
export class InMemoryToolRegistry extends BaseToolRegistry {
  #entries = new Map<string, Entry>();
  #records = new Map<string, ToolRecord>();
  /** Every distinct spec ever stored per name, in the order first stored. */
  #history = new Map<string, HistoryRow[]>();
  /** The retained change log, oldest first. */
  #log: ChangeEvent[] = [];
  #revision = 0;
  /** Watches waiting for the next commit. */
  #waiting = new Set<() => void>();
  /** Sorted lists, rebuilt lazily after a write. */
  #sortedAll: ToolRegistration[] | undefined;
  #sortedEnabled: ToolRegistration[] | undefined;
  #policy: RegistryPolicy = DEFAULT_POLICY;
  #upstreams = new Map<string, Upstream>();
  #sortedUpstreams: Upstream[] | undefined;
  /** The audit log, oldest (lowest id) first. */
  #calls: CallRecord[] = [];
  #lastCallId = 0;
  /** At most the oldest `at` among #calls (exact after an age prune): an age prune is needed only when it is past the bound. */
  #oldestCallAt = '';

  constructor(options: InMemoryToolRegistryOptions = {}) {
    refuseUnknownOptions('new InMemoryToolRegistry', options, ['clock', 'callRetention'] satisfies readonly (keyof InMemoryToolRegistryOptions)[]);
    super(options);
  }

  /**
   * The counts and the current revision (as the SQLite and PostgreSQL stores' `status()`
   * report them; a memory store has no migrations, file or connection to report).
   * @throws REGISTRY_CLOSED after `close()`
   */
  async status(): Promise<InMemoryStatus> {
    if (this.closed) throw new RegistryClosedError('status');
    const enabled = this._list(false).length;
    let specHistory = 0;
    for (const rows of this.#history.values()) specHistory += rows.length;
    return Object.freeze({ tools: this.#entries.size, enabled, disabled: this.#entries.size - enabled, revision: this.#revision, specHistory, readonly: false });
  }

  protected _find(toolName: string): ToolRecord | undefined {
    return this.#entries.get(toolName)?.record;
  }

  protected _get(toolName: string): ToolRegistration | undefined {
    return this.#entries.get(toolName)?.registration;
  }

  protected _list(includeDisabled: boolean): readonly ToolRegistration[] {
    if (this.#sortedAll === undefined) {
      const names = [...this.#entries.keys()].sort(compareCodePoints);
      this.#sortedAll = names.map((name) => (this.#entries.get(name) as Entry).registration);
      this.#sortedEnabled = this.#sortedAll.filter((registration) => registration.enabled);
    }
    return includeDisabled ? this.#sortedAll : (this.#sortedEnabled as ToolRegistration[]);
  }

  protected _read<T>(_scope: StoreScope, work: (reader: StoreReader) => T): T {
    return work(this.#reader(() => this.#revision));
  }

  protected async _history(toolName: string): Promise<readonly HistoryEntry[]> {
    const rows = this.#history.get(toolName) ?? [];
    // Oldest first by first_registered_at, ties (and an injected clock that goes back) in the order stored, as SQLite sorts.
    const sorted = rows.slice().sort((a, b) => (a.first_registered_at < b.first_registered_at ? -1 : a.first_registered_at > b.first_registered_at ? 1 : 0));
    return sorted.map((row) => {
      row.entry ??= Object.freeze({
        spec: materializeSpec(row.json),
        fingerprint: row.fingerprint,
        first_registered_at: row.first_registered_at,
      });
      return row.entry;
    });
  }

  protected async _changes(since: number, limit: number): Promise<ChangeLogPage> {
    const log = this.#log;
    const oldestRevision = log[0]?.revision ?? this.#revision + 1;
    // Revisions in the log are consecutive, so the first event after `since` is found by arithmetic.
    const start = Math.max(0, since + 1 - oldestRevision);
    return { revision: this.#revision, oldestRevision, events: log.slice(start, start + limit) };
  }

  protected _revision(): number {
    return this.#revision;
  }

  protected _waitForChange(revision: number, signal: AbortSignal): Promise<void> {
    if (this.#revision > revision || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.#waiting.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.#waiting.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  protected async _write<T>(_method: string, plan: WritePlan<T>): Promise<T> {
    // Undo log: the previous entry (or undefined) of every name touched, first touch only.
    const undo = new Map<string, Entry | undefined>();
    const undoHistory = new Map<string, HistoryRow[] | undefined>();
    const pending: PendingChange[] = [];
    let policyBefore: RegistryPolicy | undefined;
    const set = (name: string, entry: Entry | undefined, rollback = false): void => {
      const before = this.#entries.get(name);
      if (!undo.has(name)) undo.set(name, before);
      this.#sortedAll = undefined;
      this.#sortedEnabled = undefined;
      this.#assign(name, entry);
      const action = changeAction(before?.record, entry?.record);
      if (action !== undefined) {
        // The tool count right after this change: the log's bound depends on it (as in SQLite's trigger).
        const change: PendingChange = { tool_name: name, action, version: (entry ?? before)?.record.version ?? null, tools: this.#entries.size };
        pending.push(rollback && action === 'updated' ? { ...change, rollback: true } : change);
      }
    };
    const writer: StoreWriter = {
      ...this.#reader(() => this.#revision + pending.length),
      put: (tool: StoredTool) => {
        const name = tool.record.tool_name;
        const current = this.#entries.get(name);
        let json = tool.json;
        if (current?.record.fingerprint === tool.record.fingerprint) {
          // The tool already shows this spec: its stored text (key order) is kept.
          json = this.#historyRow(name, tool.record.fingerprint)?.json ?? json;
        } else {
          if (!undoHistory.has(name)) undoHistory.set(name, this.#history.get(name)?.slice());
          this.#storeSpec(name, tool, json);
        }
        const registration =
          tool.registration !== undefined && json === tool.json
            ? tool.registration
            : makeRegistration(materializeSpec(json), tool.record.enabled, tool.record.created_at, tool.record.deprecation);
        set(name, { record: tool.record, registration }, tool.rollback === true);
      },
      setEnabled: (toolName, enabled) => {
        const entry = this.#entries.get(toolName);
        if (entry === undefined) return;
        set(toolName, {
          record: { ...entry.record, enabled },
          registration: makeRegistration(entry.registration.spec, enabled, entry.registration.created_at, entry.registration.deprecation),
        });
      },
      setDeprecation: (toolName, deprecation) => {
        const entry = this.#entries.get(toolName);
        if (entry === undefined) return;
        set(toolName, {
          record: { ...entry.record, deprecation },
          registration: makeRegistration(entry.registration.spec, entry.registration.enabled, entry.registration.created_at, deprecation),
        });
      },
      setPolicy: (policy) => {
        policyBefore ??= this.#policy;
        this.#policy = policy;
      },
      delete: (toolName) => {
        if (!this.#entries.has(toolName)) return false;
        set(toolName, undefined);
        return true;
      },
    };
    let result: T;
    try {
      result = runPlanSync(writer, plan);
    } catch (error) {
      for (const [name, entry] of undo) this.#assign(name, entry);
      if (policyBefore !== undefined) this.#policy = policyBefore;
      for (const [name, rows] of undoHistory) {
        if (rows === undefined) this.#history.delete(name);
        else this.#history.set(name, rows);
      }
      throw error;
    }
    if (pending.length > 0) this.#commitEvents(pending);
    return result;
  }

  protected async _putUpstream(upstream: Upstream): Promise<Upstream> {
    const existing = this.#upstreams.get(upstream.name);
    const stored = makeUpstream(upstream, existing?.created_at ?? upstream.created_at, upstream.updated_at);
    this.#upstreams.set(upstream.name, stored);
    this.#sortedUpstreams = undefined;
    return stored;
  }

  protected _getUpstream(name: string): Upstream | undefined {
    return this.#upstreams.get(name);
  }

  protected _listUpstreams(): readonly Upstream[] {
    this.#sortedUpstreams ??= [...this.#upstreams.keys()].sort(compareCodePoints).map((name) => this.#upstreams.get(name) as Upstream);
    return this.#sortedUpstreams;
  }

  protected async _removeUpstream(name: string): Promise<boolean> {
    this.#sortedUpstreams = undefined;
    return this.#upstreams.delete(name);
  }

  protected async _recordCalls(calls: readonly CallRecordInput[], prune: CallPrune): Promise<void> {
    for (const call of calls) {
      this.#calls.push(Object.freeze({ id: ++this.#lastCallId, ...call }));
      if (this.#oldestCallAt === '' || call.at < this.#oldestCallAt) this.#oldestCallAt = call.at;
    }
    if (this.#calls.length > prune.maxRows) this.#calls.splice(0, this.#calls.length - prune.maxRows);
    if (this.#oldestCallAt < prune.oldestAt) {
      this.#calls = this.#calls.filter((call) => call.at >= prune.oldestAt);
      this.#oldestCallAt = this.#calls.reduce((oldest, call) => (oldest === '' || call.at < oldest ? call.at : oldest), '');
    }
  }

  protected _listCalls(query: ParsedCallsQuery): readonly CallRecord[] {
    const found: CallRecord[] = [];
    // Ids grow with the index: the page starts below the first row whose id is not below `before`.
    let start = this.#calls.length;
    if (query.before !== undefined) {
      const before = query.before;
      let low = 0;
      while (low < start) {
        const middle = (low + start) >>> 1;
        if ((this.#calls[middle] as CallRecord).id < before) low = middle + 1;
        else start = middle;
      }
    }
    for (let index = start - 1; index >= 0 && found.length < query.limit; index--) {
      const call = this.#calls[index] as CallRecord;
      if (query.tool !== undefined && call.tool !== query.tool) continue;
      if (query.token !== undefined && call.token !== query.token) continue;
      if (query.since !== undefined && call.at < query.since) continue;
      found.push(call);
    }
    return found;
  }

  protected async _close(): Promise<void> {
    this.#upstreams = new Map();
    this.#sortedUpstreams = undefined;
    this.#calls = [];
    this.#entries = new Map();
    this.#records = new Map();
    this.#history = new Map();
    this.#log = [];
    this.#sortedAll = undefined;
    this.#sortedEnabled = undefined;
    for (const wake of [...this.#waiting]) wake();
  }

  #historyRow(name: string, fingerprint: string): HistoryRow | undefined {
    return this.#history.get(name)?.find((row) => row.fingerprint === fingerprint);
  }

  /** Adds the spec to the name's history, or gives its row the new text (first_registered_at kept). */
  #storeSpec(name: string, tool: StoredTool, json: string): void {
    const rows = this.#history.get(name)?.slice() ?? [];
    const index = rows.findIndex((row) => row.fingerprint === tool.record.fingerprint);
    if (index < 0) {
      rows.push({ fingerprint: tool.record.fingerprint, json, first_registered_at: tool.firstRegisteredAt });
    } else {
      const row = rows[index] as HistoryRow;
      if (row.json !== json) rows[index] = { fingerprint: row.fingerprint, json, first_registered_at: row.first_registered_at };
    }
    this.#history.set(name, rows);
  }

  /** Appends one commit's events (consecutive revisions), trims the log as SQLite does, wakes the watches. */
  #commitEvents(pending: readonly PendingChange[]): void {
    const at = new Date().toISOString();
    for (const change of pending) {
      const revision = ++this.#revision;
      const event: ChangeEvent = { revision, tool_name: change.tool_name, action: change.action, version: change.version, at };
      this.#log.push(Object.freeze(change.rollback === true ? { ...event, rollback: true } : event));
      if (revision % CHANGE_LOG_TRIM_EVERY === 0) {
        const keepFrom = revision - changeLogRetained(change.tools) + 1;
        const drop = this.#log.findIndex((event) => event.revision >= keepFrom);
        if (drop > 0) this.#log.splice(0, drop);
      }
    }
    for (const wake of [...this.#waiting]) wake();
  }

  /** Stores `entry` under `name`, or removes the name when it is `undefined`. */
  #assign(name: string, entry: Entry | undefined): void {
    if (entry === undefined) {
      this.#entries.delete(name);
      this.#records.delete(name);
    } else {
      this.#entries.set(name, entry);
      this.#records.set(name, entry.record);
    }
  }

  #reader(revision: () => number): StoreReader {
    return {
      find: (toolName) => this.#entries.get(toolName)?.record,
      get: (toolName) => this.#entries.get(toolName)?.registration,
      records: () => this.#records,
      revision,
      policy: () => this.#policy,
    };
  }
}
