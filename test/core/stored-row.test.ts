// The row check every store's verify() runs: each kind of damage is found, a sound row
// (in any key order) passes.
import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprintOfCanonical } from '../../src/core/canonical.js';
import { checkStoredRow } from '../../src/core/stored-row.js';
import type { StoredRow } from '../../src/core/stored-row.js';

const spec = { version: '1', tool_name: 't', input_schema: { type: 'object' }, output_schema: {}, description: null, tags: [] };
const sound: StoredRow = {
  tool_name: 't',
  version: '1',
  fingerprint: fingerprintOfCanonical(canonicalJson(spec)),
  spec_json: JSON.stringify(spec),
  enabled: true,
  created_at: '2025-01-01T00:00:00.000Z',
};

describe('checkStoredRow', () => {
  it('passes a sound row stored in its registered key order', () => {
    expect(checkStoredRow(sound)).toEqual([]);
  });

  it('finds text that does not parse', () => {
    expect(checkStoredRow({ ...sound, spec_json: '{"tool_name":' }).map((p) => p.kind)).toEqual(['contract']);
  });

  it('finds a fingerprint that is not of the canonical text', () => {
    expect(checkStoredRow({ ...sound, fingerprint: '0'.repeat(64) }).map((p) => p.kind)).toEqual(['fingerprint']);
  });

  it('finds a spec that breaks the contract', () => {
    const broken = { ...spec, tags: [''] };
    const row = { ...sound, spec_json: JSON.stringify(broken), fingerprint: fingerprintOfCanonical(canonicalJson(broken)) };
    expect(checkStoredRow(row).map((p) => p.kind)).toEqual(['contract']);
  });

  it('finds a row whose name or version is not its spec’s', () => {
    expect(checkStoredRow({ ...sound, version: '2' }).map((p) => [p.kind, p.tool_name])).toEqual([['contract', 't']]);
    expect(checkStoredRow({ ...sound, tool_name: 'u' }).map((p) => [p.kind, p.tool_name])).toEqual([['contract', 'u']]);
  });
});
