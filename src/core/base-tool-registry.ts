// The shared core every store extends: it validates and normalises arguments, checks that
// the registry is open, applies the registration rule and the import plan, and hands the
// store clean values through a few hooks (the abstract-level pattern). Stores only store,
// fetch, and make each write atomic.
import type { ToolRegistration, ToolRegistrySnapshot, ToolSpecInput } from './contracts.js';
import { RegistryClosedError, ToolNotFoundError, ValidationError } from './errors.js';
import { previewValue } from './issues.js';
import type { ImportMode, ImportOptions, ImportReport, ListOptions, RegistryOptions, ToolRegistry } from './registry.js';
import { decideRegistration, planImport } from './rules.js';
import type { ImportPlan, ToolRecord } from './rules.js';
import { makeRegistration, materializeSpec, parseSnapshot, parseSpec, parseSpecs, isStoredSpec } from './validation.js';
import type { PreparedSpec } from './validation.js';


/** A tool as the core hands it to a store to write. */
export interface StoredTool {
  readonly record: ToolRecord;
  /** Canonical JSON of the spec. */
  readonly canonical: string;
  /** The frozen registration, when the core already built it (register); else the store builds it on demand. */
  readonly registration?: ToolRegistration;
}

/** Reads inside one consistent view of the store. */
export interface StoreReader {
  find(toolName: string): ToolRecord | undefined;
  get(toolName: string): ToolRegistration | undefined;
  /** Every current tool by name (used to plan imports). */
  records(): ReadonlyMap<string, ToolRecord>;
}

/** Writes inside one atomic step; a throw inside the step undoes all of it. */
export interface StoreWriter extends StoreReader {
  /** Inserts the tool or replaces its current spec, `enabled` and `created_at`. */
  put(tool: StoredTool): void;
  setEnabled(toolName: string, enabled: boolean): void;
  /** `true` when the tool was there. */
  delete(toolName: string): boolean;
}

function assertToolName(method: string, toolName: unknown): asserts toolName is string {
  if (typeof toolName !== 'string') {
    throw new TypeError(`${method}(): tool_name must be a string, got ${typeof toolName}`);
  }
}

function importOptions(options: unknown): { mode: ImportMode; dryRun: boolean } {
  if (options === undefined) return { mode: 'merge', dryRun: false };
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`importSnapshot(): options must be an object, got ${typeof options}`);
  }
  const { mode = 'merge', dryRun = false } = options as ImportOptions;
  if (mode !== 'merge' && mode !== 'replace') {
    throw new TypeError(`importSnapshot(): mode must be 'merge' or 'replace', got ${JSON.stringify(mode)}`);
  }
  if (typeof dryRun !== 'boolean') throw new TypeError(`importSnapshot(): dryRun must be a boolean, got ${typeof dryRun}`);
  return { mode, dryRun };
}

export abstract class BaseToolRegistry implements ToolRegistry {
  #closed = false;
  readonly #clock: () => Date;

  protected constructor(options: RegistryOptions = {}) {
    const clock = options.clock ?? (() => new Date());
    if (typeof clock !== 'function') throw new TypeError(`clock must be a function, got ${typeof clock}`);
    this.#clock = clock;
  }

  // --- hooks each store implements -------------------------------------------------

  // The read hooks answer synchronously when they can; a store that must wait (a lock) returns a promise.
  /** The current record of a tool, or undefined. */
  protected abstract _find(toolName: string): ToolRecord | undefined | Promise<ToolRecord | undefined>;
  /** The current registration of a tool, or undefined. */
  protected abstract _get(toolName: string): ToolRegistration | undefined | Promise<ToolRegistration | undefined>;
  /** Current registrations sorted by name (code-point order); the core copies the array. */
  protected abstract _list(includeDisabled: boolean): readonly ToolRegistration[] | Promise<readonly ToolRegistration[]>;
  /** Runs `work` against one consistent view; nothing is written. */
  protected abstract _read<T>(work: (reader: StoreReader) => T): Promise<T>;
  /** Runs `work` as one atomic write, exclusive across connections and processes. */
  protected abstract _write<T>(method: string, work: (writer: StoreWriter) => T): Promise<T>;
  /** Releases the store's resources; called once. */
  protected abstract _close(): Promise<void>;

