// Tool data (and arguments echoed back) printed by the command carries no character a terminal
// would act on: C0/C1 controls and the bidirectional ones (U+202E shows a description reversed)
// come out JSON-escaped in tables, key/value blocks, --json, export, and errors. In-process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spec, writeJson } from './helpers.js';

// ESC sequence, an OSC 8 link, CR, backspace, 8-bit CSI (U+009B), RLO (U+202E), isolates, RLM.
const HOSTILE = 'a\u001b[2Jb\u001b]8;;http://x\u0007l\u001b]8;;\u0007\rc\bd\u009b31me\u202Ef\u2066g\u2069h\u200F';
// eslint-disable-next-line no-control-regex
const ACTS_ON_TERMINAL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

let cwd: string;

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), 'tool-registry-controls-'));
  const tool = spec('hostile', `1${'\u202E'}0`, {
    description: HOSTILE,
    tags: [`t${'\u202E'}x`],
    input_schema: { type: 'object', properties: { q: { type: 'string', description: HOSTILE } } },
  });
  expect((await runCli(['register', writeJson(join(cwd, 'tool.json'), tool)], { cwd })).code).toBe(0);
});

afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe('terminal controls in printed tool data', () => {
  it.each([['list'], ['get', 'hostile'], ['get', 'hostile', '--json'], ['history', 'hostile'], ['changes'], ['export'], ['search', 'hostile']])(
    '%s prints none raw',
    async (...args) => {
      const { code, stdout } = await runCli(args, { cwd });
      expect(code).toBe(0);
      expect(stdout).not.toMatch(ACTS_ON_TERMINAL);
      expect(stdout).toMatch(/\\u001b|\\u202e/); // shown escaped (search cuts the description)
    },
  );

  it('a cell with only a bidirectional control is escaped once, not as JSON', async () => {
    const { stdout } = await runCli(['list'], { cwd });
    expect(stdout).toMatch(/\s1\\u202e0\s.*\st\\u202ex\n$/);
  });

  it('export stays the same value, and imports back byte for byte', async () => {
    const first = await runCli(['export'], { cwd });
    expect((JSON.parse(first.stdout) as { tools: { spec: { description: string } }[] }).tools[0]?.spec.description).toBe(HOSTILE);
    expect((await runCli(['--db', 'copy.db', 'import', '-'], { cwd, input: first.stdout })).code).toBe(0);
    expect((await runCli(['--db', 'copy.db', 'export'], { cwd })).stdout).toBe(first.stdout);
  });

  it('a --db or --out path is escaped in what the command prints', async () => {
    const name = 'odd\u001b[31m\u202E';
    for (const args of [['--db', `${name}.db`, 'migrate'], ['--db', `${name}.db`, 'status'], ['export', '--out', `${name}.json`]]) {
      const { code, stdout } = await runCli(args, { cwd });
      expect({ args, code, raw: ACTS_ON_TERMINAL.test(stdout), shown: stdout.includes('odd\\u001b[31m\\u202e') }).toEqual({ args, code: 0, raw: false, shown: true });
    }
  });

  it('errors and usage errors escape what they echo back', async () => {
    const missing = await runCli(['get', 'x\u001b[31m\u202E'], { cwd });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('x\\u001b[31m\\u202e');
    const usage = await runCli(['x\u001b[2J\u202E'], { cwd });
    expect(usage.code).toBe(2);
    expect(usage.stderr.split('\n')[0]).toBe("error USAGE: unknown command 'x\\u001b[2J\\u202e'");
    for (const { stderr } of [missing, usage]) expect(stderr).not.toMatch(ACTS_ON_TERMINAL);
  });
});
