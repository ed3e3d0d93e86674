// A hostile `pattern` must not hold a registry: the compatibility verdict tests stored values
// (enum/const, property names) against the new schema's patterns, and `^(a+)+$` against 40 a's
// and a b backtracks for hours. Each test is bounded (src/core/pattern-match.ts): past the
// comparison's budget the difference is undecidable. In this process (the verdict), as the
// command (a real child, COMPATIBILITY_FAILED), and over HTTP against `serve` (another client
// is answered meanwhile). On the old code every case here hangs.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkSpecs, compareSchemas, compareToolSchemas, InMemoryToolRegistry } from '../../src/index.js';
import { testsDirectly } from '../../src/core/pattern-match.js';
import { CLI, childEnv, errorCode, runCli, startCli, useChildProcessTimeout, useTempDir, writeJson } from '../cli/helpers.js';
import type { RunningCli } from '../cli/helpers.js';
import { runToEnd } from '../support/spawned.js';

useChildProcessTimeout();

const tempDir = useTempDir();

const HOSTILE = '^(a+)+$';
const VALUE = `${'a'.repeat(40)}b`;

const tool = (version: string, s: Record<string, unknown>) => ({
  tool_name: 'echo',
  version,
  input_schema: { type: 'object', properties: { s: { type: 'string', ...s } } },
  output_schema: {},
});