  // --- the contract ------------------------------------------------------------------

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  #assertOpen(method: string): void {
    if (this.#closed) throw new RegistryClosedError(method);
  }

  /**
   * The clock's time as stored in `created_at`: `YYYY-MM-DDTHH:mm:ss.sssZ`.
   * @throws TypeError when the clock returns something other than a Date; VALIDATION_FAILED
   *   (path `created_at`) for an invalid Date or a year outside 0000-9999, which has no
   *   such form and would not import back
   */
  protected now(): string {
    return clockTime(this.#clock());
  }

  async register(spec: ToolSpecInput): Promise<ToolRegistration> {
    this.#assertOpen('register');
    // Rule 2 needs no lock and no validation: input equal (as JSON, defaults applied) to the
    // stored spec is that valid spec, answered from a read; nothing is written.
    const toolName = (spec as { tool_name?: unknown } | null)?.tool_name;
    if (typeof toolName === 'string') {
      const unchanged = await this._read((reader) => {
        const existing = reader.get(toolName);
        return existing !== undefined && isStoredSpec(spec, existing.spec) ? existing : undefined;
      });
      if (unchanged !== undefined) return unchanged;
    }
    const prepared = parseSpec(spec);
    return this._write('register', (writer) => this.#applyRegistration(writer, prepared, () => this.now()));
  }

  async registerMany(specs: readonly ToolSpecInput[]): Promise<ToolRegistration[]> {
    this.#assertOpen('registerMany');
    if (!Array.isArray(specs)) throw new TypeError(`registerMany(): specs must be an array, got ${typeof specs}`);
    const prepared = parseSpecs(specs);
    // As in register: a batch of identical specs is answered from a read and nothing is written.
    const unchanged = await this._read((reader) =>
      prepared.every((one) => reader.find(one.tool_name)?.fingerprint === one.fingerprint)
        ? prepared.map((one) => getOrFail(reader, one.tool_name))
        : undefined,
    );
    if (unchanged !== undefined) return unchanged;
    return this._write('registerMany', (writer) => {
      let createdAt: string | undefined;
      const now = (): string => (createdAt ??= this.now());
      return prepared.map((one, index) => this.#applyRegistration(writer, one, now, `[${index}]`));
    });
  }

  /** One registration by the rule, inside a write; a conflict throws and the store undoes the whole write. */
  #applyRegistration(writer: StoreWriter, prepared: PreparedSpec, now: () => string, path?: string): ToolRegistration {
    const current = writer.find(prepared.tool_name);
    const decision = decideRegistration(current, prepared, path);
    if (decision.action === 'keep') return getOrFail(writer, prepared.tool_name);
    const enabled = decision.action === 'replace' ? decision.enabled : true;
    const createdAt = now();
    // The spec object is built only here: an identical re-register never needs it.
    const registration = makeRegistration(materializeSpec(prepared.canonical), enabled, createdAt);
    writer.put({
      record: {
        tool_name: prepared.tool_name,
        version: prepared.version,
        fingerprint: prepared.fingerprint,
        enabled,
        created_at: createdAt,
      },
      canonical: prepared.canonical,
      registration,
    });
    return registration;
  }

  async get(toolName: string): Promise<ToolRegistration | undefined> {
    this.#assertOpen('get');
    assertToolName('get', toolName);
    return this._get(toolName);
  }

  async has(toolName: string): Promise<boolean> {
    this.#assertOpen('has');
    assertToolName('has', toolName);
    return (await this._find(toolName)) !== undefined;
  }

  async listAll(options: ListOptions = {}): Promise<ToolRegistration[]> {
    this.#assertOpen('listAll');
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(`listAll(): options must be an object, got ${typeof options}`);
    }
    const { includeDisabled = false } = options;
    if (typeof includeDisabled !== 'boolean') {
      throw new TypeError(`listAll(): includeDisabled must be a boolean, got ${typeof includeDisabled}`);
    }
    return (await this._list(includeDisabled)).slice();
  }

  async setEnabled(toolName: string, enabled: boolean): Promise<ToolRegistration> {
    this.#assertOpen('setEnabled');
    assertToolName('setEnabled', toolName);
    if (typeof enabled !== 'boolean') throw new TypeError(`setEnabled(): enabled must be a boolean, got ${typeof enabled}`);
    return this._write('setEnabled', (writer) => {
      const current = writer.find(toolName);
      if (current === undefined) throw new ToolNotFoundError(toolName);
      if (current.enabled !== enabled) writer.setEnabled(toolName, enabled);
      return getOrFail(writer, toolName);
    });
  }

  async remove(toolName: string): Promise<boolean> {
    this.#assertOpen('remove');
    assertToolName('remove', toolName);
    return this._write('remove', (writer) => writer.delete(toolName));
  }

  async exportSnapshot(): Promise<ToolRegistrySnapshot> {
    this.#assertOpen('exportSnapshot');
    return Object.freeze({ tools: Object.freeze((await this._list(true)).slice()) as ToolRegistration[] });
  }

  async importSnapshot(snapshot: unknown, options?: ImportOptions): Promise<ImportReport> {
    this.#assertOpen('importSnapshot');
    const { mode, dryRun } = importOptions(options);
    const entries = parseSnapshot(snapshot);
    if (dryRun) {
      return importReport(await this._read((reader) => planImport(reader.records(), entries, mode)), true);
    }
    return this._write('importSnapshot', (writer) => {
      const plan = planImport(writer.records(), entries, mode);
      if (plan.firstConflict !== undefined) throw plan.firstConflict;
      const actions = new Map(plan.steps.map((step) => [step.tool_name, step.action]));
      for (const entry of entries) {
        const action = actions.get(entry.tool_name);
        if (action !== 'add' && action !== 'update') continue;
        writer.put({
          record: {
            tool_name: entry.tool_name,
            version: entry.version,
            fingerprint: entry.fingerprint,
            enabled: entry.enabled,
            created_at: entry.created_at,
          },
          canonical: entry.canonical,
        });
      }
      for (const step of plan.steps) if (step.action === 'remove') writer.delete(step.tool_name);
      return importReport(plan, false);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this._close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** The ISO text of a clock's reading; see `BaseToolRegistry.now()`. */
function clockTime(time: unknown): string {
  if (!(time instanceof Date)) throw new TypeError(`clock() must return a Date, got ${previewValue(time)}`);
  const ms = time.getTime();
  // Year 0000 to 9999: what toISOString writes as four digits (and ISO 8601 without an expanded year).
  if (Number.isNaN(ms) || ms < MIN_CLOCK_MS || ms > MAX_CLOCK_MS) {
    const shown = Number.isNaN(ms) ? 'an invalid Date' : `a Date in year ${time.getUTCFullYear()}`;
    const message = `clock() returned ${shown}; created_at needs a valid date in the years 0000 to 9999`;
    throw new ValidationError(`invalid created_at from the registry's clock: ${message}`, [
      Object.freeze({ code: 'custom', message, path: Object.freeze(['created_at']), pathText: 'created_at' }),
    ], { path: 'created_at' });
  }
  return time.toISOString();
}

/** 0000-01-01T00:00:00.000Z (Date.UTC reads years 0-99 as 1900-1999). */
const MIN_CLOCK_MS = -62_167_219_200_000;
const MAX_CLOCK_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The frozen report of an import; only a dry run carries the per-tool plan. */
function importReport(plan: ImportPlan, dryRun: boolean): ImportReport {
  const { added, updated, unchanged, removed, conflicts } = plan;
  const counts = { added, updated, unchanged, removed, conflicts, dryRun };
  return Object.freeze(dryRun ? { ...counts, plan: Object.freeze(plan.steps.map((step) => Object.freeze(step))) } : counts);
}

function getOrFail(reader: StoreReader, toolName: string): ToolRegistration {
  const registration = reader.get(toolName);
  if (registration === undefined) throw new ToolNotFoundError(toolName);
  return registration;
}
