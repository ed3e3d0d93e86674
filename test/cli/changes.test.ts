// The command's history, get --version, changes, watch and conditional writes (issue 11).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorCode, plain, raceCli, runCli, runCliAsync, spec, startCli, useTempDir, withLibrary, writeJson, useChildProcessTimeout } from './helpers.js';
import type { CliResult } from './helpers.js';

useChildProcessTimeout();

const tempDir = useTempDir();

function ok(result: CliResult): CliResult {
  expect(result.code, result.stderr).toBe(0);
  return result;
}

describe('conditional writes on the command line', () => {
  it('--expect-version and --expect-absent on register, disable, enable and remove', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'tool-registry.db');
    const v1 = writeJson(join(cwd, 'v1.json'), spec('deploy', '1.4.0'));
    const v2 = writeJson(join(cwd, 'v2.json'), spec('deploy', '2.0.0'));
    const v3 = writeJson(join(cwd, 'v3.json'), spec('deploy', '3.0.0'));
    expect(ok(await runCli(['register', v1, '--expect-absent'], { cwd })).stdout).toBe('added deploy 1.4.0\n');
    const absent = await runCli(['register', v2, '--expect-absent'], { cwd });
    expect([absent.code, errorCode(absent.stderr)]).toEqual([1, 'PRECONDITION_FAILED']);
    expect(ok(await runCli(['register', v2, '--expect-version', '1.4.0'], { cwd })).stdout).toBe('replaced deploy 1.4.0 -> 2.0.0 (kept enabled)\n');
    expect(ok(await runCli(['register', v2, '--expect-version', '2.0.0'], { cwd })).stdout).toBe('unchanged deploy 2.0.0 (the identical spec is registered)\n');
    const stale = await runCli(['register', v3, '--expect-version', '1.4.0'], { cwd });
    expect([stale.code, errorCode(stale.stderr)]).toEqual([1, 'PRECONDITION_FAILED']);
    const wrongDisable = await runCli(['disable', 'deploy', '--expect-version', '1.4.0'], { cwd });
    expect([wrongDisable.code, errorCode(wrongDisable.stderr)]).toEqual([1, 'PRECONDITION_FAILED']);
    ok(await runCli(['disable', 'deploy', '--expect-version', '2.0.0'], { cwd }));
    ok(await runCli(['enable', 'deploy', '--expect-version', '2.0.0'], { cwd }));
    const wrongRemove = await runCli(['remove', 'deploy', '--expect-absent'], { cwd });
    expect([wrongRemove.code, errorCode(wrongRemove.stderr)]).toEqual([1, 'PRECONDITION_FAILED']);
    expect(await withLibrary(db, async (registry) => (await registry.get('deploy'))?.spec.version)).toBe('2.0.0');
    ok(await runCli(['remove', 'deploy', '--expect-version', '2.0.0'], { cwd }));
    expect(await withLibrary(db, (registry) => registry.has('deploy'))).toBe(false);
  });

  it('both flags together, or a condition on an array of specs, is a usage error (exit 2) that writes nothing', async () => {
    const cwd = tempDir();
    const one = writeJson(join(cwd, 'one.json'), spec('one'));
    const many = writeJson(join(cwd, 'many.json'), [spec('a'), spec('b')]);
    const both = await runCli(['register', one, '--expect-absent', '--expect-version', '1'], { cwd });
    expect([both.code, errorCode(both.stderr)]).toEqual([2, 'USAGE']);
    const array = await runCli(['register', many, '--expect-absent'], { cwd });
    expect([array.code, errorCode(array.stderr)]).toEqual([2, 'USAGE']);
    expect((await runCli(['list'], { cwd })).code).toBe(1); // still no database
  });

  it('five processes race one conditional switch: exactly one wins', async () => {
    const cwd = tempDir();
    ok(await runCli(['register', writeJson(join(cwd, 'v1.json'), spec('deploy', '1'))], { cwd }));
    const files = Array.from({ length: 5 }, (_, i) => writeJson(join(cwd, `v2-${i}.json`), spec('deploy', `2.${i}`)));
    const results = await Promise.all(files.map((file) => runCliAsync(['register', file, '--expect-version', '1'], { cwd })));
    expect(results.filter((result) => result.code === 0)).toHaveLength(1);
    const winner = results.findIndex((result) => result.code === 0);
    expect(results[winner]?.stdout).toBe(`replaced deploy 1 -> 2.${winner} (kept enabled)\n`);
    expect(results.filter((result) => result.code !== 0).map((result) => errorCode(result.stderr))).toEqual(
      Array(4).fill('PRECONDITION_FAILED'),
    );
  });
});

