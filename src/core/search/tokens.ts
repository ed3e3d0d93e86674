// Search tokens: one function turns text (a query, a description, a tool name) into the
// terms the index stores and the query looks up, so both sides always agree.
// Format characters and variation selectors dropped, NFKC (full-width and compatibility forms
// become their plain letters), Turkish dotted and dotless i folded to i, then words of
// letters, marks and digits (runs of scripts written without spaces, such as Chinese and
// Japanese, cut into words by Intl.Segmenter); identifiers are split at `_ . -` and camelCase
// (each part is a term, and so is the whole word, so "GitHub" is found by "github" and by
// "hub"); then case folding and, for plain English words, the Porter stemmer of `stemmer`;
// Korean words lose a closed list of particles (조사) that the segmenter leaves attached.
import { stemmer } from 'stemmer';

/**
 * A generic English stop-word list (the classic Lucene/Snowball short list with the
 * pronouns and auxiliaries people put in requests); nothing in it comes from any data set.
 * A query made only of stop words keeps them, so it still finds what it names.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with ' +
    'i me my we our you your he she him her his its them what which who whom do does did can could would should shall may might must ' +
    'am been being have has had having so than too very just also about any all some how when where why please want need'
  ).split(' '),
);

/** The patterns of text that is not ASCII (`unicodePatterns()`). */
interface UnicodePatterns {
  /**
   * A word: a letter or digit, then letters, combining marks and digits; `_ . -` and everything
   * else separate words (a mark after a symbol, such as an emoji's keycap, is no word).
   */
  readonly word: RegExp;
  /** An identifier as written: words joined by `_ . -` (split again at camelCase). */
  readonly identifier: RegExp;
  /** Format characters, variation selectors and the Turkish İ and ı (`STRIPPED_SOURCE`). */
  readonly stripped: RegExp;
  /** Scripts written without spaces between words: a word holding one is cut by Intl.Segmenter. */
  readonly unspaced: RegExp;
  /** camelCase and digit boundaries (`CAMEL_SOURCE`). */
  readonly camel: RegExp;
}
let unicode: UnicodePatterns | undefined;

/**
 * Made at the first text that is not ASCII, with `new RegExp`: V8 builds a literal's Unicode
 * sets (`\p{L}` is a large one) when it parses the module, in every process that loads the core
 * (a command's start, a worker's), though nearly all tool text is ASCII and takes the patterns
 * below instead (docs/testing.md, the eighteenth pass).
 */
function unicodePatterns(): UnicodePatterns {
  unicode ??= {
    word: new RegExp(String.raw`[\p{L}\p{N}][\p{L}\p{M}\p{N}]*`, 'gu'),
    identifier: new RegExp(String.raw`[\p{L}\p{N}][\p{L}\p{M}\p{N}]*(?:[_.-]+[\p{L}\p{N}][\p{L}\p{M}\p{N}]*)*`, 'gu'),
    stripped: new RegExp(STRIPPED_SOURCE, 'gu'),
    unspaced: new RegExp(String.raw`[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}]`, 'u'),
    camel: new RegExp(CAMEL_SOURCE, 'gu'),
  };
  return unicode;
}
/**
 * Taken out before anything else: format characters (zero-width joiners and non-joiners, soft
 * hyphens, bidirectional marks, the BOM; a zero-width space separates words) and variation
 * selectors (text or emoji presentation, Mongolian and ideographic variants), which change how a
 * character looks, not what it says; and the Turkish İ and ı, which become I and i before case
 * folding, so `Istanbul`, `istanbul` and `İstanbul` are one word (lower case alone makes İ an i
 * with a combining dot, and keeps ı apart); that i with a combining dot, as text lower-cased
 * elsewhere holds it, is an i too.
 */
const STRIPPED_SOURCE = String.raw`[\p{Cf}\u180B-\u180D\u180F\uFE00-\uFE0F\u{E0100}-\u{E01EF}\u0130\u0131]|i\u0307`;
function stripped(character: string): string {
  if (character === '\u0130') return 'I';
  // `İ` lower-cased elsewhere (JavaScript's and Python's lower() write `i` + U+0307).
  if (character === '\u0131' || character === 'i\u0307') return 'i';
  return character === '\u200B' ? ' ' : '';
}
/** A word of precomposed Hangul syllables only (one UTF-16 unit each), after NFKC. */
const HANGUL_WORD = /^[가-힣]+$/;
let segmenter: Intl.Segmenter | undefined;
/** Runs of unspaced script longer than this are segmented a chunk at a time (see `segments`). */
const SEGMENT_CHUNK = 256;
/** The end of a piece whose words are segmented again with the next piece. */
const SEGMENT_MARGIN = 32;

