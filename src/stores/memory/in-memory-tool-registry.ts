import { compareCodePoints } from '../../core/canonical.js';
import type { ToolRegistration } from '../../core/contracts.js';
import { BaseToolRegistry } from '../../core/base-tool-registry.js';
import type { StoredTool, StoreReader, StoreWriter } from '../../core/base-tool-registry.js';
import type { RegistryOptions } from '../../core/registry.js';
import type { ToolRecord } from '../../core/rules.js';
import { makeRegistration, materializeSpec } from '../../core/validation.js';

export type InMemoryToolRegistryOptions = RegistryOptions;

interface Entry {
  readonly record: ToolRecord;
  readonly registration: ToolRegistration;
}

/**
 * A registry held in this process's memory: nothing survives the process. Instances share
 * nothing. Writes are atomic: a failed step is rolled back from an undo log.
 */
export class InMemoryToolRegistry extends BaseToolRegistry {
  #entries = new Map<string, Entry>();
  #records = new Map<string, ToolRecord>();
  /** Sorted lists, rebuilt lazily after a write. */
  #sortedAll: ToolRegistration[] | undefined;
  #sortedEnabled: ToolRegistration[] | undefined;

  constructor(options: InMemoryToolRegistryOptions = {}) {
    super(options);
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

  protected async _read<T>(work: (reader: StoreReader) => T): Promise<T> {
    return work(this.#reader());
  }

  protected async _write<T>(_method: string, work: (writer: StoreWriter) => T): Promise<T> {
    // Undo log: the previous entry (or undefined) of every name touched, first touch only.
    const undo = new Map<string, Entry | undefined>();
    const touch = (name: string): void => {
      if (!undo.has(name)) undo.set(name, this.#entries.get(name));
      this.#sortedAll = undefined;
      this.#sortedEnabled = undefined;
    };
    const set = (name: string, entry: Entry | undefined): void => {
      touch(name);
      this.#assign(name, entry);
    };
    const writer: StoreWriter = {
      ...this.#reader(),
      put: (tool: StoredTool) => {
        const registration =
          tool.registration ??
          makeRegistration(materializeSpec(tool.canonical), tool.record.enabled, tool.record.created_at);
        set(tool.record.tool_name, { record: tool.record, registration });
      },
      setEnabled: (toolName, enabled) => {
        const entry = this.#entries.get(toolName);
        if (entry === undefined) return;
        set(toolName, {
          record: { ...entry.record, enabled },
          registration: makeRegistration(entry.registration.spec, enabled, entry.registration.created_at),
        });
      },
      delete: (toolName) => {
        if (!this.#entries.has(toolName)) return false;
        set(toolName, undefined);
        return true;
      },
    };
    try {
      return work(writer);
    } catch (error) {
      for (const [name, entry] of undo) this.#assign(name, entry);
      throw error;
    }
  }

  protected async _close(): Promise<void> {
    this.#entries = new Map();
    this.#records = new Map();
    this.#sortedAll = undefined;
    this.#sortedEnabled = undefined;
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

  #reader(): StoreReader {
    return {
      find: (toolName) => this.#entries.get(toolName)?.record,
      get: (toolName) => this.#entries.get(toolName)?.registration,
      records: () => this.#records,
    };
  }
}
