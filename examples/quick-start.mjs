// The library in one page: register, list, disable, export, and read it all back after a
// "restart". Run with `npm run example` (it builds first). Re-runnable: the specs carry
// versions, so a second run finds them unchanged.
import { openSqliteToolRegistry, VersionConflictError } from 'tool-registry'; // the package by its name: in the repository too (a package may import itself)

const filename = process.argv[2] ?? 'example.db';
const registry = await openSqliteToolRegistry({ filename });

const search = await registry.register({
  tool_name: 'web_search',
  version: '1.0.0',
  description: 'Search the web and return the top results.',
  input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  output_schema: { type: 'object', properties: { results: { type: 'array', items: { type: 'string' } } } },
  tags: ['web', 'search'],
});
console.log('registered', search.spec.tool_name, search.spec.version, 'at', search.created_at);

await registry.register({
  tool_name: 'calculator',
  version: '2.1.0',
  input_schema: { type: 'object', properties: { expression: { type: 'string' } } },
  output_schema: { type: 'object', properties: { value: { type: 'number' } } },
});

try {
  // Same name, same version, different spec: refused, nothing changes.
  await registry.register({ tool_name: 'calculator', version: '2.1.0', input_schema: {}, output_schema: {} });
} catch (error) {
  if (!(error instanceof VersionConflictError)) throw error;
  console.log('refused:', error.code, error.context.tool_name, error.context.version);
}

await registry.setEnabled('calculator', false);
console.log('enabled tools:', (await registry.listAll()).map((r) => r.spec.tool_name));
console.log('all tools:', (await registry.listAll({ includeDisabled: true })).map((r) => `${r.spec.tool_name}${r.enabled ? '' : ' (disabled)'}`));
await registry.close();

// A new handle on the same file sees the same state, as a restarted service would.
const reopened = await openSqliteToolRegistry({ filename });
const snapshot = await reopened.exportSnapshot();
console.log('snapshot:', JSON.stringify(snapshot).length, 'bytes,', snapshot.tools.length, 'tools');
await reopened.close();
