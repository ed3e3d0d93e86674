// A deprecation where tools are used: loadToolSet keeps a deprecated tool until its sunset
// (invoke works and says so) and leaves it out after (excluded: sunset); exports add a
// `Deprecated:` line by default, keep or omit on request; lintTools warns.
import { describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, defineTool, lintTools, loadToolSet, publishTools, toMcpTools, toOpenAITools } from '../../src/index.js';

const tools = [
  defineTool({ name: 'old', version: '1', description: 'Looks things up.', input_schema: { type: 'object' }, handler: () => 'old' }),
  defineTool({ name: 'find', version: '1', input_schema: { type: 'object' }, handler: () => 'find' }),
];

async function registry(sunset = '2026-06-01') {
  const registry = new InMemoryToolRegistry();
  await publishTools(registry, tools);
  await registry.deprecate('old', { message: 'use find', replacement: 'find', sunset });
  return registry;
}

describe('loadToolSet and invoke', () => {
  it('before the sunset: kept, invoke works and its result carries the deprecation; a tool not deprecated carries none', async () => {
    const set = await loadToolSet(await registry(), tools, { clock: () => new Date('2026-05-31T23:59:59.999Z') });
    expect(set.list()).toEqual(['find', 'old']);
    const result = await set.invoke('old', {});
    expect(result).toMatchObject({ success: true, data: 'old', deprecated: { message: 'use find', replacement: 'find', sunset: '2026-06-01' } });
    expect(Object.isFrozen(result)).toBe(true);
    expect('deprecated' in (await set.invoke('find', {}))).toBe(false);
    expect(set.deprecation('old')?.replacement).toBe('find');
    expect(set.forPolicy({ persona: 'p', allowed_tools: ['old'] }).deprecation('old')?.message).toBe('use find');
  });

  it('forPolicy leaves out a replacement the policy forbids (it would name that tool to the persona), in deprecation() and in results', async () => {
    const reg = await registry('2999-06-01');
    const set = await loadToolSet(reg, tools);
    const hidden = set.forPolicy({ persona: 'p', allowed_tools: ['old'] });
    expect(hidden.deprecation('old')).toEqual({ message: 'use find', replacement: null, sunset: '2999-06-01' });
    expect((await hidden.invoke('old', {})).deprecated).toEqual({ message: 'use find', replacement: null, sunset: '2999-06-01' });
    expect(hidden.deprecation('find')).toBeNull();
    // invoke on the full set under that policy says the same; without one, as registered.
    expect((await set.invoke('old', {}, { policy: { persona: 'p', allowed_tools: ['old'] } })).deprecated?.replacement).toBeNull();
    expect((await set.invoke('old', {})).deprecated?.replacement).toBe('find');
    // Allowed, or not a tool of the set and not kept out by the allowlist: named as registered.
    expect(set.forPolicy({ persona: 'p' }).deprecation('old')?.replacement).toBe('find');
    await reg.deprecate('old', { message: 'moved', replacement: 'elsewhere' });
    expect((await loadToolSet(reg, tools)).forPolicy({ persona: 'p' }).deprecation('old')?.replacement).toBe('elsewhere');
    // By permission: a replacement that needs one the persona lacks is left out too.
    const guarded = [tools[0] as (typeof tools)[number], defineTool({ name: 'find', version: '2', input_schema: { type: 'object' }, permissions: { required: ['ADMIN'] }, handler: () => 'find' })];
    await publishTools(reg, guarded);
    await reg.deprecate('old', { message: 'use find', replacement: 'find' });
    expect((await loadToolSet(reg, guarded, { policy: { persona: 'p' } })).deprecation('old')?.replacement).toBeNull();
    expect((await loadToolSet(reg, guarded, { policy: { persona: 'p', allowed_permissions: ['ADMIN'] } })).deprecation('old')?.replacement).toBe('find');
  });

  it('from the sunset (a date: its start, UTC) on: left out, excluded with reason sunset; a disabled tool stays "disabled"', async () => {
    const reg = await registry();
    const set = await loadToolSet(reg, tools, { clock: () => new Date('2026-06-01T00:00:00.000Z') });
    expect(set.list()).toEqual(['find']);
    expect(set.excluded).toEqual([{ tool_name: 'old', reason: 'sunset' }]);
    await reg.setEnabled('old', false);
    expect((await loadToolSet(reg, tools, { clock: () => new Date('2027-01-01T00:00:00Z') })).excluded).toEqual([{ tool_name: 'old', reason: 'disabled' }]);
  });
});

describe('exports and lint', () => {
  it('annotate (default) adds the Deprecated line; keep exports as registered; omit leaves the tool out', async () => {
    const registrations = await (await registry('2999-06-01')).listAll();
    const annotated = toMcpTools(registrations).find((tool) => tool.name === 'old');
    expect(annotated?.description).toBe('Looks things up.\n\nDeprecated: use find. Use find instead. It will be removed on 2999-06-01.');
    expect(toMcpTools(registrations, { deprecated: 'keep' }).find((tool) => tool.name === 'old')?.description).toBe('Looks things up.');
    expect(toOpenAITools(registrations, { deprecated: 'omit' }).map((tool) => tool.function.name)).toEqual(['find']);
    expect(() => toMcpTools(registrations, { deprecated: 'hide' as never })).toThrow(TypeError);
  });

  it('a tool past its sunset is exported and linted by no mode, as the runtime no longer offers it (not "will be removed" on a past date)', async () => {
    const registrations = await (await registry('2020-01-01')).listAll();
    for (const deprecated of ['annotate', 'keep', 'omit'] as const) {
      expect(toMcpTools(registrations, { deprecated }).map((tool) => tool.name)).toEqual(['find']);
      expect(toOpenAITools(registrations, { deprecated }).map((tool) => tool.function.name)).toEqual(['find']);
    }
    // A runtime Tool carries no deprecation: it is exported as it is (loadToolSet is what leaves it out).
    expect(toMcpTools(tools).map((tool) => tool.name)).toEqual(['old', 'find']);
    expect(lintTools(registrations).filter((found) => found.tool_name === 'old')).toEqual([]);
    // A date-time sunset a moment ago counts too.
    const reg = await registry(new Date(Date.now() - 1_000).toISOString());
    expect(toMcpTools(await reg.listAll()).map((tool) => tool.name)).toEqual(['find']);
  });

  it('lintTools judges the description the exports send: a Deprecated line that passes OpenAI\'s 1,024 characters is an error, not an "ok"', async () => {
    const reg = new InMemoryToolRegistry();
    await reg.register({ tool_name: 'long', version: '1', description: 'x'.repeat(1000), input_schema: { type: 'object', properties: {} }, output_schema: {} });
    await reg.deprecate('long', { message: 'use find', replacement: 'find', sunset: null });
    const registrations = await reg.listAll();
    expect(() => toOpenAITools(registrations)).toThrow(expect.objectContaining({ code: 'PROVIDER_INCOMPATIBLE' }));
    const errors = lintTools(registrations, { providers: ['openai'] }).filter((found) => found.severity === 'error');
    expect(errors.map((found) => [found.tool_name, found.rule, found.path])).toEqual([['long', 'description-length', '/description']]);
  });

  it('lintTools warns once per provider about a deprecated tool', async () => {
    const findings = lintTools(await (await registry('2999-06-01')).listAll(), { providers: ['mcp', 'openai'] }).filter((found) => found.rule === 'deprecated');
    expect(findings.map((found) => [found.tool_name, found.provider, found.severity])).toEqual([
      ['old', 'mcp', 'warning'],
      ['old', 'openai', 'warning'],
    ]);
  });
});
