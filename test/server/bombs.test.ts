// Requests that cost the server far more than their size (the bombs audit), over a real
// socket (and one `tool-registry mcp` child): each is refused cleanly or costs what its size
// says. Costs are counted (issues listed, calls of the expensive step), never timed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ToolSet, defineTool } from '../../src/index.js';
import { foldCase, tokenize } from '../../src/core/search/tokens.js';
import { mcpMount } from '../../src/mcp/index.js';
import { memoryNamespaces } from '../../src/server/index.js';
import { ROOT, useChildProcessTimeout } from '../cli/helpers.js';
import { spawnRawStdio } from '../mcp/helpers.js';
import { spec, start } from './helpers.js';
import type { Running } from './helpers.js';

useChildProcessTimeout();

const folder = mkdtempSync(join(tmpdir(), 'tool-registry-bombs-'));
const tools = new ToolSet([defineTool({ name: 'echo', version: '1', input_schema: { type: 'object' }, handler: (args: Record<string, unknown>) => ({ keys: Object.keys(args).length }) })]);
let api: Running;

beforeAll(async () => {
  api = await start({ registries: memoryNamespaces(), mounts: { mcp: mcpMount(tools) } });
  expect((await api.call('POST', '/v1/tools', { body: [...tools.tools()].map((tool) => tool.spec) })).status).toBe(200);
});

afterAll(async () => {
  await api?.close();
  rmSync(folder, { recursive: true, force: true });
});

const mcpHeaders = { accept: 'application/json, text/event-stream' };
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bombs', version: '1' } } };
/** JSON text of `inner` inside `depth` arrays. */
const nested = (depth: number, inner: string): string => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
type Problem = { code: string; detail: string; context: { path: string; issues: { pathText: string }[] } };

