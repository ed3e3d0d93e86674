// A ToolBox is recognised by a brand, so a box from another copy of the package (or any
// object carrying the brand) passes ToolBox.isToolBox. Its tools must still be Tools made by
// this copy's defineTool before merge or the bridge takes them: nothing may reach a box or a
// registry without the checks defineTool made, and invoke must never throw on such a tool.
import { describe, expect, it, vi } from 'vitest';
import { InMemoryToolRegistry, ToolBox, defineTool, loadToolSet, publishTools } from '../../src/index.js';

const BRAND = Symbol.for('tool-registry.ToolBox');
const ok = defineTool({ name: 'ok', version: '1', input_schema: {}, handler: () => 'ok' });

/** An object that carries the brand and hands out a tool no defineTool made. */
const forged = {
  [BRAND]: true,
  all: () => [
    {
      name: 'forged',
      spec: Object.freeze({ tool_name: 'forged', version: null, description: null, input_schema: {}, output_schema: {}, tags: [] }),
      permissions: { required: [], optional: [] },
      handler: () => 'forged',
      ephemeral: false,
      onCollision: 'throw',
    },
  ],
} as unknown as ToolBox;

/** A box made by a second copy of the package (a fresh module graph). */
async function boxFromAnotherCopy(): Promise<ToolBox> {
  vi.resetModules();
  const other = await import('../../src/index.js');
  const tool = other.defineTool({ name: 'other', version: '1', input_schema: {}, handler: () => 'other' });
  return new other.ToolBox([tool]) as unknown as ToolBox;
}

describe('boxes whose tools this copy did not define', () => {
  it('ToolBox.merge refuses a forged box with a TypeError and adds nothing', () => {
    expect(ToolBox.isToolBox(forged)).toBe(true);
    expect(() => ToolBox.merge([new ToolBox([ok]), forged])).toThrow(TypeError);
  });

  it("ToolBox.merge refuses a box from another copy of the package (its tools' schemas were compiled there)", async () => {
    const foreign = await boxFromAnotherCopy();
    expect(ToolBox.isToolBox(foreign)).toBe(true);
    expect(() => ToolBox.merge([new ToolBox([ok]), foreign])).toThrow(TypeError);
  });

  it('publishTools and loadToolSet refuse a forged box with a TypeError and write nothing', async () => {
    const registry = new InMemoryToolRegistry();
    await expect(publishTools(registry, forged)).rejects.toThrow(TypeError);
    expect(await registry.get('forged')).toBeUndefined();
    await expect(loadToolSet(registry, forged)).rejects.toThrow(TypeError);
    await registry.close();
  });
});

describe('loadToolSet from a ToolBox', () => {
  it('lists excluded tools sorted by name, as from an array or a set', async () => {
    const registry = new InMemoryToolRegistry();
    const zeta = defineTool({ name: 'zeta', input_schema: {}, handler: () => 1 });
    const alpha = defineTool({ name: 'alpha', input_schema: {}, handler: () => 1 });
    const loaded = await loadToolSet(registry, new ToolBox([zeta, alpha]));
    expect(loaded.excluded.map((entry) => entry.tool_name)).toEqual(['alpha', 'zeta']);
    await registry.close();
  });
});
