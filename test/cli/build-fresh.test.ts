// The run builds dist/ before any test when src/ changed (test/global-setup.ts, issue 13,
// item 11): CLI and process tests spawn dist/, and must never test stale code.
import { describe, expect, it } from 'vitest';
import { staleSources } from '../global-setup.js';

describe('dist/ before the tests run', () => {
  it('is at least as new as every source file', () => {
    expect(staleSources()).toEqual([]);
  });
});
