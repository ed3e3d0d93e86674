// The console's namespace switch: which names it offers for a token (console/api.js is plain
// browser JavaScript; this function touches no DOM and no storage, so it runs here as in the page).
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .js module of the console, without declarations
import { switchNamespaces as choose } from '../../console/api.js';

interface Identity { scopes: string[]; namespaces: string[] | null }
const switchNamespaces = choose as (identity: Identity | null, listed: string[] | null) => string[] | null;

describe('switchNamespaces', () => {
  it('offers what GET /v1/namespaces listed to a token that reads (null when that failed)', () => {
    expect(switchNamespaces({ scopes: ['read'], namespaces: ['team', 'default', 'gone'] }, ['default', 'team'])).toEqual(['default', 'team']);
    expect(switchNamespaces({ scopes: ['read', 'write'], namespaces: null }, null)).toBeNull();
  });

  it("offers a write-only token the namespaces whoami says it is bound to, sorted (it was offered none: the list needs read)", () => {
    const bound = ['team', 'default'];
    expect(switchNamespaces({ scopes: ['write'], namespaces: bound }, null)).toEqual(['default', 'team']);
    expect(bound).toEqual(['team', 'default']); // whoami's answer is not reordered in place
  });

  it('offers no switch to a write-only token bound to every namespace (whoami: null), nor to no identity', () => {
    expect(switchNamespaces({ scopes: ['write'], namespaces: null }, null)).toBeNull();
    expect(switchNamespaces(null, null)).toBeNull();
  });
});