/**
 * The words of `word` (letters, marks and digits only) cut by ICU's word boundaries (its
 * dictionaries for Chinese, Japanese, Thai...): "東京の天気を検索" -> 東京 の 天気 を 検索. The
 * locale is fixed ("und"), so the cut never depends on the machine's locale.
 */
function segments(word: string, out: string[]): void {
  // A run of Hangul syllables alone is one word to ICU (it has no Korean dictionary), cut
  // below at SEGMENT_CHUNK as every run is; but ICU's Korean break engine costs about 140 µs
  // a call where other scripts cost 5-10, so a 1 MB description of short Korean words held
  // the first search after it for 15 s. Kept whole without asking ICU (test/server/bombs.test.ts).
  if (HANGUL_WORD.test(word)) {
    for (let start = 0; start < word.length; start += SEGMENT_CHUNK) out.push(word.slice(start, start + SEGMENT_CHUNK));
    return;
  }
  segmenter ??= new Intl.Segmenter('und', { granularity: 'word' });
  if (word.length <= SEGMENT_CHUNK) {
    for (const { segment, isWordLike } of segmenter.segment(word)) if (isWordLike === true) out.push(segment);
    return;
  }
  // ICU's dictionary break costs about the square of a run's length (64,000 characters of
  // Han: 2 s, so a 1 MB description or query would hold the process for minutes). A long run
  // is cut a piece at a time. The words near a piece's end may be cut otherwise than in the
  // whole run (the dictionary sees the run cut short), so those of its last SEGMENT_MARGIN
  // characters are left to the next piece, which starts at the first of them.
  for (let start = 0; start < word.length; ) {
    let end = Math.min(start + SEGMENT_CHUNK, word.length);
    // Never between the two halves of a surrogate pair.
    if (end < word.length && (word.charCodeAt(end) & 0xfc00) === 0xdc00) end--;
    const found = [...segmenter.segment(word.slice(start, end))];
    let next = end;
    if (end < word.length) {
      next = start;
      for (const { index } of found) if (index > 0 && index <= end - start - SEGMENT_MARGIN) next = start + index;
      // One word fills the piece: go on after it (or its second word), never stand still.
      if (next === start) next = found.length > 1 ? start + (found[1] as Intl.SegmentData).index : end;
    }
    for (const { segment, index, isWordLike } of found) {
      if (start + index >= next) break;
      if (isWordLike === true) out.push(segment);
    }
    start = next;
  }
}
/**
 * Short words of unspaced script cut by one ICU call, joined by newlines, up to this many
 * characters: longer texts cost ICU more per word again (16,000 Thai words, 64,000 characters,
 * took twice what one call each did); 256-1,024 cost least.
 */
const BATCH_CHARS = 512;

/**
 * `emit` gets each of `pieces` in order, or, for one holding unspaced script, its words as
 * `segments` cuts it. ICU costs about 10 µs a call whatever the text's length, so a 900 KB
 * description of short Thai, Han or Katakana words took 1.8-2.5 s one call per word: the short
 * ones (not Hangul alone, at most SEGMENT_CHUNK) are cut together, joined by newlines. A
 * newline is a hard word break (UAX #29 WB3a, WB3b) and ends the run a dictionary sees, so
 * each word is cut as alone (test/server/bombs.test.ts compares the cuts on a corpus).
 */
function eachWord(pieces: readonly string[], emit: (word: string) => void): void {
  const cuts: (string[] | undefined)[] = Array.from({ length: pieces.length });
  let batch: number[] = [];
  let text = '';
  const flush = (): void => {
    if (batch.length === 0) return;
    segmenter ??= new Intl.Segmenter('und', { granularity: 'word' });
    // The piece a segment falls in: segments never cross the newlines between pieces.
    let at = 0;
    let end = (pieces[batch[0] as number] as string).length;
    for (const { segment, index, isWordLike } of segmenter.segment(text)) {
      while (index >= end) {
        at++;
        end += 1 + (pieces[batch[at] as number] as string).length;
      }
      if (isWordLike === true) (cuts[batch[at] as number] as string[]).push(segment);
    }
    batch = [];
    text = '';
  };
  for (let index = 0; index < pieces.length; index++) {
    const piece = pieces[index] as string;
    if (!unicodePatterns().unspaced.test(piece)) continue;
    const cut: string[] = [];
    cuts[index] = cut;
    if (piece.length > SEGMENT_CHUNK || HANGUL_WORD.test(piece)) {
      segments(piece, cut);
      continue;
    }
    if (text.length + piece.length >= BATCH_CHARS) flush();
    text = batch.length === 0 ? piece : `${text}\n${piece}`;
    batch.push(index);
  }
  flush();
  for (let index = 0; index < pieces.length; index++) {
    const cut = cuts[index];
    if (cut === undefined) emit(pieces[index] as string);
    else for (const word of cut) emit(word);
  }
}

