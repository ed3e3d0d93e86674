import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DB_READ, NET_HTTP, READ_FS, ToolSet, ValidationError, checkToolPermission, defineTool } from '../../src/index.js';
import type { ToolPolicy } from '../../src/index.js';

const tool = (name: string, required: string[] = []) => defineTool({ name, input_schema: {}, permissions: { required }, handler: () => name });

describe('checkToolPermission', () => {
  it('denies a tool missing from a non-empty allowlist first, even when permissions are missing too', () => {
    expect(checkToolPermission({ persona: 'support', allowed_tools: ['search'] }, tool('shell', ['EXEC_SHELL']))).toEqual({
      allowed: false,
      reason: "Tool 'shell' is not in the allowlist for persona 'support'",
    });
  });

  it('then lists every missing required permission, sorted, comma and space', () => {
    expect(checkToolPermission({ persona: 'p', allowed_permissions: [DB_READ] }, tool('t', [READ_FS, NET_HTTP, DB_READ, 'A_X']))).toEqual({
      allowed: false,
      reason: 'Missing required permissions: A_X, NET_HTTP, READ_FS',
    });
  });

  it('allows when every check passes', () => {
    expect(checkToolPermission({ persona: 'p', allowed_tools: ['t'], allowed_permissions: [READ_FS] }, tool('t', [READ_FS]))).toEqual({
      allowed: true,
      reason: 'All checks passed',
    });
    // An empty allowlist restricts nothing; a tool with no requirements needs no permissions.
    expect(checkToolPermission({ persona: 'p', allowed_tools: [] }, tool('t')).allowed).toBe(true);
    expect(checkToolPermission({ persona: 'p', allowed_tools: null, allowed_permissions: null }, tool('t')).allowed).toBe(true);
  });

  it('ignores optional permissions', () => {
    const t = defineTool({ name: 't', input_schema: {}, permissions: { optional: [NET_HTTP] }, handler: () => 1 });
    expect(checkToolPermission({ persona: 'p' }, t).allowed).toBe(true);
  });

  it('is exact and case-sensitive on names', () => {
    expect(checkToolPermission({ persona: 'p', allowed_tools: ['Search'] }, tool('search')).allowed).toBe(false);
    expect(checkToolPermission({ persona: 'p', allowed_permissions: ['read_fs'] }, tool('t', [READ_FS])).allowed).toBe(false);
  });

  it.each([
    ['no persona', { allowed_tools: [] }, 'persona'],
    ['an empty persona', { persona: '' }, 'persona'],
    ['a non-array allowed_tools', { persona: 'p', allowed_tools: 'search' }, 'allowed_tools'],
    ['a non-string permission', { persona: 'p', allowed_permissions: [1] }, 'allowed_permissions[0]'],
    ['a misspelt field', { persona: 'p', allowed_tool: ['x'] }, 'allowed_tool'],
    // Every audit row records the persona: no store keeps U+0000 or a lone surrogate as given (it was written as U+FFFD).
    ['U+0000 in the persona', { persona: 'p\u0000x' }, 'persona'],
    ['a lone surrogate in the persona', { persona: 'p\ud800' }, 'persona'],
  ])('refuses a policy with %s: VALIDATION_FAILED naming the field', (_label, policy, path) => {
    let error: unknown;
    try {
      checkToolPermission(policy as never, tool('t'));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).code).toBe('VALIDATION_FAILED');
    expect((error as ValidationError).issues[0]?.pathText).toBe(path);
  });

  it('refuses a tool without a name with a TypeError', () => {
    expect(() => checkToolPermission({ persona: 'p' }, {} as never)).toThrow(TypeError);
  });
});

describe('forPolicy and invoke agree on every policy', () => {
  const PERMISSIONS = ['READ_FS', 'WRITE_FS', 'NET_HTTP', 'DB_READ'];
  const NAMES = ['a', 'b', 'c', 'd', 'e'];
  const toolsArb = fc.uniqueArray(
    fc.record({ name: fc.constantFrom(...NAMES), required: fc.subarray(PERMISSIONS) }),
    { selector: (entry) => entry.name, minLength: 1 },
  );
  const policyArb = fc.record(
    {
      persona: fc.constantFrom('support', 'admin'),
      allowed_permissions: fc.option(fc.subarray(PERMISSIONS), { nil: undefined }),
      allowed_tools: fc.option(fc.subarray([...NAMES, 'zzz']), { nil: undefined }),
    },
    { requiredKeys: ['persona'] },
  );

  it('a tool is in forPolicy(policy) exactly when invoke with that policy calls it', async () => {
    await fc.assert(
      fc.asyncProperty(toolsArb, policyArb, async (entries, policy: ToolPolicy) => {
        const set = new ToolSet(entries.map((entry) => tool(entry.name, entry.required)));
        const allowed = set.forPolicy(policy);
        for (const name of set.list()) {
          const result = await set.invoke(name, {}, { policy });
          const verdict = checkToolPermission(policy, set.resolve(name)!);
          expect(allowed.resolve(name) !== null).toBe(result.success);
          expect(verdict.allowed).toBe(result.success);
          if (!result.success) expect(result).toMatchObject({ code: 'PERMISSION_DENIED', error: verdict.reason });
          if (allowed.resolve(name) !== null) expect(allowed.resolve(name)).toBe(set.resolve(name));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('the allowlist matcher (docs/runtime.md, Policies)', () => {
  const set = new ToolSet([tool('search'), tool('shell'), tool('Shell')]);

  it('matches names exactly: a glob, a tag, the empty string allow nothing; case, spaces, NUL and confusables are other names', async () => {
    for (const pattern of ['*', '**', 'sh*', 'sh?ll', '[s]hell', 'shell\\', 'upstream:web', '']) {
      expect(set.forPolicy({ persona: 'p', allowed_tools: [pattern] }).list(), pattern).toEqual([]);
    }
    expect(set.forPolicy({ persona: 'p', allowed_tools: [] }).list()).toEqual(['Shell', 'search', 'shell']);
    const shown = set.forPolicy({ persona: 'p', allowed_tools: ['search'] });
    for (const name of ['shell', 'Search', 'search ', ' search', 'search\u0000', '\u0455earch', 'nope']) {
      expect(await shown.invoke(name, {}), name).toMatchObject({ code: 'TOOL_NOT_FOUND', error: `Tool '${name}' not found` });
    }
  });

  it('reads the policy when the set is derived: narrowing the object afterwards changes neither the set nor its boxes', async () => {
    const policy = { persona: 'p', allowed_tools: ['search', 'shell'] };
    const shown = set.forPolicy(policy);
    const box = shown.forTurn();
    policy.allowed_tools.pop();
    expect(shown.list()).toEqual(['search', 'shell']);
    expect(await box.invoke('shell', {})).toMatchObject({ success: true, data: 'shell' });
    expect(set.forPolicy(policy).list()).toEqual(['search']);
  });
});
