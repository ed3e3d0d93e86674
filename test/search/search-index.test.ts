// The core search index and its tokens (issue 26): an index updated write by write ranks
// exactly as one built from scratch over the same tools; tokens are split, folded and stemmed.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { MIN_RETAINED_ENTRIES, RETENTION_MS, SearchIndex, topHits } from '../../src/core/search/search-index.js';
import { tokenize } from '../../src/core/search/tokens.js';
import { InMemoryToolRegistry } from '../../src/index.js';
import { expectCode } from '../support/registry-helpers.js';

const WORDS = ['weather', 'forecast', 'email', 'send', 'search', 'repos', 'github', 'issue', 'city', 'price', 'stock', 'translate', 'flight', 'book', 'alert'];

/** A seeded generator (mulberry32): the same sequence on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function spec(name: string, next: () => number) {
  const pick = (count: number) => Array.from({ length: count }, () => WORDS[Math.floor(next() * WORDS.length)] as string);
  return {
    tool_name: name,
    description: pick(1 + Math.floor(next() * 12)).join(' '),
    tags: pick(Math.floor(next() * 3)),
    input_schema: { type: 'object', properties: Object.fromEntries(pick(Math.floor(next() * 3)).map((word) => [word, { type: 'string', description: pick(3).join(' ') }])) },
  };
}

/** One random write: the tool removed (3 times in 10) or given a new spec, in the index and in `live`. */
function write(name: string, next: () => number, index: SearchIndex<string>, live: Map<string, ReturnType<typeof spec>>): void {
  if (next() < 0.3) {
    index.delete(name);
    live.delete(name);
  } else {
    const made = spec(name, next);
    index.set(name, name, { ...made, description: made.description });
    live.set(name, made);
  }
}


