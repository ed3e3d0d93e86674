// The columns a terminal gives a text, by the rules of string-width 8.3
// (https://github.com/sindresorhus/string-width, MIT licence, (c) Sindre Sorhus), ported so that
// its costly objects are made at the first text that is not printable ASCII instead of when the
// command loads. V8 builds ICU's set of RGI emoji sequences when it *parses* a `\p{RGI_Emoji}`
// pattern literal, and string-width makes an `Intl.Segmenter` (ICU's list of ~960 locales) at
// its load: together 27 % of the instructions of a `tool-registry list` (callgrind,
// docs/testing.md), paid by every command run although most print ASCII only.
// test/cli/display-width.test.ts holds every rule to string-width itself.
import { eastAsianWidth } from 'get-east-asian-width';
import stripAnsi from 'strip-ansi';

interface Patterns {
  readonly segmenter: Intl.Segmenter;
  /** A visible (printing) character: finds a cluster's base and whole zero-width clusters. */
  readonly visible: RegExp;
  readonly spacingMark: RegExp;
  readonly rgiEmoji: RegExp;
  readonly extendedPictographic: RegExp;
}

let patterns: Patterns | undefined;

/** Made at the first text that needs them; `new RegExp`, since a pattern literal is parsed (its sets built) when the module loads. */
function made(): Patterns {
  patterns ??= {
    segmenter: new Intl.Segmenter(),
    // One negated class without a quantifier, as string-width has it: a repeated pattern backtracks
    // exponentially on overlapping properties.
    visible: new RegExp('[^\\p{Default_Ignorable_Code_Point}\\p{Control}\\p{Format}\\p{Nonspacing_Mark}\\p{Enclosing_Mark}\\p{Surrogate}]', 'v'),
    spacingMark: new RegExp('\\p{Spacing_Mark}', 'v'),
    rgiEmoji: new RegExp('^\\p{RGI_Emoji}$', 'v'),
    extendedPictographic: new RegExp('\\p{Extended_Pictographic}', 'gu'),
  };
  return patterns;
}

/** Whether the patterns were made (a test checks that ASCII text never makes them). */
export function displayWidthPatternsMade(): boolean {
  return patterns !== undefined;
}

const PRINTABLE_ASCII = /^[\u0020-\u007E]*$/;
const UNQUALIFIED_KEYCAP = /^[\d#*]\u20E3$/;

/** Minimally-qualified or unqualified emoji sequences, which terminals still draw two columns wide. */
function isDoubleWidthNonRgiEmojiSequence(segment: string, { extendedPictographic }: Patterns): boolean {
  // Real emoji clusters are shorter than 30 characters: pathological input is not one.
  if (segment.length > 50) return false;
  if (UNQUALIFIED_KEYCAP.test(segment)) return true;
  // A ZWJ sequence of two or more Extended_Pictographic.
  if (segment.includes('\u200D')) {
    const pictographics = segment.match(extendedPictographic);
    return pictographics !== null && pictographics.length >= 2;
  }
  return false;
}

/** The cluster from its first visible character, or undefined when the whole cluster is zero-width. */
function baseVisible(segment: string, { visible }: Patterns): string | undefined {
  const index = segment.search(visible);
  return index === -1 ? undefined : segment.slice(index);
}

const isHangulLeadingJamo = (codePoint: number | undefined): boolean =>
  codePoint !== undefined && ((codePoint >= 0x1100 && codePoint <= 0x115f) || (codePoint >= 0xa960 && codePoint <= 0xa97c));
const isHangulVowelJamo = (codePoint: number | undefined): boolean =>
  codePoint !== undefined && ((codePoint >= 0x1160 && codePoint <= 0x11a7) || (codePoint >= 0xd7b0 && codePoint <= 0xd7c6));
const isHangulTrailingJamo = (codePoint: number | undefined): boolean =>
  codePoint !== undefined && ((codePoint >= 0x11a8 && codePoint <= 0x11ff) || (codePoint >= 0xd7cb && codePoint <= 0xd7fb));
const isHangulJamo = (codePoint: number): boolean => isHangulLeadingJamo(codePoint) || isHangulVowelJamo(codePoint) || isHangulTrailingJamo(codePoint);

/**
 * A cluster of Hangul jamo: each modern L+V or L+V+T piece is one syllable block, two columns;
 * unmatched jamo stay additive, as the terminals string-width targets draw them. Undefined when
 * the cluster does not start with jamo.
 */
function hangulClusterWidth(visibleSegment: string, { visible }: Patterns): number | undefined {
  const codePoints: number[] = [];
  for (const character of visibleSegment) {
    if (visible.test(character)) codePoints.push(character.codePointAt(0) as number);
  }
  if (codePoints.length === 0) return undefined;
  let width = 0;
  for (let index = 0; index < codePoints.length; index++) {
    const codePoint = codePoints[index] as number;
    if (!isHangulJamo(codePoint)) {
      if (width === 0) return undefined;
      // A mixed cluster (a jamo, then a precomposed syllable): East Asian Width for the rest.
      for (let remaining = index; remaining < codePoints.length; remaining++) width += eastAsianWidth(codePoints[remaining] as number);
      return width;
    }
    if (isHangulLeadingJamo(codePoint) && isHangulVowelJamo(codePoints[index + 1])) {
      width += 2;
      index += isHangulTrailingJamo(codePoints[index + 2]) ? 2 : 1;
      continue;
    }
    width += eastAsianWidth(codePoint);
  }
  return width;
}

/** Trailing spacing marks and Halfwidth/Fullwidth Forms of a cluster (dakuten, the prolonged sound mark) add their width. */
function trailingWidth(visibleSegment: string, { spacingMark }: Patterns): number {
  let extra = 0;
  let first = true;
  for (const character of visibleSegment) {
    if (first) {
      first = false;
      continue;
    }
    if (spacingMark.test(character) || (character >= '\uFF00' && character <= '\uFFEF')) extra += eastAsianWidth(character.codePointAt(0) as number);
  }
  return extra;
}

/**
 * The columns a terminal gives `input`, as string-width 8.3 counts them with its defaults:
 * ANSI escape sequences none, CJK and emoji 2, combining marks, joiners and other non-printing
 * clusters 0, an emoji ZWJ sequence 2, ambiguous-width characters 1.
 */
export function displayWidth(input: string): number {
  if (input.length === 0) return 0;
  // ESC (7-bit) or CSI (8-bit) introduce every ANSI sequence.
  const text = input.includes('\u001B') || input.includes('\u009B') ? stripAnsi(input) : input;
  if (text.length === 0) return 0;
  // Printable ASCII needs no segmenter, pattern or East Asian Width: its width is its length.
  if (PRINTABLE_ASCII.test(text)) return text.length;
  const sets = made();
  let width = 0;
  for (const { segment } of sets.segmenter.segment(text)) {
    const visibleSegment = baseVisible(segment, sets);
    if (visibleSegment === undefined) continue;
    if (sets.rgiEmoji.test(segment) || isDoubleWidthNonRgiEmojiSequence(segment, sets)) {
      width += 2;
      continue;
    }
    const hangulWidth = hangulClusterWidth(visibleSegment, sets);
    if (hangulWidth !== undefined) {
      width += hangulWidth;
      continue;
    }
    // Everything else: the East Asian Width of the cluster's first visible character, and its trailing marks.
    width += eastAsianWidth(visibleSegment.codePointAt(0) as number);
    width += trailingWidth(visibleSegment, sets);
  }
  return width;
}