describe('bodies whose checks cost more than their size', () => {
  it('lists at most 100 of a body\'s inexact numbers and repeated keys, and counts the rest', async () => {
    // 170,000 `1e400`s 60 levels deep (1 MiB) took 12 s, 1.7 GB and a 100 MB answer: each listed with its path.
    const numbers = await api.call('POST', '/v1/tools', { raw: nested(60, Array(5000).fill('1e400').join(',')), headers: { 'content-type': 'application/json' } });
    const problem = numbers.body as Problem;
    expect([numbers.status, problem.code, problem.context.issues.length]).toEqual([400, 'VALIDATION_FAILED', 100]);
    expect(problem.detail).toBe(`the body: ${'[0]'.repeat(60)}: the number 1e400 cannot be kept exactly (a double holds Infinity); write it as a string (and 4999 more; the first 100 are listed)`);
    expect(problem.context.issues[99]?.pathText).toBe(`${'[0]'.repeat(59)}[99]`);
    const keys = await api.call('POST', '/v1/snapshot', { raw: `{"tools":[{${Array(3000).fill('"a":1').join(',')}}]}`, headers: { 'content-type': 'application/json' } });
    const refused = keys.body as Problem;
    expect([keys.status, refused.code, refused.context.issues.length]).toEqual([400, 'SNAPSHOT_INVALID', 100]);
    expect(refused.detail).toMatch(/\(and 2998 more; the first 100 are listed\)$/);
  });

  it('a batch, a snapshot or a spec lists at most 100 issues, and a batch stops being checked there', async () => {
    // 300,000 `{}`s (1 MiB) were 900,000 issues: 21 s of the server's CPU and a 200 MB answer.
    const batch = await api.call('POST', '/v1/tools', { body: Array.from({ length: 20_000 }, () => ({})) });
    const problem = batch.body as Problem;
    expect([batch.status, problem.code, problem.context.issues.length, problem.context.path]).toEqual([400, 'VALIDATION_FAILED', 100, '[0].tool_name']);
    // Three issues each: checking stopped at the 34th spec, 102 found, the first 100 listed.
    expect(problem.detail).toMatch(/; and 97 more \(checking stopped there: at most 100 issues are listed\)$/);
    expect(problem.context.issues.at(-1)?.pathText).toBe('[33].tool_name');
    const snapshot = await api.call('POST', '/v1/snapshot', { body: { tools: Array.from({ length: 20_000 }, () => ({})) } });
    const refused = snapshot.body as Problem;
    expect([snapshot.status, refused.code, refused.context.issues.length]).toEqual([400, 'SNAPSHOT_INVALID', 100]);
    expect(refused.detail).toMatch(/\(checking stopped there: at most 100 issues are listed\)$/);
    const tags = await api.call('PUT', '/v1/tools/tagged', { body: spec('tagged', '1', { tags: Array(5000).fill(1) }) });
    const one = tags.body as Problem;
    expect([tags.status, one.code, one.context.issues.length]).toEqual([400, 'VALIDATION_FAILED', 100]);
    expect(one.detail).toMatch(/; and 4995 more \(the first 100 are listed\)$/);
  });

  it('POST /v1/check takes at most 10,000 specs at once (each gets a result)', async () => {
    // 300,000 `{}`s: 12 s and a 215 MB report of refused results.
    const over = await api.call('POST', '/v1/check', { body: Array.from({ length: 10_001 }, () => ({})) });
    expect([over.status, over.body]).toMatchObject([400, { code: 'BAD_REQUEST', detail: 'the body holds 10001 specs; POST /v1/check takes at most 10000 at once: check them in parts', context: { path: '', limit: 10_000 } }]);
    const at = await api.call('POST', '/v1/check', { body: Array.from({ length: 10_000 }, (_, index) => ({ tool_name: `c${index}`, input_schema: {}, output_schema: {} })) });
    expect([at.status, (at.body as { results: unknown[] }).results.length]).toEqual([200, 10_000]);
  });

  it('/mcp refuses a body nested deeper than 1000 levels before parsing it, and serves one at 1000', async () => {
    // 24 bodies of 500,000 brackets held the server 20 s; 150,000 `1e400`s 1,000 deep ended it out of memory.
    const session = await api.call('POST', '/mcp', { body: initialize, headers: mcpHeaders });
    const id = session.headers.get('mcp-session-id') as string;
    const headers = { ...mcpHeaders, 'content-type': 'application/json', 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' };
    const ping = (depth: number) => api.call('POST', '/mcp', { raw: `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":${nested(depth - 2, '')}}}`, headers });
    const over = await ping(1001);
    expect([over.status, over.body]).toEqual([400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body nests arrays and objects deeper than 1000 levels' } }]);
    const at = await ping(1000);
    expect([at.status, at.body]).toEqual([200, { jsonrpc: '2.0', id: 7, result: {} }]);
    const call = await api.call('POST', '/mcp', { body: { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo', arguments: { a: 1 } } }, headers });
    expect((call.body as { result: { structuredContent: unknown } }).result.structuredContent).toEqual({ keys: 1 });
  });

  it('tool-registry mcp refuses a line nested deeper than 1000 levels with its id, and goes on', async () => {
    const raw = spawnRawStdio(['--tools', join(ROOT, 'test', 'fixtures', 'mcp-edge-tools.mjs'), '--db', join(folder, 'stdio.db'), '--publish'], folder);
    try {
      raw.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":${nested(1000, '')}}}`);
      expect(await raw.reply(1)).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32700, message: 'Parse error: the line nests arrays and objects deeper than 1000 levels' } });
      raw.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
      expect(await raw.reply(2)).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    } finally {
      raw.child.kill();
    }
  });
});

/** A seeded generator (Park-Miller): the same sequence on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 48_271) % 2_147_483_647) / 2_147_483_647;
}

/** A word of `length` Hangul syllables picked by `next`. */
function hangul(next: () => number, length: number): string {
  let word = '';
  for (let index = 0; index < length; index++) word += String.fromCharCode(0xac00 + Math.floor(next() * 11172));
  return word;
}

describe('schemas whose $refs go on for long', () => {
  it('compares, diffs and lints a chain of 5,000 $refs (they overflowed the stack: 500)', async () => {
    // The ends differ: the walk follows the chain (the same chain is equivalent, below).
    const chain = (description: string) => ({
      type: 'object',
      description,
      $defs: Object.fromEntries(Array.from({ length: 5_000 }, (_, index) => [`d${index}`, index === 4_999 ? { type: 'string', description } : { $ref: `#/$defs/d${index + 1}` }])),
      properties: { x: { $ref: '#/$defs/d0' } },
    });
    expect((await api.call('PUT', '/v1/tools/chain', { body: spec('chain', '1', { input_schema: chain('one') }) })).status).toBe(201);
    const check = await api.call('POST', '/v1/check', { body: spec('chain', '2', { input_schema: chain('two') }) });
    expect(check.status).toBe(200);
    // Past 64 refs followed at once the comparison cannot tell: said, never a 500.
    expect((check.body as { results: { differences: { type: string }[] }[] }).results[0]?.differences.map((difference) => difference.type)).toContain('ref-unresolved');
    expect((await api.call('PUT', '/v1/tools/chain', { body: spec('chain', '2', { input_schema: chain('two') }) })).status).toBe(200);
    expect((await api.call('GET', '/v1/tools/chain/diff?from=1&to=2')).status).toBe(200);
    const lint = await api.call('GET', '/v1/lint?provider=anthropic&provider=openai&provider=gemini&provider=mcp&strict=true');
    expect(lint.status).toBe(200);
    expect((lint.body as { findings: { tool_name: string; rule: string }[] }).findings.filter((finding) => finding.tool_name === 'chain').length).toBeGreaterThan(0);
  });
});

describe('verdicts whose size is bounded', () => {
  const values = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => `${prefix}${index}`);
  type Difference = { type: string; path: string; before: unknown; after: unknown; breaking: unknown; omitted?: number };

  it('a diff or a check names 100 values of an enum place per type and verdict and counts the rest (90,000 were a 21 MB answer)', async () => {
    const enumSpec = (version: string, list: string[]) => spec('picks', version, { input_schema: { type: 'object', properties: { pick: { enum: list } } } });
    expect((await api.call('PUT', '/v1/tools/picks', { body: enumSpec('1', values('v', 5_000)) })).status).toBe(201);
    expect((await api.call('PUT', '/v1/tools/picks', { body: enumSpec('2', values('w', 5_000)) })).status).toBe(200);
    const diff = await api.call('GET', '/v1/tools/picks/diff?from=1&to=2');
    const body = diff.body as { compatible: boolean; differences: Difference[] };
    expect([diff.status, body.compatible, body.differences.length]).toEqual([200, false, 202]);
    const path = '/input_schema/properties/pick/enum';
    expect(body.differences.filter((difference) => difference.omitted !== undefined)).toEqual([
      { type: 'enum-value-removed', path, before: null, after: null, breaking: true, omitted: 4_900 },
      { type: 'enum-value-added', path, before: null, after: null, breaking: false, omitted: 4_900 },
    ]);
    expect(diff.text.length).toBeLessThan(30_000);
    const check = await api.call('POST', '/v1/check', { body: enumSpec('3', values('x', 5_000)) });
    const result = (check.body as { results: { differences: Difference[] }[] }).results[0];
    expect([check.status, result?.differences.length, result?.differences[100]]).toEqual([200, 202, { type: 'enum-value-removed', path, before: null, after: null, breaking: true, omitted: 4_900 }]);
  });

  it('a check of 10,000 properties each starting a chain of 10,000 $refs judges each pair of refs once: the same chain is equivalent', async () => {
    // Each property walked 64 refs of its chain (15,000 of them: 2.8 s a check) and the verdict was undecidable.
    const chains = (description: string) => ({
      type: 'object',
      description,
      $defs: Object.fromEntries(Array.from({ length: 10_000 }, (_, index) => [`d${index}`, index === 9_999 ? { type: 'string' } : { $ref: `#/$defs/d${index + 1}` }])),
      properties: Object.fromEntries(Array.from({ length: 10_000 }, (_, index) => [`p${index}`, { $ref: `#/$defs/d${index}` }])),
    });
    expect((await api.call('PUT', '/v1/tools/chains', { body: spec('chains', '1', { input_schema: chains('one') }) })).status).toBe(201);
    const check = await api.call('POST', '/v1/check', { body: spec('chains', '2', { input_schema: chains('two') }) });
    const result = (check.body as { results: { action: string; differences: Difference[] }[] }).results[0];
    expect([check.status, result?.action, result?.differences]).toEqual([200, 'update', [{ type: 'annotation-changed', path: '/input_schema/description', before: 'one', after: 'two', breaking: false }]]);
  });
});

describe('small requests that were a 500', () => {
  it('refuses a deprecation message holding U+0000 (SQLite counted "\\u0000" as empty: a 500; PostgreSQL text cannot hold it)', async () => {
    expect((await api.call('PUT', '/v1/tools/nul', { body: spec('nul') })).status).toBe(201);
    for (const message of ['\u0000', 'a\u0000b']) {
      const reply = await api.call('POST', '/v1/tools/nul/deprecate', { body: { message } });
      expect([reply.status, reply.body]).toMatchObject([400, { code: 'VALIDATION_FAILED', context: { path: 'message' } }]);
      expect((reply.body as { detail: string }).detail).toContain('must not contain U+0000 (NUL)');
    }
  });
});

describe('answers longer than the longest string', () => {
  it('streams a snapshot, a history and the agent list whose JSON text is past V8\'s longest string (a RangeError: 500), the same bytes', async () => {
    // V8's longest string is about 512 MiB (buffer.constants.MAX_STRING_LENGTH): here JSON.stringify throws as V8 does, past 1,000 characters.
    const longest = 1000;
    expect((await api.call('PUT', '/v1/namespaces/long')).status).toBe(201);
    const specs = Array.from({ length: 20 }, (_, index) => spec(`long_${index}`, '1', { description: 'd'.repeat(100), tags: ['é', '"'] }));
    // One tool longer than the limit itself: written member by member, down to its schema's properties.
    const properties = Object.fromEntries(Array.from({ length: 40 }, (_, index) => [`p${index}`, { type: 'string', description: 'p'.repeat(20) }]));
    specs.push(spec('long_wide', '1', { input_schema: { type: 'object', properties, required: [] } }));
    expect((await api.call('POST', '/v1/namespaces/long/tools', { body: specs })).status).toBe(200);
    for (let version = 2; version <= 4; version++) expect((await api.call('PUT', '/v1/namespaces/long/tools/long_0', { body: spec('long_0', String(version), { description: 'd'.repeat(100) }) })).status).toBe(200);
    const paths = ['/v1/namespaces/long/snapshot', '/v1/namespaces/long/tools/long_0/history', '/v1/namespaces/long/agent/tools?include_disabled=true'];
    const whole = await Promise.all(paths.map((path) => api.call('GET', path)));
    expect(whole.map((reply) => [reply.status, reply.text.length > longest])).toEqual(paths.map(() => [200, true]));
    const stringify = JSON.stringify;
    const limited = vi.spyOn(JSON, 'stringify').mockImplementation((...args: Parameters<typeof JSON.stringify>) => {
      const text = stringify(...args);
      if (typeof text === 'string' && text.length > longest) throw new RangeError('Invalid string length');
      return text;
    });
    try {
      const streamed = await Promise.all(paths.map((path) => api.call('GET', path)));
      expect(streamed.map((reply) => reply.status)).toEqual([200, 200, 200]);
      expect(streamed.map((reply) => reply.text)).toEqual(whole.map((reply) => reply.text));
      expect(limited).toHaveBeenCalled();
    } finally {
      limited.mockRestore();
    }
  });
});

describe('lint of hostile schemas', () => {
  it('lists at most 100 findings per tool and provider, then one counting the rest', async () => {
    // 30 tools of 5,000 if/then/else (500 KB each) made GET /v1/lint take 30 s and 2.3 GB, then a 500.
    const input_schema = { type: 'object', allOf: Array.from({ length: 2000 }, (_, index) => ({ if: { properties: { a: { const: index } } }, then: { required: [`b${index}`] } })) };
    expect((await api.call('PUT', '/v1/tools/branchy', { body: spec('branchy', '1', { input_schema }) })).status).toBe(201);
    const lint = await api.call('GET', '/v1/lint?provider=openai&provider=anthropic&strict=true');
    const findings = (lint.body as { findings: { tool_name: string; provider: string; rule: string; severity: string; message: string }[] }).findings.filter((finding) => finding.tool_name === 'branchy');
    for (const provider of ['openai', 'anthropic']) {
      const mine = findings.filter((finding) => finding.provider === provider);
      expect([provider, mine.length]).toEqual([provider, 101]);
      expect(mine.at(-1)).toMatchObject({ rule: 'more-findings', severity: 'error', message: expect.stringMatching(/^\d+ more findings of this tool for this provider are not listed \(at most 100 are\)$/) });
    }
    // Remembered per registration: the same answer again.
    expect((await api.call('GET', '/v1/lint?provider=openai&provider=anthropic&strict=true')).text).toBe(lint.text);
  });
});

/**
 * Puts a tool `name` with `description`, then searches `query` (the index is built then): the
 * tools found, and how many times ICU's segmenter was called meanwhile.
 */
async function firstSearch(name: string, description: string, query: string): Promise<{ found: string[]; segmentCalls: number }> {
  const put = await api.call('PUT', `/v1/tools/${name}`, { body: spec(name, '1', { description }) });
  expect(put.status).toBe(201);
  const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
  try {
    const found = await api.call('GET', `/v1/tools?q=${encodeURIComponent(query)}`);
    expect(found.status).toBe(200);
    return { found: (found.body as { tools: { spec: { tool_name: string } }[] }).tools.map((tool) => tool.spec.tool_name), segmentCalls: segment.mock.calls.length };
  } finally {
    segment.mockRestore();
  }
}

describe('search over Korean text', () => {
  it('indexes a description of 20,000 Korean words without asking ICU once per word', async () => {
    // ICU's Korean break engine cost ~140 µs a call: a 1 MB description of short Korean words
    // held the first search after it (the index is built then) for 15 s.
    const next = random(7);
    const words = Array.from({ length: 20_000 }, () => hangul(next, 2));
    const { found, segmentCalls } = await firstSearch('korean', `데이터베이스를 ${words.join(' ')}`, '데이터베이스');
    expect(found).toEqual(['korean']);
    expect(segmentCalls).toBeLessThan(100);
  });

  it('cuts a run of Hangul syllables exactly as ICU does', () => {
    // The shortcut keeps such a run whole (pieces of 256, as every long run is cut): ICU has no
    // Korean dictionary, so it never cut one either.
    const segmenter = new Intl.Segmenter('und', { granularity: 'word' });
    const next = random(11);
    for (let round = 0; round < 500; round++) {
      const word = hangul(next, 1 + Math.floor(next() * 256));
      const icu = [...segmenter.segment(word)].filter((part) => part.isWordLike === true).map((part) => part.segment);
      expect(tokenize(word, { stemming: false, stopWords: false })).toEqual(icu);
    }
    const long = hangul(next, 600);
    expect(tokenize(long, { stemming: false, stopWords: false })).toEqual([long.slice(0, 256), long.slice(256, 512), long.slice(512)]);
  });
});

describe('search over Thai, Han and Katakana text', () => {
  /** A word of `length` characters of the ranges, picked by `next`, in NFKC (Thai's SARA AM is two characters there). */
  const word = (next: () => number, ranges: readonly (readonly [number, number])[], length: number): string => {
    let text = '';
    for (let index = 0; index < length; index++) {
      const [low, high] = ranges[Math.floor(next() * ranges.length)] as readonly [number, number];
      text += String.fromCodePoint(low + Math.floor(next() * (high - low + 1)));
    }
    return text.normalize('NFKC');
  };
  const THAI: [number, number] = [0x0e01, 0x0e2e];
  const HAN: [number, number] = [0x4e00, 0x9fa5];
  const KATAKANA: [number, number] = [0x30a1, 0x30fa];

  it('indexes a description of 20,000 short words with a few hundred ICU calls, not one a word', async () => {
    // ICU costs ~10 µs a call whatever the length: a 900 KB description of short words held the first search 1.8-2.5 s.
    const next = random(5);
    const words = Array.from({ length: 20_000 }, (_, index) => word(next, [[THAI, HAN, KATAKANA][index % 3] as [number, number]], 2 + Math.floor(next() * 3)));
    const { found, segmentCalls } = await firstSearch('unspaced', `ภาษาไทย 東京の天気 ${words.join(' ')}`, '天気');
    expect(found).toEqual(['unspaced']);
    // One call a word before (20,003).
    expect(segmentCalls).toBeLessThan(1_000);
  });

  it('cuts every word as ICU cuts it alone, in the order of the text, with and without identifiers', () => {
    // The words are cut many at a time (joined by newlines): the cuts and their order must be
    // those of one ICU call per word, as they were. The reference is that: each word of the
    // text (as tokenize finds words) given to ICU alone; a long run (over 256) or one of
    // Hangul alone as tokenize cuts it by itself.
    const segmenter = new Intl.Segmenter('und', { granularity: 'word' });
    const unspaced = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}]/u;
    const options = { stemming: false, stopWords: false } as const;
    const alone = (each: string, identifiers: boolean): string[] => {
      if (each.length > 256 || /^[가-힣]+$/.test(each)) return tokenize(each, { ...options, identifiers });
      if (!unspaced.test(each)) return [foldCase(each)];
      return [...segmenter.segment(each)].filter((part) => part.isWordLike === true).map((part) => foldCase(part.segment));
    };
    const scripts: (readonly [number, number])[][] = [
      [THAI, [0x0e30, 0x0e3a], [0x0e40, 0x0e4e]], // Thai with its vowels, tone marks and digits
      [[0x0e81, 0x0eb0], [0x0eb1, 0x0ebc], [0x0ec0, 0x0ed9]], // Lao
      [[0x1780, 0x17b3], [0x17b6, 0x17d3], [0x17e0, 0x17e9]], // Khmer
      [[0x1000, 0x102a], [0x102b, 0x103e], [0x1040, 0x1049]], // Myanmar
      [HAN, [0x3041, 0x3096], KATAKANA, [0x30fc, 0x30fc]], // Japanese: kanji, kana, the prolonged sound mark
      [HAN], // Chinese
      [HAN, [0xac00, 0xd7a3]], // Han and Hangul in one word
      [THAI, HAN, KATAKANA, [0x41, 0x5a], [0x61, 0x7a], [0x30, 0x39]], // mixed with Latin and digits
    ];
    const next = random(13);
    for (let round = 0; round < 60; round++) {
      const ranges = scripts[round % scripts.length] as (readonly [number, number])[];
      const pieces = Array.from({ length: 400 }, () => word(next, ranges, next() < 0.02 ? 257 + Math.floor(next() * 300) : 1 + Math.floor(next() * 8)));
      // Some Hangul alone and some Latin words, kept apart from the batches.
      pieces.push(word(next, [[0xac00, 0xd7a3]], 3), 'Search', word(next, ranges, 5));
      const separators = [' ', '_', '.', '-', '、', '。', '\n', ', '];
      const text = pieces.map((piece, index) => (index === 0 ? piece : `${separators[Math.floor(next() * separators.length)] as string}${piece}`)).join('');
      const plain = [...text.matchAll(/[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu)].flatMap((match) => alone(match[0], false));
      expect(tokenize(text, { ...options, identifiers: false })).toEqual(plain);
    }
    // With identifiers (words joined by `_ . -` are split there, then camelCase): words of letters and marks alone, which have no case.
    for (let round = 0; round < 40; round++) {
      const ranges = (scripts[round % 6] as (readonly [number, number])[]).filter(([low]) => low !== 0x0e40 && low !== 0x0ec0 && low !== 0x17e0 && low !== 0x1040);
      const pieces = Array.from({ length: 400 }, () => word(next, ranges, 1 + Math.floor(next() * 8)));
      const text = pieces.map((piece, index) => (index === 0 ? piece : `${['_', ' ', '.', '-'][Math.floor(next() * 4)] as string}${piece}`)).join('');
      const expected = [...text.matchAll(/[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu)].flatMap((match) => alone(match[0], true));
      expect(tokenize(text, options)).toEqual(expected);
    }
  });
});
