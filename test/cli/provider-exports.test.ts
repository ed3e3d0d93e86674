// `export --format` and `lint`, run as an operator runs them: the built command in a subprocess.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { lintTools, toAiSdkTools, toAnthropicTools, toGeminiTools, toMcpTools, toOpenAITools } from '../../src/index.js';
import { errorCode, runCli, spec, useTempDir, withLibrary, useChildProcessTimeout } from './helpers.js';

useChildProcessTimeout();

const tempDir = useTempDir();

const strictSchema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false };

/** A database with a clean tool, a tool OpenAI and Anthropic refuse (a dot in its name), and a disabled tool. */
async function database(cwd: string): Promise<string> {
  const db = join(cwd, 'tools.db');
  const specs = [spec('get_weather', '1', { input_schema: strictSchema }), spec('svc.lookup'), spec('retired', '1', { input_schema: { type: 'string' } })];
  expect((await runCli(['--db', db, 'register', '-'], { cwd, input: JSON.stringify(specs) })).code).toBe(0);
  expect((await runCli(['--db', db, 'disable', 'retired'], { cwd })).code).toBe(0);
  return db;
}

describe('export --format', () => {
  it('prints what the library exports for each format (enabled tools only)', async () => {
    const cwd = tempDir();
    const db = await database(cwd);
    const tools = await withLibrary(db, (registry) => registry.listAll());
    const expected: Record<string, unknown> = {
      mcp: toMcpTools(tools),
      gemini: toGeminiTools(tools),
      'ai-sdk': toAiSdkTools(tools),
    };
    for (const [format, value] of Object.entries(expected)) {
      const result = await runCli(['--db', db, 'export', '--format', format], { cwd });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual(value);
    }
    const mcp = ListToolsResultSchema.parse({ tools: JSON.parse((await runCli(['--db', db, 'export', '--format', 'mcp'], { cwd })).stdout) as unknown });
    expect(mcp.tools.map((t) => t.name)).toEqual(['get_weather', 'svc.lookup']);
  });

  it('refuses a tool the provider rejects: exit 1, PROVIDER_INCOMPATIBLE, nothing on stdout', async () => {
    const cwd = tempDir();
    const db = await database(cwd);
    for (const format of ['openai', 'openai-responses', 'anthropic']) {
      const result = await runCli(['--db', db, 'export', '--format', format], { cwd });
      expect(result.code).toBe(1);
      expect(errorCode(result.stderr)).toBe('PROVIDER_INCOMPATIBLE');
      expect(result.stderr).toMatch(/^ {2}svc\.lookup \/tool_name: .* \[name-pattern\]$/m);
      expect(result.stdout).toBe('');
    }
  });

  it('--skip-incompatible leaves them out and names them on stderr; --strict exports strict tools', async () => {
    const cwd = tempDir();
    const db = await database(cwd);
    const tools = await withLibrary(db, (registry) => registry.listAll());
    const result = await runCli(['--db', db, 'export', '--format', 'openai-responses', '--skip-incompatible', '--strict'], { cwd });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(toOpenAITools(tools, { api: 'responses', strict: true, onIncompatible: 'skip' }));
    expect(JSON.parse(result.stdout)).toHaveLength(1);
    expect(result.stderr).toMatch(/^skipped svc\.lookup: name-pattern at \/tool_name: /m);
    const anthropic = await runCli(['--db', db, 'export', '--format', 'anthropic', '--skip-incompatible'], { cwd });
    expect(JSON.parse(anthropic.stdout)).toEqual(toAnthropicTools(tools, { onIncompatible: 'skip' }));
  });

  it('--out writes the file whole; a refused export writes no file', async () => {
    const cwd = tempDir();
    const db = await database(cwd);
    const out = join(cwd, 'mcp.json');
    const result = await runCli(['--db', db, 'export', '--format', 'mcp', '--out', out], { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^exported 2 tools to .*mcp\.json \(mcp\)$/m);
    expect(readFileSync(out, 'utf8')).toBe((await runCli(['--db', db, 'export', '--format', 'mcp'], { cwd })).stdout);
    const refused = join(cwd, 'openai.json');
    expect((await runCli(['--db', db, 'export', '--format', 'openai', '--out', refused], { cwd })).code).toBe(1);
    expect(existsSync(refused)).toBe(false);
  });

  it('without --format it is still the snapshot; bad combinations are usage errors (exit 2)', async () => {
    const cwd = tempDir();
    const db = await database(cwd);
    const snapshot = JSON.parse((await runCli(['--db', db, 'export'], { cwd })).stdout) as { tools: unknown[] };
    expect(snapshot.tools).toHaveLength(3);
    for (const args of [['export', '--strict'], ['export', '--skip-incompatible'], ['export', '--format', 'gemini', '--strict'], ['export', '--format', 'yaml']]) {
      const result = await runCli(['--db', db, ...args], { cwd });
      expect(result.code, args.join(' ')).toBe(2);
      expect(errorCode(result.stderr)).toBe('USAGE');
    }
  });

  it('on a missing database is DATABASE_NOT_FOUND and creates nothing', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'missing.db');
    const result = await runCli(['--db', db, 'export', '--format', 'mcp'], { cwd });
    expect(result.code).toBe(1);
    expect(errorCode(result.stderr)).toBe('DATABASE_NOT_FOUND');
    expect(existsSync(db)).toBe(false);
  });
});

