// Tables are aligned by terminal columns, not code points: CJK and emoji take two columns, a
// combining mark none, an emoji ZWJ sequence two; `search` cuts descriptions at a column
// boundary and never inside a grapheme. In-process (`runCli`), one registered file for the file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as DisplayWidthModule from '../../src/cli/display-width.js';
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

// The command counts columns with a port of string-width 8.3 (src/cli/display-width.ts) that
// makes its ICU sets at the first text that is not ASCII, not when it loads: held here to
// string-width itself, rule by rule and on random mixes of the characters each rule is about.
describe('displayWidth, string-width ported', () => {
  const CASES = [
    '', 'plain', ' ~', 'tab\there', '\u001B[31mred\u001B[0m', '\u009B31mred', '\u001B[31m',
    FAMILY, E_ACUTE, HANGUL, '버전2', '中文字符', 'ｱｲｳ', 'ｶﾞｷﾞ', 'ﾊﾟｰﾃｨｰ', 'ＡＢＣ',
    '\u{1F600}', '\u2764\uFE0F', '\u2764', '1\u20E3', '#\uFE0F\u20E3', '\u{1F1EF}\u{1F1F5}', '\u{1F44D}\u{1F3FD}',
    '\u{1F469}\u200D\u{1F4BB}', '\u2764\u200D\u{1F525}', '\u{1F3F3}\uFE0F\u200D\u{1F308}', 'a\u200Db',
    '\u1100\u1161', '\u1100\u1161\u11A8', '\u1100\u1100\u1161', '\u1161', '\u1100\uAC00', '\uA960\uD7B0\uD7CB',
    'क्षि', 'नमस्ते', 'ক্ষ', '\u0E01\u0E33', 'a\u0300\u0301\u0302', '\u0300', '\u200B', '\u00AD', '\uFEFF', '\u2066x\u2069',
    '\uD800', 'x\uDC00y', '\u00E9', '\u00A1\u00A7', '\u0001\u007F\u0085', 'e\u0301\u0327', '\u{1F468}'.repeat(30) + '\u200D',
  ];

  it('gives every case the width string-width gives it', async () => {
    const { displayWidth } = await import('../../src/cli/display-width.js');
    expect(CASES.map((text) => [text, displayWidth(text)])).toEqual(CASES.map((text) => [text, stringWidth(text)]));
  });

  it('agrees with string-width on random mixes of ASCII, CJK, emoji, marks, joiners, jamo and controls', async () => {
    const { displayWidth } = await import('../../src/cli/display-width.js');
    const pieces = fc.constantFrom(...CASES.filter((text) => text.length > 0 && text.length < 20), 'a', ' ', '\u200D', '\uFE0F', '\u20E3', '\u0301', '\u1160', '\u11A8', '\u3099', '\uFF9E', '\u0903', '\u001B', '[');
    fc.assert(
      fc.property(fc.array(fc.oneof(pieces, fc.string({ unit: 'grapheme', maxLength: 4 }), fc.string({ unit: 'binary', maxLength: 4 })), { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        expect(displayWidth(text)).toBe(stringWidth(text));
      }),
      { numRuns: 1_000 },
    );
  });

  it('makes no ICU set for printable ASCII (a module of its own: the worker may have made them already)', async () => {
    // A query makes it a module instance of its own, its patterns not made yet.
    const specifier = '../../src/cli/display-width.js?ascii-only';
    const fresh = (await import(/* @vite-ignore */ specifier)) as typeof DisplayWidthModule;
    expect(fresh.displayWidthPatternsMade()).toBe(false);
    expect(['', 'list', 'NAME  VERSION', '~!@#$%^&*()_+ 0123456789'].map(fresh.displayWidth)).toEqual([0, 4, 13, 24]);
    expect(fresh.displayWidthPatternsMade()).toBe(false);
    expect(fresh.displayWidth('é')).toBe(1);
    expect(fresh.displayWidthPatternsMade()).toBe(true);
  });
});
