// `tool-registry search` (issue 26): the built command against a real file, its JSON equal to
// the library's search() page; tags, --all, --limit and its usage errors.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorCode, plain, runCli, useTempDir, withLibrary, writeJson, useChildProcessTimeout } from './helpers.js';
import { CATALOGUE } from '../conformance/search-suite.js';

useChildProcessTimeout();

const tempDir = useTempDir();

describe('search', () => {
  it('prints the best tools as a table, with --json exactly the library’s page, and refuses bad limits', async () => {
    const cwd = tempDir();
    expect((await runCli(['register', writeJson(join(cwd, 'tools.json'), CATALOGUE)], { cwd })).code).toBe(0);
    expect((await runCli(['disable', 'weatherAlerts'], { cwd })).code).toBe(0);
    const table = await runCli(['search', 'what is the weather in Paris?'], { cwd });
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^#\s+SCORE\s+NAME\s+ENABLED\s+DESCRIPTION$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/)[2])).toEqual(['get_weather']);
    expect(lines[1]).toMatch(/^1\s+\d\.\d{4}\s+get_weather\s+yes\s+Current weather conditions/);

    const json = await runCli(['search', 'weather email', '--all', '--limit', '3', '--tag', 'read', '--json'], { cwd });
    expect(json.code).toBe(0);
    const page = await withLibrary(join(cwd, 'tool-registry.db'), (registry) =>
      registry.search('weather email', { includeDisabled: true, limit: 3, tags: ['read'] }),
    );
    expect(JSON.parse(json.stdout)).toEqual(plain(page));
    expect(page.results.length).toBeGreaterThan(0);

    const withAll = (await runCli(['search', 'weather', '--all'], { cwd })).stdout;
    expect(withAll).toMatch(/weatherAlerts\s+no/);
    expect((await runCli(['search', 'zzz'], { cwd })).stdout).toBe('no enabled tools match "zzz"\n');
    // A long query is quoted to a line's width (a 100 KB query was repeated whole).
    const long = (await runCli(['search', 'z'.repeat(100_000)], { cwd })).stdout;
    expect([long.length, long.startsWith('no enabled tools match "zzz'), long.endsWith('z…\n')]).toEqual([224, true, true]);
    // A table the limit cut says so (it ended at the limit as if nothing more matched); one that holds every match does not.
    expect((await runCli(['search', 'weather', '--all', '--limit', '1'], { cwd })).stdout.trimEnd().split('\n').at(-1)).toBe('more tools match: raise --limit (1 shown, up to 1000)');
    expect((await runCli(['search', 'weather', '--all', '--limit', '2'], { cwd })).stdout).not.toContain('more tools match');

    // A limit out of 1-1000 is a usage error, as a word is (it was the library's VALIDATION_FAILED, exit 1).
    const zero = await runCli(['search', 'weather', '--limit', '0'], { cwd });
    expect(zero.code).toBe(2);
    expect(errorCode(zero.stderr)).toBe('USAGE');
    expect((await runCli(['search', 'weather', '--limit', '1000'], { cwd })).code).toBe(0);
    const word = await runCli(['search', 'weather', '--limit', 'ten'], { cwd });
    expect(word.code).toBe(2);
    expect(errorCode(word.stderr)).toBe('USAGE');
  });
});
