// Conformance, issue 26 (discovery): search, listPage and listAll's tags, the same in every
// store. Each store's results and scores are compared with the memory store's for the same
// tools in the same test, so "identical in every store" is checked, not assumed.
import { describe, expect, it } from 'vitest';
import { InMemoryToolRegistry } from '../../src/index.js';
import type { SearchPage, ToolRegistry, ToolSpecInput } from '../../src/index.js';
import { expectCode, expectPlainTypeError, isDeepFrozen } from '../support/registry-helpers.js';
import type { StoreHarness } from './stores.js';
import { useSuiteRegistries } from './suite-registries.js';

function tool(name: string, description: string | null, extra: Partial<ToolSpecInput> = {}): ToolSpecInput {
  return { tool_name: name, description, input_schema: { type: 'object' }, output_schema: {}, ...extra };
}

/** A small catalogue: names in several styles, schemas with described properties, tags. */
export const CATALOGUE: readonly ToolSpecInput[] = [
  tool('get_weather', 'Current weather conditions and a forecast for a city.', {
    tags: ['weather', 'read'],
    input_schema: { type: 'object', properties: { city: { type: 'string', description: 'City name, such as Paris' }, units: { enum: ['metric', 'imperial'] } } },
  }),
  tool('weatherAlerts', 'Severe weather warnings issued for a region.', { tags: ['weather'] }),
  tool('send_email', 'Send an e-mail message to one or more recipients.', {
    tags: ['mail', 'write'],
    input_schema: { type: 'object', properties: { to: { type: 'array', items: { type: 'string' } }, subject: { type: 'string' }, body: { type: 'string', description: 'The message text' } } },
  }),
  tool('search_emails', 'Find e-mails in the inbox by sender, subject or words.', { tags: ['mail', 'read'] }),
  tool('GitHubCreateIssue', 'Open an issue in a GitHub repository.', { tags: ['github', 'write'] }),
  tool('github.search-repos', 'Search repositories on GitHub by keyword.', { tags: ['github', 'read'] }),
  tool('translate_text', 'Translate text between languages.', {
    input_schema: { type: 'object', properties: { text: { type: 'string' }, targetLanguage: { type: 'string', description: 'ISO 639 code of the language to translate into' } } },
  }),
  tool('convert_currency', 'Convert an amount of money from one currency to another at today’s rate.', { tags: ['finance'] }),
  tool('stock_quote', 'Latest stock price of a ticker symbol.', { tags: ['finance', 'read'] }),
  tool('odd_letters', 'Ｃａｌｃｕｌａｔｅ the STRAẞE distance.', { tags: ['ＦｕｌｌＷｉｄｔｈ'] }),
  tool('no_description', null, { input_schema: { type: 'object', properties: { calendar_id: { type: 'string' } } } }),
  tool('book_flight', 'Book a flight ticket between two airports.', { tags: ['travel', 'write'] }),
];

const QUERIES = [
  'what is the weather in Paris?',
  'weather',
  'send an email to my boss',
  'emails',
  'github issue',
  'repo search',
  'translate into German',
  'target language',
  'money conversion',
  'stocks',
  'fullwidth calculate strasse',
  'calendar',
  'flights',
  'the',
  'OR',
  'to or from',
  'zzz nothing matches this',
  '',
];

function names(page: SearchPage): string[] {
  return page.results.map((result) => result.registration.spec.tool_name);
}

function ranked(page: SearchPage): [string, number][] {
  return page.results.map((result) => [result.registration.spec.tool_name, result.score]);
}

/** A deterministic toy embedder: letter-trigram counts hashed into 32 dimensions. */
export function toyEmbed(texts: string[]): number[][] {
  return texts.map((text) => {
    const vector = new Array<number>(32).fill(0);
    const folded = ` ${text.toLowerCase().replace(/[^a-z]+/g, ' ')} `;
    for (let index = 0; index + 3 <= folded.length; index++) {
      let hash = 7;
      for (let offset = 0; offset < 3; offset++) hash = (hash * 31 + folded.charCodeAt(index + offset)) % 1_000_003;
      vector[hash % 32] = (vector[hash % 32] as number) + 1;
    }
    return vector;
  });
}