/** camelCase and digit boundaries: `getHTTPResponse2` -> get HTTP Response 2. */
// A mark stays with the letter or digit before it (`1⃣` is one part, never `1` and a lone mark).
const CAMEL_SOURCE = String.raw`(?:\p{Lu}\p{M}*)+(?![\p{Ll}\p{M}])|(?:\p{Lu}\p{M}*)?[\p{Ll}\p{M}]+|\p{N}[\p{N}\p{M}]*|\p{L}[\p{L}\p{M}]*`;
// The same three for pure ASCII text (nearly all tool text), where they are several times faster.
const NON_ASCII = /[\u0080-\uFFFF]/;
const ASCII_WORD_RE = /[A-Za-z0-9]+/g;
const ASCII_IDENTIFIER = /[A-Za-z0-9]+(?:[_.-]+[A-Za-z0-9]+)*/g;
const ASCII_CAMEL = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;
const SEPARATORS = /[_.-]+/;
const ASCII_WORD = /^[a-z]+$/;

/**
 * Unicode case folding as JavaScript offers it: upper then lower case folds the special
 * cases (`ß` -> `ss`, final sigma) that lower case alone keeps apart.
 */
export function foldCase(text: string): string {
  const lower = text.toLowerCase();
  // Pure ASCII (nearly all tool text) folds by lower case alone.
  for (let index = 0; index < lower.length; index++) {
    if (lower.charCodeAt(index) > 127) return lower.toUpperCase().toLowerCase();
  }
  return lower;
}

/**
 * Korean particles (조사) that follow a noun inside one written word ("데이터베이스를": the
 * database + object particle), which ICU's word break keeps attached (it has no Korean
 * dictionary): the case particles and the commonest auxiliary and conjunctive ones, longest
 * first. A closed list, from the grammar, not from any data set (docs/search.md).
 */
const PARTICLES: readonly string[] = [
  ...'에게서 한테서 으로서 으로써'.split(' '),
  ...'에서 에게 께서 한테 으로 로서 로써 까지 부터 처럼 보다 마다 조차 마저 만큼 이나 이랑 하고'.split(' '),
  ...'은 는 이 가 을 를 의 에 로 와 과 도 만'.split(' '),
];
/** Syllables a word keeps: `회의` (meeting) and `바다` keep their last syllable. */
const MIN_KOREAN_STEM = 2;

/**
 * A Korean word without its trailing particles, stacked ones too ("서버에서는" -> 서버), as long
 * as at least two syllables remain. A noun that merely ends like a particle and is longer
 * (`고양이`) loses it too, at index and query time alike, so it still finds itself.
 */
function withoutParticles(word: string): string {
  let rest = word;
  for (;;) {
    const particle = PARTICLES.find((ending) => rest.length - ending.length >= MIN_KOREAN_STEM && rest.endsWith(ending));
    if (particle === undefined) return rest;
    rest = rest.slice(0, rest.length - particle.length);
  }
}

const stems = new Map<string, string>();
const MAX_STEMS = 50_000;

/**
 * The Porter stem of a plain English word, a Korean word without its particles; others are
 * kept as they are. Memoized.
 */
function stem(word: string): string {
  // The memo first: it holds only words the tests below let through.
  let found = stems.get(word);
  if (found !== undefined) return found;
  // Three letters at least for Porter; three syllables at least to leave two of them.
  if (word.length < 3) return word;
  if (ASCII_WORD.test(word)) found = stemmer(word);
  else if (HANGUL_WORD.test(word)) found = withoutParticles(word);
  else return word;
  if (stems.size >= MAX_STEMS) stems.clear();
  stems.set(word, found);
  return found;
}

