// The console's side-by-side diff (console/diff.js is plain browser JavaScript with no DOM use,
// so it runs here as it runs in the page).
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .js module of the console, without declarations
import { differenceCount, differenceValues, hunks as hunksOf, sideBySide } from '../../console/diff.js';

interface Line { number: number; text: string }
interface Row { kind: 'same' | 'changed' | 'removed' | 'added'; left: Line | null; right: Line | null }
const diff = sideBySide as (a: string, b: string) => Row[];
const hunks = hunksOf as (rows: Row[], context?: number) => (Row | { kind: 'skipped'; count: number })[];
const show = (rows: Row[]) => rows.map((row) => `${row.kind} ${row.left?.number ?? '-'}:${row.left?.text ?? ''} | ${row.right?.number ?? '-'}:${row.right?.text ?? ''}`);

describe('sideBySide', () => {
  it('keeps common lines side by side and pairs a replaced line with its replacement', () => {
    expect(show(diff('a\nb\nc', 'a\nB\nc'))).toEqual(['same 1:a | 1:a', 'changed 2:b | 2:B', 'same 3:c | 3:c']);
  });

  it('shows a line only removed or only added on its own side, numbering each side on its own', () => {
    expect(show(diff('a\nb\nc', 'a\nc\nd'))).toEqual(['same 1:a | 1:a', 'removed 2:b | -:', 'same 3:c | 2:c', 'added -: | 3:d']);
  });

  it('pairs a block of removed lines with the block that replaced it, the longer side left over', () => {
    expect(show(diff('x\n1\n2\n3\ny', 'x\nA\ny'))).toEqual(['same 1:x | 1:x', 'changed 2:1 | 2:A', 'removed 3:2 | -:', 'removed 4:3 | -:', 'same 5:y | 3:y']);
  });

  it('finds identical texts identical, and a wholly new text all changed', () => {
    expect(diff('a\nb', 'a\nb').every((row) => row.kind === 'same')).toBe(true);
    expect(diff('a', 'b').map((row) => row.kind)).toEqual(['changed']);
  });

  it('keeps every line of both sides, in order, on a larger random edit', () => {
    const before = Array.from({ length: 200 }, (_, i) => `line ${i % 17}`);
    const after = before.filter((_, i) => i % 7 !== 0).map((line, i) => (i % 11 === 0 ? `${line}!` : line));
    const rows = diff(before.join('\n'), after.join('\n'));
    expect(rows.flatMap((row) => (row.left ? [row.left.text] : []))).toEqual(before);
    expect(rows.flatMap((row) => (row.right ? [row.right.text] : []))).toEqual(after);
    for (const row of rows.filter((one) => one.kind === 'same')) expect(row.left?.text).toBe(row.right?.text);
  });

  it('diffs a large spec with one changed line as that line (past the LCS bound, every line was removed and added)', () => {
    const before = Array.from({ length: 3_000 }, (_, i) => `  "p${i}": { "type": "string" },`);
    const after = before.map((line, i) => (i === 1_500 ? '  "p1500": { "type": "integer" },' : line));
    const rows = diff(before.join('\n'), after.join('\n'));
    expect(rows.filter((row) => row.kind !== 'same').map((row) => `${row.kind} ${row.left?.number}:${row.right?.number}`)).toEqual(['changed 1501:1501']);
    expect(rows).toHaveLength(3_000);
    // A line added at the end: numbered on its own side after the common lines.
    expect(show(diff(before.slice(0, 3).join('\n'), [...before.slice(0, 3), 'new'].join('\n'))).at(-1)).toBe('added -: | 4:new');
  });

  it('cuts the rows down to the changed hunks, with context on each side and a count of the lines left out', () => {
    const before = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
    const after = before.map((line, i) => (i === 9 || i === 24 ? `${line}!` : line));
    const rows = hunks(diff(before.join('\n'), after.join('\n')), 2);
    expect(rows.map((row) => (row.kind === 'skipped' ? `skip ${row.count}` : `${row.kind} ${row.left?.number}`))).toEqual([
      'skip 7', 'same 8', 'same 9', 'changed 10', 'same 11', 'same 12', 'skip 10', 'same 23', 'same 24', 'changed 25', 'same 26', 'same 27', 'skip 3',
    ]);
    // A short run between two changes is kept whole; identical texts are one skipped run.
    expect(hunks(diff('a\nb\nc\nd', 'A\nb\nc\nD'), 1).map((row) => row.kind)).toEqual(['changed', 'same', 'same', 'changed']);
    expect(hunks(diff('a\nb', 'a\nb'), 3)).toEqual([{ kind: 'skipped', count: 2 }]);
  });
});

describe("a verdict's differences", () => {
  const count = differenceCount as (differences: unknown[]) => number;
  const values = differenceValues as (difference: unknown) => unknown;

  it('counts the values an entry with `omitted` stands for, and shows that count instead of its nulls', () => {
    const named = { type: 'enum-value-removed', path: '/enum', before: null, after: null, breaking: true };
    const rest = { ...named, omitted: 4_900 };
    expect(count([named, rest, { ...named, type: 'enum-value-added' }])).toBe(4_902);
    expect(values(named)).toEqual({ before: null, after: null });
    expect(values(rest)).toEqual({ omitted: 4_900 });
  });
});
