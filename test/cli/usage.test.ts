// Usage errors exit 2 with the help text; --help and --version exit 0.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { sinceInstant } from '../../src/since-instant.js';
import { CLI, ROOT, childEnv, errorCode, runCli, spawnCli, spec, useTempDir, useChildProcessTimeout } from './helpers.js';

useChildProcessTimeout();

const tempDir = useTempDir();

/**
 * Every option that takes a value, of every command, read from the program itself (so a new
 * one is swept too): the words before it (the command, its required arguments and options),
 * two values its parser takes, and whether it repeats (its default is a list).
 */
function valueOptions(): { before: string[]; long: string; values: [string, string]; repeatable: boolean }[] {
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const program = buildProgram({ stdin: process.stdin, stdout: sink, stderr: sink, env: {} });
  const named: Record<string, [string, string]> = {
    '--format': ['mcp', 'openai'], '--mode': ['merge', 'replace'], '--version-order': ['any', 'semver'], '--compatibility': ['none', 'backward'],
    '--scopes': ['read', 'write'], '--cors': ['http://a.example', 'http://b.example'], '--approve': ['all', 'none'], '--name': ['a', 'b'],
  };
  const numeric = /^<(n|ms|port|bytes|count|revision|id|days|rows|duration)>$/;
  const values = (flags: string, long: string, command: string): [string, string] =>
    named[long] ?? (long === '--since' && command === 'calls' ? ['2026-01-01', '2026-01-02'] : numeric.test(flags.split(' ').at(-1) as string) ? ['1', '2'] : ['a', 'b']);
  const found: { before: string[]; long: string; values: [string, string]; repeatable: boolean }[] = [];
  const walk = (command: Command, path: string[]): void => {
    const required = command.registeredArguments.filter((argument) => argument.required).map(() => 'x');
    const mandatory = command.options.filter((option) => option.mandatory);
    for (const option of command.options) {
      if (option.isBoolean() || option.negate || option.long === undefined) continue;
      const others = mandatory.filter((other) => other !== option).flatMap((other) => [other.long as string, values(other.flags, other.long as string, command.name())[0]]);
      const before = [...path, ...required, ...others];
      found.push({ before, long: option.long, values: values(option.flags, option.long, command.name()), repeatable: Array.isArray(option.defaultValue) });
    }
    for (const sub of command.commands) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  return found;
}

const COMMANDS = ['list', 'get', 'history', 'changes', 'watch', 'register', 'enable', 'disable', 'remove', 'export', 'lint', 'import', 'status', 'verify', 'migrate'];

describe('the built bin', () => {
  // The other CLI tests run the command in-process (runCli): here the bin itself, as a process,
  // gives the same exit codes, output and error lines for a success (0), a registry error (1)
  // and a usage error (2), reading standard input from a pipe.
  it('exits 0, 1 and 2 with the output the in-process command gives', async () => {
    const cwd = tempDir();
    const cases: [string[], string | undefined, number][] = [
      [['register', '-'], JSON.stringify(spec('weather')), 0],
      [['list', '--json'], undefined, 0],
      [['enable', 'no_such_tool'], undefined, 1],
      [['import', 'missing.json', '--mode', 'upsert'], undefined, 2],
    ];
    let notFound = '';
    for (const [args, input, code] of cases) {
      const spawned = spawnCli(args, { cwd, ...(input === undefined ? {} : { input }) });
      expect({ args, code: spawned.code }).toEqual({ args, code });
      if (args[0] === 'enable') notFound = spawned.stderr;
      if (args[0] === 'register') continue; // registered now: the in-process run would say "unchanged"
      const inProcess = await runCli(args, { cwd, ...(input === undefined ? {} : { input }) });
      expect({ args, code: inProcess.code, stdout: inProcess.stdout, stderr: inProcess.stderr }).toEqual({
        args,
        code,
        stdout: spawned.stdout,
        stderr: spawned.stderr,
      });
    }
    // The bin's own error line names the code (the loop's run: a fifth process would print the same).
    expect(errorCode(notFound)).toBe('TOOL_NOT_FOUND');
  });
});

describe('a closed standard error', () => {
  // `... 2>&1 | head -1` closes the pipe after the error line: the help could not be written
  // and the unheard EPIPE ended the bin with exit 1, a usage error reported as a registry error.
  it('leaves the exit code as it is: a usage error is still 2', async () => {
    const child = spawn(process.execPath, [CLI, 'search', 'x', '--limit', '0'], { cwd: tempDir(), env: childEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    // Closed before the bin has started, so its first write to stderr meets EPIPE.
    child.stderr.destroy();
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(2);
  });
});

describe('usage', () => {
  it('--help prints every command on stdout and exits 0', async () => {
    const result = await runCli(['--help'], { cwd: tempDir() });
    expect(result.code).toBe(0);
    for (const command of COMMANDS) expect(result.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    expect(result.stdout).toMatch(/--db <path>/);
    expect(result.stdout).toMatch(/TOOL_REGISTRY_DB/);
  });

  // A repeatable option (`--tag`, `--header`...) said "(default: [])": a JavaScript value, no word a user gives.
  it("no command's help shows a JavaScript value as a default ([], {}, undefined, NaN)", () => {
    const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
    const shown: { command: string; text: string }[] = [];
    let repeatable = 0;
    const walk = (command: Command, path: string[]): void => {
      repeatable += command.options.filter((option) => Array.isArray(option.defaultValue)).length;
      const help = command.helpInformation().replace(/\n +/g, ' ');
      for (const text of help.match(/.{0,40}(?:\[\]|\{\}|\bundefined\b|\bNaN\b)/g) ?? []) shown.push({ command: path.join(' '), text });
      for (const sub of command.commands) walk(sub, [...path, sub.name()]);
    };
    walk(buildProgram({ stdin: process.stdin, stdout: sink, stderr: sink, env: {} }), ['tool-registry']);
    expect(repeatable).toBeGreaterThan(5);
    expect(shown).toEqual([]);
  });

  it('help COMMAND and COMMAND --help print that command and exit 0', async () => {
    const cwd = tempDir();
    for (const args of [['help', 'import'], ['import', '--help']]) {
      const result = await runCli(args, { cwd });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: tool-registry import \[options\] <file>/);
      expect(result.stdout).toMatch(/--dry-run/);
    }
    // A command of a group, named after `help` as after the group's own help.
    for (const args of [['help', 'upstream', 'add'], ['upstream', 'help', 'add'], ['help', 'token', 'create']]) {
      const result = await runCli(args, { cwd });
      expect({ args, code: result.code, usage: result.stdout.split('\n')[0] }).toEqual({ args, code: 0, usage: `Usage: tool-registry ${args.filter((arg) => arg !== 'help').join(' ')} [options]${args.includes('add') ? ' <name>' : ''}` });
    }
    // A repeatable option's default is said in words: `(default: [])` meant nothing to a reader.
    const create = await runCli(['token', 'create', '--help'], { cwd });
    expect(create.stdout.replace(/\s+/g, ' ')).toContain('--namespace <ns> limit it to this namespace; repeat for several (default: every namespace)');
  });

  // --help and usage errors run on the bin's own imports: one shared helper in the core chunk
  // (580 kB: Kysely, the search index) made every --help load it, 0.17 s became 0.44 s.
  it("the built bin's own imports leave out the library's chunks (loaded when a command runs)", () => {
    const imports = [...readFileSync(CLI, 'utf8').matchAll(/^import .*"\.\.\/chunks\/([a-z-]+)-[\w-]+\.js";$/gm)].map((match) => match[1]);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((chunk) => ['core', 'sqlite', 'postgres', 'runtime', 'exports', 'server', 'mcp'].includes(chunk as string))).toEqual([]);
  });

  it('--version prints the package version and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const result = await runCli(['--version'], { cwd: tempDir() });
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(version);
  });

  it.each([
    ['no command', []],
    ['an unknown command', ['frobnicate']],
    ['an unknown option', ['list', '--everything']],
    ['a missing argument', ['get']],
    ['a missing file argument', ['import']],
    ['an extra argument', ['get', 'a', 'b']],
    ['a --mode other than merge or replace', ['import', 'x.json', '--mode', 'upsert']],
    ['--db without a value', ['list', '--db']],
    ['--out without a value', ['export', '--out']],
  ])('%s exits 2 with the help text on stderr', async (_what, args) => {
    const cwd = tempDir();
    const result = await runCli(args, { cwd });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^Usage: tool-registry/m);
    if (args.length > 0) expect(errorCode(result.stderr)).toBe('USAGE');
  });

  // Every numeric option, each value it refuses: `error USAGE:` naming the option and the value,
  // exit 2, before any database is opened. search --limit 0 and 1001 and calls --before 0 were
  // the library's VALIDATION_FAILED (exit 1).
  it('a numeric option out of its range is a usage error naming the option and the value', async () => {
    const cwd = tempDir();
    const malformed = ['-1', '1.5', '1e3', '', '99999999999999999999'];
    const cases: [string[], string, string[]][] = [
      [['search', 'x'], '--limit', ['0', '1001', ...malformed]],
      [['changes'], '--since', malformed],
      [['changes'], '--limit', malformed],
      [['watch'], '--since', malformed],
      [['calls'], '--limit', ['0', '10001', ...malformed]],
      [['calls'], '--before', ['0', ...malformed]],
      [['serve'], '--port', ['65536', ...malformed]],
      [['serve'], '--drain-timeout', ['2147483648', ...malformed]],
      ...['--max-body', '--max-streams', '--max-sessions', '--max-open-namespaces'].map((option): [string[], string, string[]] => [['serve'], option, ['0', '2147483648', ...malformed]]),
      ...['serve', 'mcp'].flatMap((name) =>
        ['--call-timeout-ms', '--sync-interval', '--page-size', '--max-result-bytes', '--max-calls-in-flight', '--call-retention-days', '--call-retention-rows'].map(
          (option): [string[], string, string[]] => [[name], option, ['0', ...malformed]],
        ),
      ),
      [['serve'], '--session-idle-ms', ['0', '2147483648', ...malformed]],
      [['mcp'], '--max-message-bytes', ['0', ...malformed]],
      ...['add', 'sync', 'pending', 'approve'].map((sub): [string[], string, string[]] => [['upstream', sub, 'x'], '--timeout', ['0', '2147483648', ...malformed]]),
    ];
    for (const [args, option, values] of cases) {
      for (const value of values) {
        const { code, stderr } = await runCli([...args, option, value], { cwd });
        const line = stderr.split('\n')[0] ?? '';
        expect({ args, option, value, code, named: line.startsWith(`error USAGE: option '${option} `) && line.includes(`argument '${value}' is invalid`) }).toEqual({ args, option, value, code: 2, named: true });
      }
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  // `--tools ''` was error INTERNAL with a stack, `token create --tokens ''` left a temporary file
  // in the working folder, `token list --tokens ''` printed nothing and exit 0; `--expect-version ''`
  // was PRECONDITION_FAILED, `calls --tool ''` and `list --tag ''` found nothing, `upstream add
  // --cwd ''` ran in the working folder. Every value option (but --prefix, where '' means no prefix).
  it('an empty value of any option is a usage error naming the option, and leaves nothing', async () => {
    const cwd = tempDir();
    const cases = valueOptions().filter(({ long }) => long !== '--prefix');
    expect(cases.length).toBeGreaterThan(60);
    const wrong = [];
    for (const { before, long } of cases) {
      const args = [...before, long, ''];
      const { code, stdout, stderr } = await runCli(args, { cwd });
      const line = stderr.split('\n')[0] ?? '';
      if (!(code === 2 && stdout === '' && line.startsWith('error USAGE: ') && line.includes(long) && /''|""/.test(line))) wrong.push({ args, code, line });
    }
    expect(wrong).toEqual([]);
    expect(readdirSync(cwd)).toEqual([]);
  });

  // Node reads bytes that are not UTF-8 in an argument as U+FFFD: `--db $'caf\xe9.db' migrate`
  // created `caf\uFFFD.db` (EF BF BD on disk), another file than the one named, silently.
  it('a file name the command may create holding U+FFFD (bytes not UTF-8) is a usage error, and creates nothing', async () => {
    const cwd = tempDir();
    const name = 'caf\uFFFD';
    const cases: [string[], Record<string, string>][] = [
      [['--db', `${name}.db`, 'migrate'], {}],
      [['migrate'], { TOOL_REGISTRY_DB: `${name}.db` }],
      [['export', '--out', `${name}.json`], {}],
      [['token', 'create', '--name', 'a', '--scopes', 'read', '--tokens', `${name}.json`], {}],
      [['token', 'create', '--name', 'a', '--scopes', 'read'], { TOOL_REGISTRY_TOKENS: `${name}.json` }],
      [['serve', '--data-dir', name], {}],
    ];
    for (const [args, env] of cases) {
      const { code, stdout, stderr } = await runCli(args, { cwd, env });
      expect({ args, code, stdout, line: stderr.split('\n')[0] }).toEqual({ args, code: 2, stdout: '', line: expect.stringMatching(/^error USAGE: .*holds U\+FFFD, which Node puts for bytes that are not UTF-8/) });
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  // `remove ''` said "nothing removed:  was not registered" (exit 0), `register ''` "cannot read :".
  it('an empty NAME or FILE argument is a usage error naming it (not search QUERY), and leaves nothing', async () => {
    const cwd = tempDir();
    const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
    const cases: string[][] = [];
    const walk = (command: Command, path: string[]): void => {
      const given = command.registeredArguments;
      const mandatory = command.options.filter((option) => option.mandatory).flatMap((option) => [option.long as string, option.long === '--scopes' ? 'read' : 'a']);
      // A list (`upstream approve NAME TOOL...`) with an empty one after a given one.
      const empty = (variadic: boolean): string[] => (variadic ? ['x', ''] : ['']);
      if (command.name() !== 'search') given.forEach((_, at) => cases.push([...path, ...given.flatMap((argument, index) => (index === at ? empty(argument.variadic) : ['x'])), ...mandatory]));
      for (const sub of command.commands) walk(sub, [...path, sub.name()]);
    };
    walk(buildProgram({ stdin: process.stdin, stdout: sink, stderr: sink, env: {} }), []);
    expect(cases.length).toBeGreaterThan(15);
    expect(cases).toContainEqual(['upstream', 'approve', 'x', 'x', '']);
    const wrong = [];
    for (const args of cases) {
      const { code, stdout, stderr } = await runCli(args, { cwd });
      const line = stderr.split('\n')[0] ?? '';
      if (!(code === 2 && stdout === '' && /^error USAGE: command-argument value '' is invalid for argument '\w+'/.test(line))) wrong.push({ args, code, line });
    }
    expect(wrong).toEqual([]);
    expect((await runCli(['upstream', 'approve', 'x', 'a', ''], { cwd })).stderr.split('\n')[0]).toBe("error USAGE: command-argument value '' is invalid for argument 'tools'. expected a tool name, got an empty value");
    expect(readdirSync(cwd)).toEqual([]);
    // An empty query is no error: it has no terms, so no results (here: to the missing database).
    expect(errorCode((await runCli(['search', ''], { cwd })).stderr)).toBe('DATABASE_NOT_FOUND');
  });

  // `register` said "added a" of a tool stored nowhere (SQLite's in-memory database ends with the command).
  it('--db :memory: (or TOOL_REGISTRY_DB) is a usage error for every command that ends, and for mcp without --publish', async () => {
    const cwd = tempDir();
    // mcp without --publish: empty, it said DATABASE_NOT_FOUND and "run tool-registry migrate" (exit 1).
    for (const args of [['register', '-'], ['migrate'], ['list'], ['upstream', 'list'], ['policy', 'set', '--version-order', 'semver'], ['mcp']]) {
      for (const via of ['flag', 'env'] as const) {
        const run = via === 'flag' ? await runCli(['--db', ':memory:', ...args], { cwd, input: JSON.stringify(spec('a')) }) : await runCli(args, { cwd, input: JSON.stringify(spec('a')), env: { TOOL_REGISTRY_DB: ':memory:' } });
        expect({ args, via, code: run.code, stdout: run.stdout, line: run.stderr.split('\n')[0] }).toEqual({ args, via, code: 2, stdout: '', line: expect.stringMatching(/^error USAGE: database :memory: is SQLite's in-memory database/) });
      }
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  // It linted gemini alone and said "(strict)", as if strict rules had been checked.
  it('lint --strict with only providers that have no strict mode is a usage error, as export --strict is', async () => {
    const cwd = tempDir();
    const alone = await runCli(['lint', '--provider', 'gemini', '--provider', 'mcp', '--strict'], { cwd });
    expect([alone.code, alone.stderr.split('\n')[0]]).toEqual([2, 'error USAGE: --strict applies to --provider openai, anthropic only']);
    // With openai among them it applies (here: to the missing database).
    expect(errorCode((await runCli(['lint', '--provider', 'gemini', '--provider', 'openai', '--strict'], { cwd })).stderr)).toBe('DATABASE_NOT_FOUND');
  });

  // Date.parse reads a day the calendar lacks as a later one (2026-02-30 as March 2): the
  // command listed the calls since a day nobody asked for.
  it('calls --since a day the calendar does not have is a usage error, not the day Date.parse rolls it to', async () => {
    const cwd = tempDir();
    for (const value of ['2026-02-30', '2026-02-29T10:00:00Z', '2026-04-31 08:00']) {
      const { code, stderr } = await runCli(['calls', '--since', value], { cwd });
      expect({ value, code, line: stderr.split('\n')[0] }).toEqual({ value, code: 2, line: expect.stringContaining(`error USAGE: option '--since <iso>' argument '${value}' is invalid`) });
    }
    // A day that exists gets past the option (to the missing database).
    expect(errorCode((await runCli(['calls', '--since', '2028-02-29'], { cwd })).stderr)).toBe('DATABASE_NOT_FOUND');
  });

  // A date-time without an offset was read in the machine's time zone: one command, a different instant on two machines.
  it('calls --since a date-time without Z or +hh:mm is a usage error naming it; a date alone is midnight UTC', async () => {
    const cwd = tempDir();
    for (const value of ['2026-01-01T10:00:00', '2026-01-01 10:00', '2026-01-01t10:00:00.5']) {
      const { code, stderr } = await runCli(['calls', '--since', value], { cwd });
      expect({ code, line: stderr.split('\n')[0] }).toEqual({
        code: 2,
        line: `error USAGE: option '--since <iso>' argument '${value}' is invalid. "${value}" has no UTC offset (it would be read in this machine's time zone); add Z or +hh:mm, such as ${value}Z`,
      });
    }
    for (const value of ['2026-01-01T10:00:00Z', '2026-01-01T10:00+02:00', '2026-01-01']) expect(errorCode((await runCli(['calls', '--since', value], { cwd })).stderr), value).toBe('DATABASE_NOT_FOUND');
    expect(['2026-01-01', '2026-01-01T10:00:00+02:00'].map(sinceInstant)).toEqual(['2026-01-01T00:00:00.000Z', '2026-01-01T08:00:00.000Z']);
  });

  it('a usage error touches nothing: the mode is checked before the input is read', async () => {
    const cwd = tempDir();
    const result = await runCli(['import', '-', '--mode', 'upsert'], { cwd, input: '{"tools": []}' });
    expect(result.code).toBe(2);
    expect(result.stderr).not.toMatch(/^error (?!USAGE)/m);
  });

  // Commander prints the help alone here; every usage error starts with its `error USAGE:` line.
  it('a missing command and help of an unknown one say so before the help, exit 2', async () => {
    const cwd = tempDir();
    const cases: [string[], string, string][] = [
      [[], "error USAGE: missing command for 'tool-registry'", 'Usage: tool-registry [options] [command]'],
      [['help', 'nope'], "error USAGE: unknown command 'nope'", 'Usage: tool-registry [options] [command]'],
      [['upstream'], "error USAGE: missing command for 'upstream'", 'Usage: tool-registry upstream [options] [command]'],
      [['token', 'help', 'nope'], "error USAGE: unknown command 'nope'", 'Usage: tool-registry token [options] [command]'],
      [['help', 'upstream', 'nope'], "error USAGE: unknown command 'nope'", 'Usage: tool-registry upstream [options] [command]'],
      // An empty name printed the general help, exit 0.
      [['help', ''], "error USAGE: unknown command ''", 'Usage: tool-registry [options] [command]'],
      [['upstream', 'help', ''], "error USAGE: unknown command ''", 'Usage: tool-registry upstream [options] [command]'],
      [['help', 'token', ''], "error USAGE: unknown command ''", 'Usage: tool-registry token [options] [command]'],
    ];
    for (const [args, line, usage] of cases) {
      const { code, stdout, stderr } = await runCli(args, { cwd });
      expect({ args, code, stdout, head: stderr.split('\n').slice(0, 3) }).toEqual({ args, code: 2, stdout: '', head: [line, '', usage] });
    }
    // An ordinary usage error keeps its one error line.
    expect((await runCli(['list', '--nope'], { cwd })).stderr.match(/^error /gm)).toHaveLength(1);
  });

  // `--db a.db list --db b.db` (and any value option twice) used the last value silently.
  it('a value option given twice (not a repeatable one) is a usage error naming both values, and touches nothing', async () => {
    const cwd = tempDir();
    const cases = valueOptions().filter(({ repeatable }) => !repeatable);
    expect(cases.length).toBeGreaterThan(60);
    for (const { before, long, values: [first, second] } of cases) {
      const args = [...before, long, first, long, second];
      const { code, stdout, stderr } = await runCli(args, { cwd });
      const line = stderr.split('\n')[0] ?? '';
      expect({ args, code, stdout, named: line.startsWith(`error USAGE: option '${long}`) && line.includes(`given twice ('${first}' and '${second}')`) }).toEqual({ args, code: 2, stdout: '', named: true });
    }
    // --db at two levels: after the program (or the group) and after the command.
    for (const args of [['--db', 'a', 'list', '--db', 'b'], ['upstream', '--db', 'a', 'list', '--db', 'b'], ['--db', 'a', 'upstream', 'list', '--db', 'b'], ['--db', 'a', 'serve', '--db', 'b'], ['policy', '--db', 'a', 'set', '--version-order', 'any', '--db', 'b']]) {
      const { code, stdout, stderr } = await runCli(args, { cwd });
      expect({ args, code, stdout, line: stderr.split('\n')[0] }).toEqual({ args, code: 2, stdout: '', line: "error USAGE: option '--db <path>' given twice ('a' and 'b'); give it once" });
    }
    // A repeatable option still repeats (here: to the missing database).
    expect(errorCode((await runCli(['list', '--tag', 'a', '--tag', 'b'], { cwd })).stderr)).toBe('DATABASE_NOT_FOUND');
    expect(readdirSync(cwd)).toEqual([]);
  });
});