export function defineSearchSuite(harness: StoreHarness): void {
  const { open, restart, track } = useSuiteRegistries(harness);

  /** The memory store holding the same tools, registered the same way: the reference. */
  async function reference(specs: readonly ToolSpecInput[]): Promise<ToolRegistry> {
    const registry = new InMemoryToolRegistry();
    track(registry);
    await registry.registerMany(specs);
    return registry;
  }

  describe('search (issue 26)', () => {
    it('returns the same results and scores as the memory store, for every query', async () => {
      const registry = await open();
      await registry.registerMany(CATALOGUE);
      const memory = await reference(CATALOGUE);
      for (const query of QUERIES) {
        expect(ranked(await registry.search(query, { limit: 50 })), query).toEqual(ranked(await memory.search(query, { limit: 50 })));
      }
    });

    it('ranks by name, description, tags and schema text, with stemming, splitting and folding', async () => {
      const registry = await open();
      await registry.registerMany(CATALOGUE);
      expect(names(await registry.search('what is the weather in Paris?')).slice(0, 2)).toEqual(['get_weather', 'weatherAlerts']);
      // Stemming: "emails" finds "e-mail"/"email"; the name's words weigh most.
      expect(names(await registry.search('emails'))).toEqual(expect.arrayContaining(['search_emails', 'send_email']));
      // camelCase and `. -` are split; the joined word also matches.
      expect(names(await registry.search('github issue'))[0]).toBe('GitHubCreateIssue');
      expect(names(await registry.search('repos'))).toEqual(['github.search-repos']);
      // A property name (camelCase) and a property description are searched.
      expect(names(await registry.search('target language'))[0]).toBe('translate_text');
      expect(names(await registry.search('calendar'))).toEqual(['no_description']);
      // NFKC (full-width letters) and case folding (ẞ -> ss).
      expect(names(await registry.search('fullwidth calculate strasse'))).toEqual(['odd_letters']);
      expect(names(await registry.search('flights'))).toEqual(['book_flight']);
    });

    it('finds Turkish, emoji-marked and Chinese or Japanese text as a reader would (issue 38)', async () => {
      const registry = await open();
      await registry.registerMany([
        tool('istanbul_weather', 'İstanbul hava durumu.'),
        tool('rain_radar', '🌧️ Rain radar.'),
        tool('tokyo_weather', '東京の天気を検索'),
      ]);
      expect(names(await registry.search('Istanbul'))).toEqual(['istanbul_weather']);
      expect(names(await registry.search('ISTANBUL'))).toEqual(['istanbul_weather']);
      expect(names(await registry.search('❤️'))).toEqual([]);
      expect(names(await registry.search('天気'))).toEqual(['tokyo_weather']);
    });

    it('leaves out tools that match no term; a query without terms has no results', async () => {
      const registry = await open();
      await registry.registerMany(CATALOGUE);
      expect((await registry.search('zzz nothing matches this')).results).toEqual([]);
      expect(await registry.search('   ')).toEqual({ results: [], next_cursor: null });
      for (const result of (await registry.search('weather', { limit: 100 })).results) {
        expect(JSON.stringify(result.registration.spec).toLowerCase()).toContain('weather');
      }
    });

    // `search OR` and `search "the of"` found nothing: stop words were dropped from every name.
    it('a query made only of stop words finds them in names, tags and parameter names, never in prose', async () => {
      const others = [
        tool('is_a', 'Whether a value has a type.', { tags: ['the'] }),
        tool('pick', 'One of them or the other.', { input_schema: { type: 'object', properties: { either_or: { type: 'string' } } } }),
        tool('plain_and', 'The and of two booleans.'),
      ];
      const registry = await open();
      await registry.registerMany([tool('logical_or', 'Either of two booleans.'), ...others]);
      expect(names(await registry.search('OR'))).toEqual(['logical_or', 'pick']);
      expect(names(await registry.search('the of'))).toEqual(['is_a']);
      expect(names(await registry.search('is a'))).toEqual(['is_a']);
      // With another word, stop words weigh nothing: a name's stop word neither matches nor lengthens it.
      expect(names(await registry.search('logical or'))).toEqual(['logical_or']);
      const alone = await open();
      await alone.registerMany([tool('logical', 'Either of two booleans.'), ...others]);
      expect((await registry.search('logical')).results[0]?.score).toBe((await alone.search('logical')).results[0]?.score);
    });

    it('orders ties by tool_name', async () => {
      const registry = await open();
      await registry.registerMany(['tie_c', 'tie_a', 'tie_b'].map((name) => tool(name, 'identical words here')));
      const page = await registry.search('identical words');
      expect(names(page)).toEqual(['tie_a', 'tie_b', 'tie_c']);
      expect(new Set(page.results.map((result) => result.score)).size).toBe(1);
    });

    it('filters by tags (every tag given) and leaves disabled tools out unless asked', async () => {
      const registry = await open();
      await registry.registerMany(CATALOGUE);
      expect(names(await registry.search('weather', { tags: ['weather', 'read'] }))).toEqual(['get_weather']);
      expect(names(await registry.search('weather', { tags: ['nope'] }))).toEqual([]);
      await registry.setEnabled('get_weather', false);
      expect(names(await registry.search('weather'))).toEqual(['weatherAlerts']);
      expect(names(await registry.search('weather', { includeDisabled: true }))).toContain('get_weather');
    });

    it('hands out frozen results whose registrations equal get()', async () => {
      const registry = await open();
      await registry.registerMany(CATALOGUE);
      const page = await registry.search('email');
      expect(isDeepFrozen(page)).toBe(true);
      for (const result of page.results) expect(result.registration).toEqual(await registry.get(result.registration.spec.tool_name));
    });

    it('pages with next_cursor through exactly the results of one large page', async () => {
      const registry = await open();
      await registry.registerMany(CATALOGUE);
      const all = ranked(await registry.search('weather email github search', { limit: 100 }));
      expect(all.length).toBeGreaterThan(4);
      const walked: [string, number][] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: SearchPage = await registry.search('weather email github search', { limit: 2, cursor });
        walked.push(...ranked(page));
        cursor = page.next_cursor;
        pages++;
      } while (cursor !== null);
      expect(walked).toEqual(all);
      expect(pages).toBe(Math.ceil(all.length / 2));
    });

    // Issue 38: the cursor kept only the last (score, name), and every write moves every score
    // (N, idf, average lengths): pages skipped tools, repeated them, or never ended.
    it('pages hold while tools are added, removed, changed and disabled between every page', async () => {
      const registry = await open();
      // 14 matches of different scores (1-4 "alpha"s, "beta" on some), and 4 tools that match nothing.
      const matching = Array.from({ length: 14 }, (_, at) =>
        tool(`pg_${String(at).padStart(2, '0')}`, `${'alpha '.repeat(1 + (at % 4))}${at % 3 === 0 ? 'beta ' : ''}words ${'pad '.repeat(at % 5)}`.trim(), { version: '1' }),
      );
      await registry.registerMany([...matching, ...['x1', 'x2', 'x3', 'x4'].map((name) => tool(name, 'nothing in common'))]);
      const query = 'alpha beta';
      const all = ranked(await registry.search(query, { limit: 100 }));
      expect(all).toHaveLength(14);
      const first = await registry.search(query, { limit: 3 });
      expect(ranked(first)).toEqual(all.slice(0, 3));
      const seen = names(first);
      const [shownChanged, shownRemoved] = seen;
      const later = all.slice(3).map(([name]) => name);
      // Not yet shown when they are written (two writes between pages: after page 2, 6 are shown...).
      const [unseenRemoved, unseenChanged, unseenDisabled] = [later[4], later[7], later[9]] as [string, string, string];
      const writes: (() => Promise<unknown>)[] = [
        // Added after the first page, above every score and below: not on any page.
        async () => {
          await registry.registerMany([tool('pg_new_top', 'alpha alpha alpha alpha beta beta'), tool('pg_new_low', 'alpha and many other words to make it long')]);
          // Removed: gone (one already shown, one not yet).
          await registry.remove(shownRemoved as string);
        },
        async () => {
          await registry.remove(unseenRemoved);
          // Changed text (a new version): each exactly once, at the place its old text ranked.
          await registry.register(tool(shownChanged as string, 'alpha', { version: '2' }));
        },
        async () => {
          await registry.register(tool(unseenChanged, 'beta beta alpha alpha alpha alpha', { version: '2' }));
          // Disabled: left out.
          await registry.setEnabled(unseenDisabled, false);
        },
        // Tools that match nothing, changing N and the average lengths.
        async () => {
          await registry.registerMany([tool('y1', 'a long unrelated description of many many words'), tool('y2', 'more')]);
          await registry.remove('x1');
        },
      ];
      const walked = ranked(first);
      let cursor = first.next_cursor;
      let pages = 1;
      while (cursor !== null) {
        await writes.shift()?.();
        const page: SearchPage = await registry.search(query, { limit: 3, cursor });
        walked.push(...ranked(page));
        cursor = page.next_cursor;
        expect(++pages).toBeLessThanOrEqual(5);
      }
      // Exactly the first page's ranking (its scores too), less what was removed or disabled.
      const gone = new Set([unseenRemoved, unseenDisabled]);
      expect(walked).toEqual(all.filter(([name]) => !gone.has(name)));
      // Each result is the tool as it is now.
      const changed = (await registry.search(query, { limit: 100 })).results.find((result) => result.registration.spec.tool_name === unseenChanged);
      expect(changed?.registration.spec.version).toBe('2');
    });

    it('pages end while a writer adds a better match after every page', async () => {
      const registry = await open();
      await registry.registerMany(Array.from({ length: 20 }, (_, at) => tool(`fc_${String(at).padStart(2, '0')}`, `find ${'the cat '.repeat(1 + (at % 3))}`)));
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: SearchPage = await registry.search('cat', { limit: 4, cursor });
        seen.push(...names(page));
        cursor = page.next_cursor;
        pages++;
        await registry.register(tool(`fc_new_${pages}`, 'cat cat cat cat'));
      } while (cursor !== null && pages < 50);
      expect(pages).toBe(5);
      expect([...seen].sort()).toEqual(Array.from({ length: 20 }, (_, at) => `fc_${String(at).padStart(2, '0')}`));
    });

    // The index swept every replaced version once dead entries outnumbered live ones, and a
    // cursor whose first page ranked one skipped its tool: 1-6 of the re-versioned matches were
    // missing. A sweep now keeps what died less than RETENTION_MS ago (docs/search.md).
    it('pages hold while enough is re-registered between pages for the index to sweep', async () => {
      const registry = await open();
      const matching = Array.from({ length: 40 }, (_, at) => tool(`sw_${String(at).padStart(2, '0')}`, `${'kappa '.repeat(1 + (at % 5))}words ${'pad '.repeat(at % 7)}`.trim(), { version: '1' }));
      // 30 unrelated tools of 50 words each, every page a new version of each (new words).
      const unrelated = (round: number) => Array.from({ length: 30 }, (_, at) => tool(`un_${at}`, Array.from({ length: 50 }, (_, word) => `r${round}w${word}t${at}`.replace(/\d/g, (digit) => 'abcdefghij'[Number(digit)] as string)).join(' '), { version: String(round) }));
      await registry.registerMany([...matching, ...unrelated(0)]);
      const query = 'kappa';
      const all = ranked(await registry.search(query, { limit: 100 }));
      expect(all).toHaveLength(40);
      const walked: [string, number][] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: SearchPage = await registry.search(query, { limit: 3, cursor });
        walked.push(...ranked(page));
        cursor = page.next_cursor;
        pages++;
        // Two matching tools with new text (one already shown, one not yet), and every unrelated one.
        const changed = [(pages * 5) % 40, (pages * 5 + 17) % 40].map((at) => tool((all[at] as [string, number])[0], 'kappa', { version: `v${pages}` }));
        await registry.registerMany([...changed, ...unrelated(pages)]);
      } while (cursor !== null && pages < 20);
      expect(walked).toEqual(all);
      expect(pages).toBe(14);
    });

    it('refuses bad limits, cursors and argument types', async () => {
      const registry = await open();
      await registry.registerMany(CATALOGUE);
      for (const limit of [0, -1, 1.5, 1001]) {
        const error = await expectCode(registry.search('weather', { limit }), 'VALIDATION_FAILED');
        expect(error.context.path).toBe('limit');
      }
      for (const cursor of ['not a cursor', 'e30', 'WyJwIiwiYSJd']) {
        const error = await expectCode(registry.search('weather', { cursor }), 'VALIDATION_FAILED');
        expect(error.context.path).toBe('cursor');
        expect(error.message).toContain(JSON.stringify(cursor));
      }
      const first = await registry.search('weather', { limit: 1 });
      expect(first.next_cursor).not.toBeNull();
      // Tampered cursors (issue 38): each part is checked, the old format is refused by name.
      const parts = JSON.parse(Buffer.from(first.next_cursor as string, 'base64url').toString('utf8')) as unknown[];
      const tampered = (at: number, value: unknown): string => Buffer.from(JSON.stringify(parts.map((part, index) => (index === at ? value : part))), 'utf8').toString('base64url');
      for (const cursor of [tampered(3, 0), tampered(4, [1, 2]), tampered(5, []), tampered(5, [1e9]), tampered(6, -1), tampered(6, 'x'), tampered(7, 5), Buffer.from(JSON.stringify(['s', parts[1], 1, 'get_weather'])).toString('base64url')]) {
        const error = await expectCode(registry.search('weather', { cursor }), 'VALIDATION_FAILED');
        expect(error.context.path).toBe('cursor');
      }
      // A cursor is the same in every store for the same tools and writes.
      const memory = await reference(CATALOGUE);
      expect(first.next_cursor).toBe((await memory.search('weather', { limit: 1 })).next_cursor);
      // A cursor belongs to its query and filters.
      await expectCode(registry.search('email', { cursor: first.next_cursor }), 'VALIDATION_FAILED');
      await expectCode(registry.search('weather', { cursor: first.next_cursor, includeDisabled: true }), 'VALIDATION_FAILED');
      await expectPlainTypeError(registry.search(42 as unknown as string));
      await expectPlainTypeError(registry.search('weather', { limit: '5' as unknown as number }));
      await expectPlainTypeError(registry.search('weather', { tags: [1] as unknown as string[] }));
      await expectPlainTypeError(registry.search('weather', { includeDisabled: 'yes' as unknown as boolean }));
    });

    it('follows every write: register, a new version, disable, remove, import', async () => {
      const registry = await open();
      await registry.registerMany(CATALOGUE);
      expect(names(await registry.search('telescope'))).toEqual([]);
      await registry.register(tool('star_gazer', 'Point the telescope at a star.', { version: '1' }));
      expect(names(await registry.search('telescope'))).toEqual(['star_gazer']);
      await registry.register(tool('star_gazer', 'Point the binoculars at a planet.', { version: '2' }));
      expect(names(await registry.search('telescope'))).toEqual([]);
      expect(names(await registry.search('binoculars'))).toEqual(['star_gazer']);
      await registry.setEnabled('star_gazer', false);
      expect(names(await registry.search('binoculars'))).toEqual([]);
      await registry.setEnabled('star_gazer', true);
      expect(names(await registry.search('binoculars'))).toEqual(['star_gazer']);
      await registry.remove('star_gazer');
      expect(names(await registry.search('binoculars'))).toEqual([]);
      await registry.importSnapshot({ tools: [{ spec: tool('only_one', 'a lonely telescope'), enabled: true, created_at: null }] }, { mode: 'replace' });
      expect(names(await registry.search('telescope weather email'))).toEqual(['only_one']);
      // And the scores are the memory store's for the same final tools.
      const memory = await reference([tool('only_one', 'a lonely telescope')]);
      expect(ranked(await registry.search('telescope'))).toEqual(ranked(await memory.search('telescope')));
    });

    it("sees another connection's writes as soon as get() does, and survives a restart", async () => {
      let registry = await open();
      await registry.registerMany(CATALOGUE);
      expect(names(await registry.search('telescope'))).toEqual([]);
      const peer = await harness.peer(registry);
      if (peer !== registry) track(peer);
      await peer.register(tool('star_gazer', 'Point the telescope at a star.'));
      await peer.remove('book_flight');
      // A cache coherent by notification may take a moment: wait until get() sees the writes.
      const deadline = Date.now() + 10_000;
      while (((await registry.get('star_gazer')) === undefined || (await registry.has('book_flight'))) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(names(await registry.search('telescope'))).toEqual(['star_gazer']);
      expect(names(await registry.search('flight'))).toEqual([]);
      const before = ranked(await registry.search('weather email telescope', { limit: 50 }));
      registry = await restart(registry);
      expect(ranked(await registry.search('weather email telescope', { limit: 50 }))).toEqual(before);
    });

    it('fuses an embedder by reciprocal rank fusion, caching tool vectors per fingerprint', async () => {
      const registry = await open();
      await registry.registerMany(CATALOGUE);
      const calls: string[][] = [];
      const embed = (texts: string[]): number[][] => {
        calls.push(texts);
        return toyEmbed(texts);
      };
      const plain = await registry.search('weather email github', { limit: 50 });
      const fused = await registry.search('weather email github', { limit: 50, embed });
      // The same tools (those matching a term), scored by RRF: at most 2 / (60 + 1).
      expect([...names(fused)].sort()).toEqual([...names(plain)].sort());
      for (const result of fused.results) expect(result.score).toBeLessThanOrEqual(2 / 61);
      expect(calls).toHaveLength(1);
      expect(calls[0]?.[0]).toBe('weather email github');
      expect(calls[0]?.length).toBe(plain.results.length + 1);
      // Cached: the next search embeds only its query.
      await registry.search('weather email github', { embed });
      expect(calls[1]).toEqual(['weather email github']);
      // The memory store fuses to the same scores.
      const memory = await reference(CATALOGUE);
      expect(ranked(fused)).toEqual(ranked(await memory.search('weather email github', { limit: 50, embed: toyEmbed })));
      await expectPlainTypeError(registry.search('weather', { embed: () => [[1, 2]] }));
    });
  });

  describe('listPage and listAll with tags (issue 26)', () => {
    it('listAll keeps returning an array, filtered by every tag given', async () => {
      const registry = await open();
      await registry.registerMany(CATALOGUE);
      const read = await registry.listAll({ tags: ['read'] });
      expect(Array.isArray(read)).toBe(true);
      expect(read.map((registration) => registration.spec.tool_name)).toEqual(['get_weather', 'github.search-repos', 'search_emails', 'stock_quote']);
      expect((await registry.listAll({ tags: ['finance', 'read'] })).map((registration) => registration.spec.tool_name)).toEqual(['stock_quote']);
      await registry.setEnabled('stock_quote', false);
      expect(await registry.listAll({ tags: ['finance', 'read'] })).toEqual([]);
      expect((await registry.listAll({ tags: ['finance', 'read'], includeDisabled: true })).length).toBe(1);
      await expectPlainTypeError(registry.listAll({ tags: [3] as unknown as string[] }));
    });

    it('walks every registration by name in keyset pages', async () => {
      const registry = await open();
      await registry.registerMany(CATALOGUE);
      const all = (await registry.listAll()).map((registration) => registration.spec.tool_name);
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<ToolRegistry['listPage']>> = await registry.listPage({ limit: 5, cursor });
        expect(page.registrations.length).toBeLessThanOrEqual(5);
        walked.push(...page.registrations.map((registration) => registration.spec.tool_name));
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(walked).toEqual(all);
      const tagged = await registry.listPage({ tags: ['write'], limit: 2 });
      expect(tagged.registrations.map((registration) => registration.spec.tool_name)).toEqual(['GitHubCreateIssue', 'book_flight']);
      const rest = await registry.listPage({ tags: ['write'], limit: 2, cursor: tagged.next_cursor });
      expect(rest).toEqual({ registrations: [expect.objectContaining({ enabled: true })], next_cursor: null });
      expect(rest.registrations[0]?.spec.tool_name).toBe('send_email');
    });

    it('stays stable while tools are added and removed between pages', async () => {
      const registry = await open();
      await registry.registerMany(['b', 'd', 'f', 'h', 'j'].map((name) => tool(name, null)));
      const first = await registry.listPage({ limit: 2 });
      expect(first.registrations.map((registration) => registration.spec.tool_name)).toEqual(['b', 'd']);
      // Before the cursor (a), at it (d removed), and after it (e, g added; f removed).
      await registry.registerMany(['a', 'e', 'g'].map((name) => tool(name, null)));
      await registry.remove('d');
      await registry.remove('f');
      const second = await registry.listPage({ limit: 2, cursor: first.next_cursor });
      expect(second.registrations.map((registration) => registration.spec.tool_name)).toEqual(['e', 'g']);
      const third = await registry.listPage({ limit: 2, cursor: second.next_cursor });
      expect(third.registrations.map((registration) => registration.spec.tool_name)).toEqual(['h', 'j']);
      expect(third.next_cursor).toBeNull();
    });

    it('refuses bad limits and cursors, naming them', async () => {
      const registry = await open();
      for (const limit of [0, 1001, 2.5]) expect((await expectCode(registry.listPage({ limit }), 'VALIDATION_FAILED')).context.path).toBe('limit');
      const error = await expectCode(registry.listPage({ cursor: '%%%' }), 'VALIDATION_FAILED');
      expect(error.context.path).toBe('cursor');
      expect(error.message).toContain('"%%%"');
      await registry.registerMany(CATALOGUE);
      const search = await registry.search('weather', { limit: 1 });
      // A search cursor is not a list cursor.
      await expectCode(registry.listPage({ cursor: search.next_cursor }), 'VALIDATION_FAILED');
      await expectPlainTypeError(registry.listPage({ limit: '3' as unknown as number }));
      await expectPlainTypeError(registry.listPage({ cursor: 5 as unknown as string }));
    });
  });
}