describe('lint', () => {
  it('a table of findings; exit 1 on an error finding (LINT_FAILED); --json prints lintTools()', async () => {
    const cwd = tempDir();
    const db = await database(cwd);
    const tools = await withLibrary(db, (registry) => registry.listAll());
    const result = await runCli(['--db', db, 'lint'], { cwd });
    expect(result.code).toBe(1);
    expect(errorCode(result.stderr)).toBe('LINT_FAILED');
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TOOL +PROVIDER +SEVERITY +RULE +PATH +MESSAGE$/);
    expect(lines.slice(1).map((line) => line.split(/ +/).slice(0, 5))).toEqual([
      ['svc.lookup', 'openai', 'error', 'name-pattern', '/tool_name'],
      ['svc.lookup', 'anthropic', 'error', 'name-pattern', '/tool_name'],
    ]);
    const json = await runCli(['--db', db, 'lint', '--json', '--strict'], { cwd });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(JSON.stringify(lintTools(tools, { strict: true }))));
  });

  it('--provider narrows the rules; no error finding is exit 0 (warnings included)', async () => {
    const cwd = tempDir();
    const db = await database(cwd);
    const clean = await runCli(['--db', db, 'lint', '--provider', 'mcp', '--provider', 'gemini'], { cwd });
    expect(clean.code).toBe(0);
    expect(clean.stdout).toMatch(/^ok: no findings; 2 enabled tools checked for mcp, gemini$/m);
    expect((await runCli(['--db', db, 'register', '-'], { cwd, input: JSON.stringify(spec('g'.repeat(70))) })).code).toBe(0);
    const warned = await runCli(['--db', db, 'lint', '--provider', 'gemini'], { cwd });
    expect(warned.code).toBe(0);
    expect(warned.stdout).toMatch(/ warning +name-length +\/tool_name /);
    expect((await runCli(['--db', db, 'lint', '--provider', 'bedrock'], { cwd })).code).toBe(2);
  });

  it('takes --db after the command name too, like every command', async () => {
    const cwd = tempDir();
    const db = await database(cwd);
    expect((await runCli(['lint', '--db', db, '--provider', 'mcp'], { cwd })).code).toBe(0);
    const exported = await runCli(['export', '--db', db, '--format', 'mcp'], { cwd });
    expect(exported.code).toBe(0);
    expect((JSON.parse(exported.stdout) as unknown[]).length).toBe(2);
  });

  it('a disabled tool is not linted', async () => {
    const cwd = tempDir();
    const db = await database(cwd);
    // "retired" has a string root schema: every provider would reject it, but it is disabled.
    const json = JSON.parse((await runCli(['--db', db, 'lint', '--json'], { cwd })).stdout) as { tool_name: string }[];
    expect(json.map((found) => found.tool_name)).not.toContain('retired');
  });
});