/** The names of every page of `query`, three at a time, from the first page on. */
async function everyPage(registry: InMemoryToolRegistry, query: string): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const next: Awaited<ReturnType<typeof registry.search>> = await registry.search(query, { limit: 3, cursor });
    seen.push(...next.results.map((result) => result.registration.spec.tool_name));
    cursor = next.next_cursor;
  } while (cursor !== null);
  return seen;
}
describe('tokenize', () => {
  it('splits identifiers at _ . - and camelCase, keeping a short camelCase word whole (not stemmed)', () => {
    expect(tokenize('GitHub_search', { stemming: false })).toEqual(['git', 'hub', 'search', 'github']);
    expect(tokenize('YouTubeVideos')).toEqual(['tube', 'video', 'youtubevideos']); // "you" is a stop word
    expect(tokenize('GitHubCreateIssue', { stemming: false })).toEqual(['git', 'hub', 'create', 'issue']);
    expect(tokenize('github.search-repos', { stemming: false })).toEqual(['github', 'search', 'repos']);
    expect(tokenize('getHTTPResponse2', { stemming: false })).toEqual(['get', 'http', 'response', '2']);
  });

  it('applies NFKC and case folding, then the Porter stemmer to English words', () => {
    expect(tokenize('Ｆｏｒｅｃａｓｔｓ')).toEqual(['forecast']);
    expect(tokenize('STRAẞE', { stemming: false })).toEqual(['strasse']);
    expect(tokenize('running searches', { identifiers: false })).toEqual(['run', 'search']);
    expect(tokenize('Café')).toEqual(['café']);
  });

  // Issue 38: `Istanbul` did not find "İstanbul", U+FE0F was a term of its own (so `❤️` found
  // "🌧️"), and a Chinese or Japanese run was one term (so `天気` did not find "東京の天気を検索").
  it('folds the Turkish İ and ı to i, and leaves other languages folded as before', () => {
    for (const text of ['İstanbul', 'Istanbul', 'istanbul', 'ıstanbul', 'ISTANBUL', 'İSTANBUL']) expect(tokenize(text), text).toEqual(['istanbul']);
    expect(tokenize('DİYARBAKIR ılık')).toEqual(['diyarbakir', 'ilik']);
    // Text lower-cased elsewhere (JavaScript's toLowerCase, Python's lower()) writes İ as i + U+0307 (audit 8: it found nothing).
    expect(tokenize('İstanbul'.toLowerCase())).toEqual(['istanbul']);
    expect(tokenize('İstanbul'.normalize('NFD'))).toEqual(['istanbul']);
    expect(tokenize('i\u0307\u0300ra', { stemming: false })).toEqual(tokenize('ìra', { stemming: false }));
    expect(tokenize('getİstanbulWeather', { stemming: false })).toEqual(['get', 'istanbul', 'weather', 'getistanbulweather']);
    expect(tokenize('ΣΊΣΥΦΟΣ')).toEqual(tokenize('σίσυφος'));
    expect(tokenize('Ärger Straße', { identifiers: false, stemming: false })).toEqual(['ärger', 'strasse']);
  });

  it('drops variation selectors and format characters; a zero-width space separates words', () => {
    expect(tokenize('❤️')).toEqual([]);
    expect(tokenize('🌧️ rain')).toEqual(['rain']);
    expect(tokenize('👩\u200D💻 coder')).toEqual(['coder']);
    expect(tokenize('1️⃣')).toEqual(['1⃣']);
    expect(tokenize('soft\u00ADhyphen')).toEqual(['softhyphen']);
    expect(tokenize('\u200Fright\u200E to \uFEFFleft')).toEqual(['right', 'left']);
    expect(tokenize('zero\u200Bwidth')).toEqual(['zero', 'width']);
    expect(tokenize('葛\u{E0100}飾', { identifiers: false })).toEqual(tokenize('葛飾', { identifiers: false }));
  });

  it('cuts Chinese, Japanese and Thai runs into words with Intl.Segmenter', () => {
    expect(tokenize('東京の天気を検索')).toEqual(expect.arrayContaining(['東京', '天気', '検索']));
    expect(tokenize('天気')).toEqual(['天気']);
    expect(tokenize('查询北京天气', { identifiers: false })).toEqual(expect.arrayContaining(['北京', '天气']));
    expect(tokenize('getWeather天気', { stemming: false })).toEqual(['get', 'weather', '天気', 'getweather']);
    expect(tokenize('서울 날씨')).toEqual(['서울', '날씨']);
    expect(tokenize('พยากรณ์อากาศ', { identifiers: false })).toEqual(expect.arrayContaining(['อากาศ']));
  });

  // Issue 26 (docs/search.md, Korean particles): "데이터베이스를" (the database + object particle)
  // was one term, so it did not find a tool described with "데이터베이스".
  it('strips Korean particles, stacked ones too, only where two syllables remain', () => {
    expect(tokenize('데이터베이스를')).toEqual(['데이터베이스']);
    expect(tokenize('서버에서는 파일을', { identifiers: false })).toEqual(['서버', '파일']);
    expect(tokenize('사용자의 이메일로')).toEqual(['사용자', '이메일']);
    // What must not change: two syllables that merely end like a particle stay whole.
    expect(tokenize('회의 바다 도로 결과')).toEqual(['회의', '바다', '도로', '결과']);
    expect(tokenize('회의를 결과로')).toEqual(['회의', '결과']);
    // A longer noun ending like one loses it at index and query time alike, with or without a particle after.
    expect(tokenize('고양이')).toEqual(tokenize('고양이가'));
    // Stemming off (the benchmark's plain BM25) keeps words as written.
    expect(tokenize('데이터베이스를', { stemming: false })).toEqual(['데이터베이스를']);
  });

  it('finds a tool described with a Korean noun by the noun with a particle, and not by a syllable of a short word', async () => {
    const registry = new InMemoryToolRegistry();
    const tool = (tool_name: string, description: string) => ({ tool_name, description, input_schema: { type: 'object' }, output_schema: { type: 'object' } });
    await registry.register(tool('db_query', '데이터베이스 조회'));
    await registry.register(tool('meeting', '회의 일정 예약'));
    const names = async (query: string) => (await registry.search(query)).results.map((result) => result.registration.spec.tool_name);
    expect(await names('데이터베이스를 조회하기')).toEqual(['db_query']);
    expect(await names('회의를')).toEqual(['meeting']);
    expect(await names('회')).toEqual([]);
    await registry.close();
  });

  it('segments a long unspaced run a bounded piece at a time (ICU costs the square of the length), cutting it as ICU cuts it whole', () => {
    // A run of about 800 characters, with astral Han (surrogate pairs) so that a piece's end can fall inside one.
    const run = Array.from({ length: 48 }, (_, i) => `東京の天気を検索${i % 2 ? '𠮷野家' : 'ค้นหาอากาศ'}じゃ`).join('');
    const whole = [...new Intl.Segmenter('und', { granularity: 'word' }).segment(run)].filter((s) => s.isWordLike).map((s) => s.segment);
    const lengths: number[] = [];
    const segment = Intl.Segmenter.prototype.segment;
    Intl.Segmenter.prototype.segment = function (this: Intl.Segmenter, text: string) {
      lengths.push(text.length);
      return segment.call(this, text);
    };
    let terms: string[];
    try {
      terms = tokenize(run, { identifiers: false, stemming: false, stopWords: false });
    } finally {
      Intl.Segmenter.prototype.segment = segment;
    }
    expect(terms.map((term) => term.normalize('NFC'))).toEqual(whole.map((word) => word.normalize('NFKC').toLowerCase()));
    expect(Math.max(...lengths)).toBeLessThanOrEqual(256);
  });

  it('drops stop words from a query unless they are all it has (then stop terms), marks them in names, drops them from prose', () => {
    expect(tokenize('what is the weather in Paris?')).toEqual(['weather', 'pari']);
    expect(tokenize('the')).toEqual(['\u0000the']);
    expect(tokenize('is_a the', { stopWords: 'mark' })).toEqual(['\u0000is', '\u0000a', '\u0000the']);
    expect(tokenize('get_all users', { stopWords: 'mark' })).toEqual(['get', '\u0000all', 'user']);
    expect(tokenize('the', { stopWords: 'drop' })).toEqual([]);
    expect(tokenize('   ')).toEqual([]);
  });
});