describe('register commands racing', () => {
  // Before the fix each command read the tools before its write and worded its lines from
  // that read: racers that all found new_N missing each said "added", and both arrays said
  // "replaced old_N 1 -> ...". Against that build (12 rounds of this race, loaded machine):
  // more than one "added" in 9 rounds, both replaces from 1 in 9, neither in 2; two rounds.
  const ROUNDS = 2;
  it('of racing commands one says added, the others unchanged; each replace names the version it replaced', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'tool-registry.db');
    for (let round = 0; round < ROUNDS; round++) {
      const [added, old] = [`new_${round}`, `old_${round}`];
      ok(await runCli(['register', writeJson(join(cwd, `${old}.json`), spec(old, '1'))], { cwd }));
      // One single spec and two arrays, all adding `added`; each array also replaces `old`.
      const results = await raceCli(`round${round}`, [
        { args: ['register'], input: spec(added) },
        { args: ['register'], input: [spec(added), spec(old, '2.a')] },
        { args: ['register'], input: [spec(added), spec(old, '2.b')] },
      ], { cwd });
      const lines = results.flatMap((result) => ok(result).stdout.trimEnd().split('\n'));
      expect(lines.filter((line) => line.includes(added)).sort()).toEqual([
        `added ${added} 1.0.0`,
        ...Array(2).fill(`unchanged ${added} 1.0.0 (the identical spec is registered)`),
      ]);
      // The later of the two replaces replaced the earlier one's version, not 1.
      const last = await withLibrary(db, async (registry) => (await registry.get(old))?.spec.version);
      const first = last === '2.a' ? '2.b' : '2.a';
      expect(lines.filter((line) => line.includes(old)).sort()).toEqual(
        [`replaced ${old} 1 -> ${first} (kept enabled)`, `replaced ${old} ${first} -> ${last} (kept enabled)`].sort(),
      );
    }
  });
});

describe('history, get --version, changes and status', () => {
  it('prints what the library returns', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'tool-registry.db');
    // Keys deliberately unsorted: the command prints them as registered.
    const v1 = { output_schema: { type: 'object' }, tool_name: 'weather', input_schema: { type: 'object', properties: { q: { type: 'string' } } }, version: '1' };
    ok(await runCli(['register', writeJson(join(cwd, 'v1.json'), v1)], { cwd }));
    ok(await runCli(['register', writeJson(join(cwd, 'v2.json'), { ...v1, version: '2' })], { cwd }));
    ok(await runCli(['disable', 'weather'], { cwd }));
    ok(await runCli(['remove', 'weather'], { cwd }));
    const history = ok(await runCli(['history', 'weather', '--json'], { cwd }));
    expect(JSON.parse(history.stdout)).toEqual(plain(await withLibrary(db, (registry) => registry.history('weather'))));
    expect(ok(await runCli(['history', 'weather'], { cwd })).stdout).toMatch(/^VERSION +FINGERPRINT +FIRST_REGISTERED_AT +CURRENT\n1 .*\n2 /);
    const old = ok(await runCli(['get', 'weather', '--version', '1', '--json'], { cwd }));
    expect(old.stdout).toBe(`${JSON.stringify(JSON.parse(history.stdout)[0], null, 2)}\n`);
    expect(Object.keys((JSON.parse(old.stdout) as { spec: object }).spec)).toEqual(['output_schema', 'tool_name', 'input_schema', 'version', 'description', 'tags']);
    const missing = await runCli(['get', 'weather', '--version', '9'], { cwd });
    expect([missing.code, errorCode(missing.stderr)]).toEqual([1, 'TOOL_NOT_FOUND']);
    const unknown = await runCli(['history', 'nothing'], { cwd });
    expect([unknown.code, errorCode(unknown.stderr)]).toEqual([1, 'TOOL_NOT_FOUND']);
    const changes = ok(await runCli(['changes', '--json'], { cwd }));
    expect(JSON.parse(changes.stdout)).toEqual(plain(await withLibrary(db, (registry) => registry.changes())));
    const table = ok(await runCli(['changes', '--since', '2'], { cwd })).stdout;
    expect(table).toMatch(/^REVISION +AT +ACTION +NAME +VERSION\n3 .* disabled +weather +2\n4 .* removed +weather +2\nrevision: 4\n$/);
    expect(ok(await runCli(['changes', '--since', '4'], { cwd })).stdout).toBe('no changes after revision 4 (current revision 4)\n');
    // --limit 0: the current revision alone, not "no changes" (there are four after 0).
    expect(ok(await runCli(['changes', '--limit', '0'], { cwd })).stdout).toBe('revision: 4\n');
    expect(JSON.parse(ok(await runCli(['status', '--json'], { cwd })).stdout)).toMatchObject({ revision: 4 });
    expect(ok(await runCli(['status'], { cwd })).stdout).toMatch(/^revision: +4$/m);
    const bad = await runCli(['changes', '--since', '-1'], { cwd });
    expect([bad.code, errorCode(bad.stderr)]).toEqual([2, 'USAGE']);
  });
});

describe('watch', () => {
  it('prints one JSON event per line as other processes commit, and exits 0 on SIGINT and SIGTERM', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'tool-registry.db');
    ok(await runCli(['register', writeJson(join(cwd, 'first.json'), spec('first'))], { cwd }));
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const watch = startCli(['watch', '--since', '0'], { cwd });
      try {
        await watch.lines(1);
        const writer = await runCliAsync(['disable', 'first'], { cwd });
        expect(writer.code).toBe(0);
        // The second writer is this process (another one than the watch's too), one node start fewer.
        ok(await runCli(['enable', 'first'], { cwd }));
        // Every change so far (--since 0): 3 in the first round, 5 in the second.
        const total = await withLibrary(db, async (registry) => (await registry.changes()).events.length);
        await watch.lines(total);
        watch.child.kill(signal);
        expect(await watch.exited, watch.stderr()).toBe(0);
        const events = watch.stdout().trimEnd().split('\n').map((line) => JSON.parse(line) as unknown);
        const expected = plain(await withLibrary(db, async (registry) => (await registry.changes()).events));
        expect(events).toEqual(expected);
        expect(events).toHaveLength(signal === 'SIGINT' ? 3 : 5);
      } finally {
        watch.child.kill('SIGKILL');
      }
    }
  });
});
