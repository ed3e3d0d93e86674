// Runs the one conformance suite against every store in the record (or those in STORES): the
// in-process stores here; each PostgreSQL store in a file of its own, run in parallel
// (conformance-postgres.test.ts, conformance-postgres-nocache.test.ts).
import { describe, expect, it } from 'vitest';
import { runConformance } from './conformance-run.js';
import { storeHarnesses } from './stores.js';
import type { StoreName } from './stores.js';

const HERE: StoreName[] = ['memory', 'sqlite-memory', 'sqlite-file', 'sqlite-file-nocache'];
const ELSEWHERE: StoreName[] = ['postgres', 'postgres-nocache'];

describe('the conformance files', () => {
  it('run every store of the record, each in one file', () => {
    expect([...HERE, ...ELSEWHERE].sort()).toEqual(Object.keys(storeHarnesses).sort());
  });
});

runConformance(HERE);