const only = (name: string, text: string) => ({ tool_name: name, description: text, tags: [], input_schema: {} });

/** 300 unrelated tools of 4 words added at `revision` and removed at `revision + 1`: enough dead entries for a sweep. */
function churn(index: SearchIndex<string>, prefix: string, revision: number): void {
  for (let at = 0; at < 300; at++) index.set(`${prefix}${at}`, 'f', only(`${prefix}${at}`, 'beta gamma delta epsilon'), undefined, revision);
  for (let at = 0; at < 300; at++) index.delete(`${prefix}${at}`, revision + 1);
}

describe('SearchIndex', () => {
  it('updated write by write, ranks exactly as an index built from scratch (sweeps included)', () => {
    const next = random(26);
    const live = new Map<string, ReturnType<typeof spec>>();
    // A second a write: sweeps drop the versions gone for the retention time.
    let now = 0;
    const index = new SearchIndex<string>({ now: () => now });
    const queries = [['weather', 'forecast'], ['email'], ['github', 'issue', 'book'], ['price', 'stock', 'alert', 'citi']].map((words) => words.flatMap((word) => tokenize(word)));
    for (let step = 0; step < 3000; step++) {
      now += 1000;
      write(`tool_${Math.floor(next() * 300)}`, next, index, live);
      if (step % 500 === 499) {
        const fresh = new SearchIndex<string>();
        for (const name of [...live.keys()].sort()) fresh.set(name, name, live.get(name) as ReturnType<typeof spec>);
        // And built in one go (as the first search builds it), in another order.
        const built = new SearchIndex<string>();
        built.build([...live].reverse().map(([name, made]) => ({ name, item: name, spec: made })));
        expect(index.size).toBe(live.size);
        expect(built.size).toBe(live.size);
        for (const terms of queries) {
          const ranked = (hits: { name: string; score: number }[]) => topHits(hits, 1000).page.map((hit) => [hit.name, hit.score]);
          expect(ranked(index.match(terms))).toEqual(ranked(fresh.match(terms)));
          expect(ranked(built.match(terms))).toEqual(ranked(fresh.match(terms)));
          // top() selects the same page as sorting every match, with and without a cursor.
          const all = topHits(index.match(terms), 1000).page;
          expect(index.top(terms, 7).page).toEqual(all.slice(0, 7));
          if (all.length > 8) expect(index.top(terms, 3, () => true, all[4]).page).toEqual(all.slice(5, 8));
        }
      }
    }
  });

  it('forgets the words of replaced versions once swept: a tool described anew 200 times keeps about its own terms, and ranks as built from scratch', () => {
    const next = random(7);
    const live = new Map<string, ReturnType<typeof spec>>();
    // A version every 2 minutes: a sweep keeps the last 5 (RETENTION_MS).
    let now = 0;
    const index = new SearchIndex<string>({ now: () => now });
    for (let at = 0; at < 50; at++) write(`tool_${at}`, () => 0.5 + next() / 2, index, live);
    // Words of letters only (a digit would be a term of its own): x and the number, 0-9 as a-j.
    const word = (n: number) => `x${String(n).padStart(5, '0').replace(/\d/g, (digit) => 'abcdefghij'[Number(digit)] as string)}`;
    const queries = [['weather'], ['rotating', 'word'], [word(0), word(9999)]];
    const ranked = (hits: { name: string; score: number }[]) => topHits(hits, 1000).page.map((hit) => [hit.name, hit.score]);
    let most = 0;
    for (let version = 0; version < 200; version++) {
      // 100 words no other version has, and two every version has.
      const words = Array.from({ length: 100 }, (_, at) => word(version * 100 + at));
      const made = { tool_name: 'rotating', description: `rotating word ${words.join(' ')}`, tags: [], input_schema: {} };
      now += 2 * 60_000;
      index.set('rotating', 'rotating', made);
      live.set('rotating', made as unknown as ReturnType<typeof spec>);
      most = Math.max(most, index.terms);
      if (version % 50 === 49) {
        const fresh = new SearchIndex<string>();
        for (const [name, each] of live) fresh.set(name, name, each);
        for (const terms of queries.map((words) => words.flatMap((word) => tokenize(word)))) {
          expect(ranked(index.match(terms))).toEqual(ranked(fresh.match(terms)));
          expect(index.top(terms, 5).page).toEqual(topHits(index.match(terms), 1000).page.slice(0, 5));
        }
      }
    }
    // 20,000 distinct words went through; every one stayed before (20,000+ terms).
    expect(most).toBeLessThan(3000);
    expect(index.match(tokenize(word(0)))).toEqual([]);
    expect(index.match(tokenize(word(19_999))).map((hit) => hit.name)).toEqual(['rotating']);
  });

  it("an embedder shared by two registries: a small one's search leaves the vectors of the other's tools cached", async () => {
    const texts: string[] = [];
    const embed = (list: string[]): number[][] => {
      texts.push(...list);
      return list.map((text) => [(text.length % 7) + 1, 1]);
    };
    const big = new InMemoryToolRegistry();
    await big.registerMany(Array.from({ length: 1200 }, (_, at) => ({ tool_name: `tool_${at}`, description: `weather ${at}`, input_schema: { type: 'object' }, output_schema: {} })));
    const small = new InMemoryToolRegistry();
    await small.register({ tool_name: 'weather_small', description: 'weather', input_schema: { type: 'object' }, output_schema: {} });
    await big.search('weather', { embed });
    expect(texts).toHaveLength(1201);
    texts.length = 0;
    await small.search('weather', { embed });
    expect(texts).toHaveLength(2);
    texts.length = 0;
    // Trimmed to the small one's tools, the cache made this ask for all 1,200 again.
    await big.search('weather', { embed });
    expect(texts).toEqual(['weather']);
  });

  it('an embedder vector holding a non-finite number: the TypeError names where and the value', async () => {
    const registry = new InMemoryToolRegistry();
    await registry.register({ tool_name: 'weather', description: 'weather', input_schema: { type: 'object' }, output_schema: {} });
    const embed = (list: string[]): number[][] => list.map(() => [1, Number.NaN, 2]);
    await expect(registry.search('weather', { embed })).rejects.toThrow(/\[0\]\[1\] must be a finite number, got NaN/);
  });

  it('searched after every write (norms kept between searches), scores exactly as an index built from scratch', () => {
    const next = random(62);
    const live = new Map<string, ReturnType<typeof spec>>();
    const index = new SearchIndex<string>();
    const terms = ['weather', 'email', 'github', 'stock'].flatMap((word) => tokenize(word));
    const ranked = (hits: { name: string; score: number }[]) => topHits(hits, 1000).page.map((hit) => [hit.name, hit.score]);
    for (let step = 0; step < 200; step++) {
      write(`tool_${Math.floor(next() * 60)}`, next, index, live);
      const fresh = new SearchIndex<string>();
      for (const [key, made] of live) fresh.set(key, key, made);
      expect(ranked(index.match(terms))).toEqual(ranked(fresh.match(terms)));
    }
  });

  it('swaps the item without re-indexing when the spec is unchanged', () => {
    const index = new SearchIndex<{ enabled: boolean }>();
    const one = { tool_name: 'a', description: 'weather', tags: [], input_schema: {} };
    index.set('a', { enabled: true }, one);
    index.set('a', { enabled: false }, { ...one, description: 'ignored' }, () => true);
    expect(index.match(['weather']).map((hit) => hit.item)).toEqual([{ enabled: false }]);
    index.set('a', { enabled: false }, { ...one, description: 'email' }, () => false);
    expect(index.match(['weather'])).toEqual([]);
  });

  // Issue 38: a later page ranks what the first page ranked, with its statistics.
  it('ranks a snapshot: added tools left out, a replaced one at its old place and score', () => {
    const index = new SearchIndex<string>();
    for (let at = 0; at < 10; at++) index.set(`t${at}`, 'v1', only(`t${at}`, 'alpha '.repeat(1 + at)), undefined, 1);
    const all = index.top(['alpha'], 100).page;
    const first = index.top(['alpha'], 3);
    const snapshot = index.snapshot(['alpha'], 1);
    index.set('added', 'v1', only('added', 'alpha '.repeat(30)), undefined, 2);
    // t0 ranked last; its new text would rank first.
    index.set('t0', 'v2', only('t0', 'alpha '.repeat(40)), undefined, 3);
    const later = index.top(['alpha'], 100, undefined, first.page.at(-1), snapshot);
    expect(later.page.map((hit) => [hit.name, hit.score])).toEqual(all.slice(3).map((hit) => [hit.name, hit.score]));
    expect(later.page.at(-1)).toMatchObject({ name: 't0', item: 'v2' });
    expect(index.lostAt(1)).toBe(false);
  });

  // The sweep dropped every replaced version, so a cursor whose first page ranked one skipped
  // its tool silently: it now keeps those that died less than RETENTION_MS ago, and says when
  // it dropped one that a snapshot may have ranked.
  it('a sweep keeps the versions that stopped being current within the retention time; a snapshot that may miss one is known', () => {
    let now = 0;
    const index = new SearchIndex<string>({ now: () => now });
    for (let at = 0; at < 10; at++) index.set(`t${at}`, 'v1', only(`t${at}`, 'alpha '.repeat(1 + at)), undefined, 1);
    // Unrelated tools current over [2, 3): the sweep this triggers keeps them (all within the retention time).
    churn(index, 'early', 2);
    now = 5 * 60_000;
    const all = index.top(['alpha'], 100).page;
    const first = index.top(['alpha'], 3);
    const snapshot = index.snapshot(['alpha'], 3);
    // On the later pages: t0 changed, t3 removed and registered again; t9 (first page) changed.
    index.set('t0', 'v2', only('t0', 'alpha '.repeat(40)), undefined, 4);
    index.set('t9', 'v2', only('t9', 'beta'), undefined, 4);
    index.delete('t3', 4);
    index.set('t3', 'v2', only('t3', 'alpha '.repeat(9)), undefined, 5);
    // 11 minutes after the early ones died: a sweep drops them (current over [2, 3) only), and keeps
    // the old t0, t3 and t9 (6 minutes): each tool of the first page's ranking still shown once.
    now = 11 * 60_000;
    churn(index, 'middle', 6);
    expect(index.lostAt(2)).toBe(true);
    expect(index.lostAt(3)).toBe(false);
    expect(index.lostAt(1)).toBe(false);
    const later = index.top(['alpha'], 100, undefined, first.page.at(-1), snapshot);
    expect(later.page.map((hit) => [hit.name, hit.score])).toEqual(all.slice(3).map((hit) => [hit.name, hit.score]));
    expect(later.page.map((hit) => hit.item).sort()).toEqual(['v1', 'v1', 'v1', 'v1', 'v1', 'v2', 'v2']);
    // The retention time past for t0's, t3's and t9's old versions: swept, and a snapshot at 3 may miss them.
    now = 16 * 60_000;
    churn(index, 'late', 8);
    expect(index.lostAt(3)).toBe(true);
    expect(index.lostAt(4)).toBe(false);
    // Never a version twice, nor a tool skipped without `lostAt` saying so.
    const swept = index.top(['alpha'], 100, undefined, first.page.at(-1), snapshot).page.map((hit) => hit.name);
    expect(new Set(swept).size).toBe(swept.length);
  });

  // Only a write triggered a sweep: after a burst of writes and none since, the dead versions
  // stayed in memory and in every search's posting lists for good.
  it('a burst of writes and then none: expire() (each search) sweeps once the retention time is past', () => {
    let now = 0;
    const index = new SearchIndex<string>({ now: () => now });
    index.set('kept', 'v1', only('kept', 'alpha'), undefined, 1);
    churn(index, 'burst', 2);
    const held = index.terms;
    index.expire();
    now = RETENTION_MS - 1;
    index.expire();
    expect(index.lostAt(2)).toBe(false);
    expect(index.terms).toBe(held);
    now = RETENTION_MS;
    index.expire();
    expect(index.lostAt(2)).toBe(true);
    // The burst's words are forgotten with its versions.
    expect(index.terms).toBeLessThan(held / 2);
    expect(index.match(['alpha']).map((hit) => hit.name)).toEqual(['kept']);
  });

  // A version without a search term (a tool named "___" described "!!!": the registry takes it)
  // counted as no dead entry, so re-registering it never made a sweep due: every version, its
  // item and its place in the deaths list stayed for the life of the process.
  it('versions without a term are swept too: a tool with none re-registered 5,000 times does not keep every version', async () => {
    setFlagsFromString('--expose_gc');
    const gc = runInNewContext('gc') as () => void;
    let now = 0;
    const index = new SearchIndex<{ readonly bytes: Uint8Array }>({ now: () => now });
    index.set('kept', { bytes: new Uint8Array(1) }, only('kept', 'alpha'), undefined, 1);
    const termless = (version: number) => ({ tool_name: '___', description: '!!!', tags: [], input_schema: { examples: [version] } });
    const first = new WeakRef({ bytes: new Uint8Array(1 << 20) });
    index.set('___', first.deref() as { bytes: Uint8Array }, termless(0), undefined, 2);
    for (let version = 1; version <= 5000; version++) {
      now += RETENTION_MS;
      index.set('___', { bytes: new Uint8Array(16) }, termless(version), undefined, 2 + version);
      index.expire();
    }
    // The first version died 5,000 retention times ago: swept, and a snapshot of its time is known to miss it.
    expect(index.lostAt(2)).toBe(true);
    // Its item is no longer held (a WeakRef's target stays alive until the current job ends).
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(first.deref()).toBeUndefined();
    expect(index.match(['alpha']).map((hit) => hit.name)).toEqual(['kept']);
  });

  it('a sweep keeps dead versions within max(MIN_RETAINED_ENTRIES, 4 x the live entries), dropping those that died first, and says which revisions lost one', () => {
    const index = new SearchIndex<string>({ now: () => 0 });
    const word = (n: number) => `w${String(n).replace(/\d/g, (digit) => 'abcdefghij'[Number(digit)] as string)}`;
    index.set('kept', 'v1', only('kept', 'alpha'), undefined, 1);
    index.set('changed', 'v1', only('changed', 'alpha alpha'), undefined, 1);
    // Current over [1, 2): replaced at 2, then only new versions of 'busy', each 100 words of its own.
    index.set('changed', 'v2', only('changed', 'alpha alpha alpha'), undefined, 2);
    const per = 100;
    let most = 0;
    for (let version = 0; version < 2000; version++) {
      const words = Array.from({ length: per }, (_, at) => word(version * per + at));
      index.set('busy', `v${version}`, only('busy', words.join(' ')), undefined, 3 + version);
      most = Math.max(most, index.terms);
      // All within the retention time: only the bound decides. Before it is passed, nothing is lost.
      if (version === 200) expect(index.lostAt(1)).toBe(false);
    }
    // 200,000 words went through: a sweep keeps the bound's worth of dead entries and comes once
    // as many new ones are dead (the words held by no version are forgotten once a quarter of all).
    expect(most).toBeLessThan(2.25 * MIN_RETAINED_ENTRIES);
    // The first to die went first: changed's v1 (current over [1, 2)), and busy's early versions.
    expect(index.lostAt(1)).toBe(true);
    expect(index.lostAt(3)).toBe(true);
    // Those that died last are kept: a snapshot at a late revision lost nothing.
    expect(index.lostAt(3 + 1990)).toBe(false);
    expect(index.match(tokenize(word(1999 * per))).map((hit) => hit.name)).toEqual(['busy']);
    expect(index.match(['alpha']).map((hit) => hit.name).sort()).toEqual(['changed', 'kept']);
  });

  it('merges the revision ranges of swept versions, never past 32, and only ever grows them', () => {
    let now = 0;
    const index = new SearchIndex<string>({ now: () => now });
    // 100 unrelated tools each current over [2k, 2k + 1) only, swept an hour later.
    for (let at = 0; at < 100; at++) {
      index.set(`gap${at}`, 'v1', only(`gap${at}`, 'one two three four five six seven eight nine ten eleven twelve'), undefined, 2 * at);
      index.delete(`gap${at}`, 2 * at + 1);
    }
    now = 60 * 60_000;
    churn(index, 'trigger', 1000);
    for (let at = 0; at < 100; at++) expect(index.lostAt(2 * at)).toBe(true);
    // 99 gaps between the ranges, 32 ranges kept: some gaps are now inside a range (refused), never fewer refused.
    const refusedGaps = Array.from({ length: 99 }, (_, at) => index.lostAt(2 * at + 1)).filter(Boolean).length;
    expect(refusedGaps).toBe(100 - 32);
    expect(index.lostAt(-1)).toBe(false);
    expect(index.lostAt(999)).toBe(false);
  });

  // Past the bound, the sweep drops a version a cursor's first page ranked: the cursor is
  // refused by name, never answered with the tool silently left out.
  it("a registry refuses a cursor whose first page ranked a version swept out since, naming cursor; a new first page pages through", async () => {
    const registry = new InMemoryToolRegistry();
    const spec = (name: string, description: string, version = '1') => ({ tool_name: name, description, version, input_schema: { type: 'object' }, output_schema: {} });
    await registry.registerMany(Array.from({ length: 40 }, (_, at) => spec(`m${String(at).padStart(2, '0')}`, 'kappa '.repeat(1 + (at % 5)))));
    const first = await registry.search('kappa', { limit: 3 });
    // A match not yet shown gets a new text: its old version is the one the later pages rank.
    const unseen = (await registry.search('kappa', { limit: 40 })).results.at(-1)?.registration.spec.tool_name as string;
    await registry.register(spec(unseen, 'kappa kappa', '2'));
    const page = await registry.search('kappa', { limit: 3, cursor: first.next_cursor });
    expect(page.results).toHaveLength(3);
    // One unrelated tool re-registered 400 times with 200 words of its own (a search between
    // writes brings each version into the index): 80,000 dead entries pass the bound.
    const letters = (n: number) => String(n).replace(/\d/g, (digit) => 'abcdefghij'[Number(digit)] as string);
    for (let version = 0; version < 400; version++) {
      await registry.register(spec('busy', Array.from({ length: 200 }, (_, at) => `z${letters(version)}q${letters(at)}`).join(' '), String(version)));
      await registry.search('nothing');
    }
    const error = await expectCode(registry.search('kappa', { limit: 3, cursor: page.next_cursor }), 'VALIDATION_FAILED');
    expect(error.context.path).toBe('cursor');
    expect(error.message).toContain('too old for the writes since its first page');
    expect(error.message).toContain('start again from the first page');
    expect(error.message).toContain(`"${(page.next_cursor as string).slice(0, 24)}`);
    // Started again: every match once.
    expect((await everyPage(registry, 'kappa')).sort()).toEqual(Array.from({ length: 40 }, (_, at) => `m${String(at).padStart(2, '0')}`));
    await registry.close();
  });

  it('a registry refuses the cursors of an index it rebuilt since (a burst of more changes than it catches up with): one shown tool was shown again', async () => {
    const registry = new InMemoryToolRegistry();
    const spec = (name: string, description: string, version = '1') => ({ tool_name: name, description, version, input_schema: { type: 'object' }, output_schema: {} });
    await registry.registerMany(Array.from({ length: 10 }, (_, at) => spec(`m${at}`, 'kappa '.repeat(1 + at) + 'pad '.repeat(10 - at))));
    const first = await registry.search('kappa', { limit: 3 });
    const shown = first.results.map((result) => result.registration.spec.tool_name);
    // A tool already shown now ranks last; then 1,001 new tools at once: the next search rebuilds the index.
    await registry.register(spec(shown[0] as string, `kappa ${'pad '.repeat(30)}`, '2'));
    await registry.registerMany(Array.from({ length: 1001 }, (_, at) => spec(`x${at}`, 'other words')));
    const error = await expectCode(registry.search('kappa', { limit: 3, cursor: first.next_cursor }), 'VALIDATION_FAILED');
    expect([error.context.path, error.message]).toEqual(['cursor', expect.stringContaining('start again from the first page')]);
    // Started again on the rebuilt index: every match once.
    expect((await everyPage(registry, 'kappa')).sort()).toEqual(Array.from({ length: 10 }, (_, at) => `m${at}`));
    await registry.close();
  });

  it('pages by (score, name) with topHits', () => {
    const hits = [
      { name: 'b', score: 1 },
      { name: 'a', score: 1 },
      { name: 'c', score: 2 },
      { name: 'd', score: 0.5 },
    ];
    expect(topHits(hits, 2)).toEqual({ page: [hits[2], hits[1]], more: true });
    expect(topHits(hits, 2, { name: 'a', score: 1 })).toEqual({ page: [hits[0], hits[3]], more: false });
  });
});