describe('the verdict with a pattern that backtracks', () => {
  it('an enum value tested against it: the value is undecidable (incompatible), the call returns', () => {
    const verdict = compareToolSchemas(tool('1.0.0', { enum: [VALUE] }), tool('1.0.1', { pattern: HOSTILE }));
    expect(verdict.compatible).toBe(false);
    expect(verdict.differences.filter((d) => d.breaking !== false).map((d) => [d.type, d.path, d.breaking])).toEqual([
      ['enum-value-removed', '/input_schema/properties/s/enum', 'undecidable'],
    ]);
  });

  it('one budget per verdict: three such properties, each undecidable', () => {
    const properties = (s: Record<string, unknown>) => Object.fromEntries(['x', 'y', 'z'].map((name) => [name, { type: 'string', ...s }]));
    const verdict = compareSchemas({ type: 'object', properties: properties({ enum: [VALUE] }) }, { type: 'object', properties: properties({ pattern: HOSTILE }) });
    expect(verdict.differences.filter((d) => d.breaking === 'undecidable').map((d) => d.path)).toEqual(['/properties/x/enum', '/properties/y/enum', '/properties/z/enum']);
  });

  it('property names tested against patternProperties (a const object, and a named property): undecidable', () => {
    const named = compareSchemas({ type: 'object', properties: { [VALUE]: { type: 'string' } } }, { type: 'object', patternProperties: { [HOSTILE]: { type: 'number' } } });
    expect(named.compatible).toBe(false);
    expect(named.differences.some((d) => d.breaking === 'undecidable')).toBe(true);
    const value = compareSchemas({ const: { [VALUE]: 1 } }, { type: 'object', patternProperties: { [HOSTILE]: { type: 'string' } } });
    expect(value.compatible).toBe(false);
    expect(value.differences.map((d) => d.breaking)).toContain('undecidable');
  });

  it('ordinary patterns decide as before, run directly or in the vm (a value over 256 characters, a quantified group)', () => {
    const long = 'ab-'.repeat(100) + 'cd';
    const cases: [string, string[], string[]][] = [
      ['^[a-z]{2,}$', ['abc', 'x'.repeat(300)], ['a', 'A1']],
      ['^[a-z]+(-[a-z]+)*$', ['ab-cd', long], ['x--y', `${long}-`]],
      ['^(GET|POST)$', ['GET'], ['PUT']],
      ['^\\p{Lu}\\d{2}$', ['É12'], ['e12']],
    ];
    for (const [pattern, kept, refused] of cases) {
      const verdict = compareSchemas({ type: 'string', enum: [...kept, ...refused] }, { type: 'string', pattern });
      const removed = verdict.differences.filter((d) => d.type === 'enum-value-removed');
      expect([pattern, removed.map((d) => [d.before, d.breaking])]).toEqual([pattern, refused.map((value) => [value, true])]);
    }
    // Property names against a pattern of a shape that runs in the vm: two in one run, one alone.
    const closed = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, additionalProperties: false, ...extra });
    const covered = closed({}, { patternProperties: { '^(ab|cd)+$': { type: 'string' } } });
    expect(compareSchemas(closed({ abcd: { type: 'string' }, cdab: { type: 'string' } }), covered).compatible).toBe(true);
    expect(compareSchemas(closed({ abx: { type: 'string' } }), covered).differences.filter((d) => d.breaking !== false).map((d) => [d.type, d.breaking])).toEqual([['property-removed', true]]);
  });

  it('a batch shares one budget: 200 specs whose tests each take a fraction of it are refused, not judged one budget each', async () => {
    // `^(?:(a+)+|a+b)$` matches 22 a's and a b after backtracking 2^22 steps (about 20 ms
    // here): each verdict alone is compatible in time (on the old code all 200 were, after 4 s
    // and more), all of them are not: one request must not hold the process 200 budgets.
    const slow = (i: number) => `^(?:(a+)+|a+b|${i})$`;
    const value = `${'a'.repeat(22)}b`;
    const registry = new InMemoryToolRegistry();
    const specs = Array.from({ length: 200 }, (_, i) => ({ ...tool('1.0.0', { enum: [value] }), tool_name: `t${i}` }));
    await registry.registerMany(specs);
    await registry.setPolicy({ compatibility: 'backward' });
    // A pattern of its own each: a value tested once against a pattern is not tested again.
    const next = specs.map((spec, i) => ({ ...spec, ...tool('1.0.1', { pattern: slow(i) }), tool_name: spec.tool_name }));
    const refused = await registry.registerMany(next).catch((error: unknown) => error as { code: string; message: string; context: { path: string } });
    expect(refused).toMatchObject({ code: 'COMPATIBILITY_FAILED', message: expect.stringMatching(/the pattern "\^\(\?:\(a\+\)\+\|a\+b\|\d+\)\$" could not be tested/) });
    expect((await registry.get('t0'))?.spec.version).toBe('1.0.0');
    const report = await checkSpecs(registry, next);
    expect(report.ok).toBe(false);
    expect(report.results.filter((result) => result.action === 'refused').length).toBeGreaterThan(0);
  });

  it('testsDirectly: a pattern whose shape bounds its backtracking, on a value short enough; any other in the vm', () => {
    const direct: [string, number][] = [
      ['^[a-z0-9_-]{1,64}$', 4096],
      ['^\\d{4}-\\d{2}-\\d{2}$', 4096],
      ['^(GET|POST|PUT)$', 4096],
      ['^\\p{L}+$', 4096],
      ['^(?<word>[a-z])x*?$', 4096],
      ['^\\d{5}(?:-\\d{4})?$', 4096],
      ['[+*?{}()|]+', 500],
      ['^https?://.+$', 500],
      ['^[a-z]+(-[a-z]+)*$', 63],
      ['^[a-z0-9]+(?:\\.[a-z0-9]+)*@example\\.com$', 63],
      ['^\\d+(,\\s?\\d{3})?$', 63],
    ];
    for (const [pattern, length] of direct) expect([pattern, length, testsDirectly(pattern, length)]).toEqual([pattern, length, true]);
    const vm: [string, number][] = [
      [HOSTILE, 1],
      ['^(a|a)*$', 1],
      ['^[a-z]+(-[a-z]+)*$', 64],
      ['^(-a*a*)*$', 1],
      ['^(-[a-z-]+)*$', 1],
      ['^(a-[a-z]+)*$', 1],
      ['^((-[a-z]+)*)*$', 1],
      ['^(-[a-z]+|_[a-z]+)*$', 1],
      ['^(a)\\1$', 1],
      ['^(?=a+)a*$', 1],
      ['^[a-z]+$', 4097],
      ['[a-z]+x', 600],
      ['^a*a*a*b', 100],
      ['(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)', 1],
      ['^a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?aaaaaaaaaaaaaaaaaa$', 18],
      ['^(', 1],
    ];
    for (const [pattern, length] of vm) expect([pattern, length, testsDirectly(pattern, length)]).toEqual([pattern, length, false]);
  });
});

