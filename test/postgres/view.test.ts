// The `tools` view an operator reads with psql: one row per current tool, and every row
// readable, whatever text a description holds.
import { expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import { useFileDatabase } from './helpers.js';

const database = useFileDatabase();

it('the tools view has one row per current tool with the documented columns, and a description with U+0000 shows U+FFFD instead of failing the query', async () => {
  const schema = database.schema();
  const registry = await openPostgresToolRegistry({ connectionString: database.url(), schema, clock: () => new Date('2026-01-01T00:00:00Z') });
  try {
    await registry.register({ tool_name: 'plain', version: '1', description: 'Searches.', tags: ['a'], input_schema: {}, output_schema: {} });
    await registry.register({ tool_name: 'nul', description: 'a\u0000b \\u0000 c', tags: ['x\u0000'], input_schema: {}, output_schema: {} });
    await registry.register({ tool_name: 'gone', input_schema: {}, output_schema: {} });
    await registry.remove('gone');
    await registry.setEnabled('plain', false);
    const { rows } = await database.pool().query(`SELECT * FROM "${schema}".tools ORDER BY tool_name`);
    const fingerprint = async (name: string) => (await registry.history(name)).at(-1)?.fingerprint;
    expect(rows).toEqual([
      { tool_name: 'nul', version: null, enabled: true, created_at: '2026-01-01T00:00:00.000Z', description: 'a\uFFFDb \\ufffd c', tags: ['x\uFFFD'], fingerprint: await fingerprint('nul'), deprecation_message: null, deprecation_replacement: null, deprecation_sunset: null },
      { tool_name: 'plain', version: '1', enabled: false, created_at: '2026-01-01T00:00:00.000Z', description: 'Searches.', tags: ['a'], fingerprint: await fingerprint('plain'), deprecation_message: null, deprecation_replacement: null, deprecation_sunset: null },
    ]);
    // The store itself returns the description exactly.
    expect((await registry.get('nul'))?.spec.description).toBe('a\u0000b \\u0000 c');
  } finally {
    await registry.close();
  }
});