/** How words are turned into terms. */
export interface TokenOptions {
  /** Split identifiers at `_ . -` and camelCase (names, property names, queries). Default true. */
  readonly identifiers?: boolean;
  /**
   * true (a query): drop stop words, but when they are all the text has, keep them as stop terms
   * (`stopTerm`). 'mark' (a name, tags, parameter names): every stop word as a stop term. 'drop'
   * (prose): drop them all. false: keep them as plain words. Default true.
   */
  readonly stopWords?: boolean | 'mark' | 'drop';
  /** Porter-stem English words. Default true. */
  readonly stemming?: boolean;
}

/**
 * Stop terms start with this (no word holds it): indexed in the identifier fields but not
 * counted in their length, matched only by a query made of stop words alone (`search OR`
 * finds `logical_or`), so a stop word never weighs in a query that has other words.
 */
export const STOP_TERM = '\u0000';

/** camelCase words of at most this many parts are also kept whole ("GitHub" -> github). */
const MAX_JOINED_PARTS = 3;

/**
 * The raw words of `text` (NFKC, split, not yet folded) into `out`; with `identifiers`, a
 * camelCase word of 2-3 parts also goes whole into `joined` ("GitHub" -> git, hub + github;
 * "YouTubeVideo" -> you, tube, video + youtubevideo). Longer ones, and words joined by
 * `_ . -`, are not kept whole: such a term is one tool's alone and nobody types it.
 */
function words(text: string, identifiers: boolean, out: string[], joined: string[]): void {
  // ASCII is its own NFKC form and holds nothing to strip or segment.
  const ascii = !NON_ASCII.test(text);
  const patterns = ascii ? undefined : unicodePatterns();
  const normal = patterns === undefined ? text : text.replace(patterns.stripped, stripped).normalize('NFKC').replace(patterns.stripped, stripped);
  if (!identifiers) {
    const word = patterns === undefined ? ASCII_WORD_RE : patterns.word;
    word.lastIndex = 0;
    if (ascii) {
      for (let match = word.exec(normal); match !== null; match = word.exec(normal)) out.push(match[0]);
      return;
    }
    const found: string[] = [];
    for (let match = word.exec(normal); match !== null; match = word.exec(normal)) found.push(match[0]);
    eachWord(found, (each) => out.push(each));
    return;
  }
  const identifier = patterns === undefined ? ASCII_IDENTIFIER : patterns.identifier;
  const camel = patterns === undefined ? ASCII_CAMEL : patterns.camel;
  identifier.lastIndex = 0;
  if (ascii) {
    for (let match = identifier.exec(normal); match !== null; match = identifier.exec(normal)) {
      for (const piece of match[0].split(SEPARATORS)) camelParts(piece, camel, out, joined);
    }
    return;
  }
  const pieces: string[] = [];
  for (let match = identifier.exec(normal); match !== null; match = identifier.exec(normal)) pieces.push(...match[0].split(SEPARATORS));
  eachWord(pieces, (word) => camelParts(word, camel, out, joined));
}

/** The camelCase parts of `word` into `out`; the word whole into `joined` when it has 2-3 parts. */
function camelParts(word: string, camel: RegExp, out: string[], joined: string[]): void {
  const start = out.length;
  camel.lastIndex = 0;
  for (let part = camel.exec(word); part !== null; part = camel.exec(word)) out.push(part[0]);
  const parts = out.length - start;
  if (parts > 1 && parts <= MAX_JOINED_PARTS) joined.push(word);
}

/**
 * The terms of `text`, repeats kept (term frequency counts them): its words folded,
 * stop words dropped, stemmed; then the whole camelCase words (folded, not stemmed).
 * Deterministic: the same text always gives the same terms.
 */
export function tokenize(text: string, options: TokenOptions = {}): string[] {
  const { identifiers = true, stopWords = true, stemming = true } = options;
  const raw: string[] = [];
  const joined: string[] = [];
  words(text, identifiers, raw, joined);
  // One pass: folded, stop words dropped (or marked), stemmed; a second only when all were stop words.
  const chosen: string[] = [];
  for (let index = 0; index < raw.length; index++) {
    const word = foldCase(raw[index] as string);
    if (stopWords === false || !STOP_WORDS.has(word)) chosen.push(stemming ? stem(word) : word);
    else if (stopWords === 'mark') chosen.push(STOP_TERM + (stemming ? stem(word) : word));
  }
  if (chosen.length === 0 && stopWords === true) {
    for (let index = 0; index < raw.length; index++) {
      const word = foldCase(raw[index] as string);
      chosen.push(STOP_TERM + (stemming ? stem(word) : word));
    }
  }
  for (const word of joined) chosen.push(foldCase(word));
  return chosen;
}