describe('long patterns', () => {
  it('16 comparisons with 1 MiB patterns of their own keep at most a few MiB of them (compiled patterns are kept by size too)', () => {
    const dist = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
    if (!existsSync(dist)) throw new Error(`build first: ${dist} is missing (npm run build)`);
    const child = fileURLToPath(new URL('../fixtures/compared-patterns-heap.mjs', import.meta.url));
    const out = execFileSync(process.execPath, ['--expose-gc', child, '16', String(2 ** 20)], { encoding: 'utf8' });
    const result = JSON.parse(out) as { differences: number; grewMiB: number };
    expect(result.differences).toBe(16);
    // 32 MiB when 1,000 patterns of any length were kept (2 MiB a comparison, for the process's
    // life; checked on the code before); 2 since.
    expect(result.grewMiB).toBeLessThan(12);
  }, 60_000);
});

describe('as the command and the server (real processes)', () => {
  const children: RunningCli[] = [];
  afterEach(async () => {
    for (const cli of children.splice(0)) {
      cli.child.kill('SIGKILL');
      await cli.exited;
    }
  });

  /** A registry file under the policy compatibility 'backward' with echo 1.0.0 (its enum holds VALUE), and 1.0.1 (a pattern) written beside it. */
  async function registry(): Promise<{ cwd: string; db: string }> {
    const cwd = tempDir();
    const db = join(cwd, 'r.db');
    writeJson(join(cwd, 'v1.json'), tool('1.0.0', { enum: [VALUE] }));
    writeJson(join(cwd, 'v2.json'), tool('1.0.1', { pattern: HOSTILE }));
    expect((await runCli(['policy', 'set', '--compatibility', 'backward', '--db', db], { cwd })).code).toBe(0);
    expect((await runCli(['register', 'v1.json', '--db', db], { cwd })).code).toBe(0);
    return { cwd, db };
  }

  it('register of the new version ends with COMPATIBILITY_FAILED naming the place and the pattern; 1.0.0 stays', async () => {
    const { cwd, db } = await registry();
    // The child is killed after 60 s: on the old code it runs for hours.
    const refused = await runToEnd(process.execPath, [CLI, 'register', 'v2.json', '--db', db], { cwd, env: childEnv(), timeout: 60_000 });
    expect(refused.code, refused.stderr).toBe(1);
    expect(errorCode(refused.stderr)).toBe('COMPATIBILITY_FAILED');
    expect(refused.stderr).toContain('enum-value-removed at /input_schema/properties/s/enum (undecidable)');
    expect(refused.stderr).toContain(`the pattern "${HOSTILE}" could not be tested against a value within the 250 ms a verdict has for patterns`);
    expect(JSON.parse((await runCli(['get', 'echo', '--json', '--db', db], { cwd })).stdout)).toMatchObject({ spec: { version: '1.0.0' } });
  });

  it('serve: the PUT is refused with 409 and another client is answered meanwhile', async () => {
    const { cwd, db } = await registry();
    const cli = startCli(['serve', '--port', '0', '--db', db], { cwd });
    children.push(cli);
    await cli.lines(1);
    const url = (/^listening on (http:\/\/\S+)$/m.exec(cli.stdout()) as RegExpExecArray)[1] as string;
    const put = fetch(`${url}/v1/tools/echo`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(tool('1.0.1', { pattern: HOSTILE })) });
    // Sent while the PUT is read or judged: on the old code the judging never ends, and neither answers.
    const health = await fetch(`${url}/healthz`);
    const list = await fetch(`${url}/v1/tools`);
    expect([health.status, list.status]).toEqual([200, 200]);
    const refused = await put;
    expect(refused.status).toBe(409);
    const problem = (await refused.json()) as { code: string; detail: string };
    expect(problem.code).toBe('COMPATIBILITY_FAILED');
    expect(problem.detail).toContain('enum-value-removed at /input_schema/properties/s/enum (undecidable)');
    expect(((await (await fetch(`${url}/v1/tools/echo`)).json()) as { spec: { version: string } }).spec.version).toBe('1.0.0');
  });
});
