// Tables are aligned by terminal columns, not code points: CJK and emoji take two columns, a
// combining mark none, an emoji ZWJ sequence two; `search` cuts descriptions at a column
// boundary and never inside a grapheme. In-process (`runCli`), one registered file for the file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spec, writeJson } from './helpers.js';

const FAMILY = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}'; // 👨‍👩‍👧: 5 code points, 8 UTF-16 units, 2 columns
const E_ACUTE = 'e\u0301'; // é as a base and a combining mark: 2 code points, 1 column
const HANGUL = '데이터'.repeat(14); // 42 syllables, 84 columns

/** Each tool's version (a non-last column of `list`) and its width on a terminal, by hand. */
const VERSIONS: readonly (readonly [string, string, number])[] = [
  ['plain', '1.0.0', 5],
  ['wide_family', FAMILY, 2],
  ['wide_hangul', '버전2', 5],
  ['wide_mark', E_ACUTE, 1],
];

let cwd: string;

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), 'tool-registry-width-'));
  const tools = [
    spec('plain', '1.0.0', { tags: ['ascii'] }),
    spec('wide_family', FAMILY, { description: `${'a'.repeat(58)}${FAMILY} and more`, tags: [FAMILY] }),
    spec('wide_hangul', '버전2', { description: HANGUL, tags: ['데이터'] }),
    spec('wide_mark', E_ACUTE, { description: `${'x'.repeat(58)}${E_ACUTE}yyy`, tags: [E_ACUTE] }),
  ];
  expect((await runCli(['register', writeJson(join(cwd, 'tools.json'), tools)], { cwd })).code).toBe(0);
});

afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe('tables by display width', () => {
  it('list pads every column to the same terminal column, whatever the cells hold', async () => {
    const { code, stdout } = await runCli(['list'], { cwd });
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    // NAME is 11 columns wide (wide_hangul), VERSION 7 (its header): ENABLED starts at column 22 in every row.
    expect(lines[0]?.startsWith('NAME         VERSION  ENABLED  ')).toBe(true);
    expect(lines.slice(1).map((line) => line.slice(0, line.indexOf('yes') + 3))).toEqual(
      VERSIONS.map(([name, version, columns]) => `${name.padEnd(11)}  ${version}${' '.repeat(7 - columns)}  yes`),
    );
  });

  it('search cuts a description at 60 columns, on a grapheme boundary', async () => {
    const { code, stdout } = await runCli(['search', 'wide', '--limit', '10'], { cwd });
    expect(code).toBe(0);
    const descriptions = Object.fromEntries(
      stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((line) => line.split(/ {2,}/))
        .map((cells) => [cells[2], cells[4]]),
    );
    expect(descriptions).toEqual({
      // The ZWJ sequence would end at column 60, past the 59 left for the ellipsis: it goes whole
      // (cut by UTF-16 units, it left half a surrogate pair).
      wide_family: `${'a'.repeat(58)}…`,
      // The mark stays on its e (cut by units, the e lost it).
      wide_mark: `${'x'.repeat(58)}${E_ACUTE}…`,
      // 29 syllables are 58 columns; 42 code points were under 60 and were not cut at all.
      wide_hangul: `${HANGUL.slice(0, 29)}…`,
    });
  });
});
