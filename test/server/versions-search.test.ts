// The routes of issues 26 and 27 over a real socket: GET /v1/tools?q= (search with scores and
// pages, tags, disabled tools), the keyset listing, deprecate/undeprecate, diff, check, the
// version policies' 409s (COMPATIBILITY_FAILED with its differences, VERSION_DOWNGRADE, a
// rollback with allow_downgrade), scopes, the namespaced copies, and every response held to
// the OpenAPI document.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, diffVersions } from '../../src/index.js';
import { PROBLEM_STATUS, createToken, tokenFileVerifier } from '../../src/server/index.js';
import { documentChecker, recorded, recordThisFile, spec, start } from './helpers.js';
import type { Reply, Running } from './helpers.js';

recordThisFile();

const folder = mkdtempSync(join(tmpdir(), 'tool-registry-routes-'));
const main = new InMemoryToolRegistry();
const teamA = new InMemoryToolRegistry();
const secrets: Record<string, string> = {};
let api: Running;

type Page = { tools: { spec: { tool_name: string } }[]; scores?: number[]; next_cursor: string | null };

const described = (name: string, description: string, tags: string[] = [], version = '1') => spec(name, version, { description, tags });

beforeAll(async () => {
  const file = join(folder, 'tokens.json');
  for (const [name, scopes, namespaces] of [
    ['rw', ['read', 'write'], []],
    ['reader', ['read'], []],
    ['writer', ['write'], []],
    ['team_a', ['read', 'write'], ['team_a']],
  ] as const) {
    secrets[name] = (await createToken(file, { name, scopes: [...scopes], namespaces: [...namespaces] })).secret;
  }
  api = await start({ registries: { default: main, team_a: teamA }, tokens: tokenFileVerifier(file) });
  await main.registerMany([
    described('get_weather', 'Current weather for a city: temperature and wind', ['geo', 'http']),
    described('weather_forecast', 'Weather forecast for the next days in a city', ['geo']),
    described('convert_currency', 'Convert an amount between currencies', ['finance']),
    described('send_email', 'Send an email message', ['mail']),
    described('old_weather', 'Historical weather archive', ['geo']),
  ]);
  await main.setEnabled('old_weather', false);
  await teamA.register(described('team_weather', 'Weather for the team'));
});

afterAll(async () => {
  await api?.close();
  rmSync(folder, { recursive: true, force: true });
});

const rw = () => secrets.rw as string;
const names = (reply: Reply) => (reply.body as Page).tools.map((t) => t.spec.tool_name);

function expectProblem(reply: Reply, code: string, status: number): Record<string, unknown> {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.headers.get('content-type')).toBe('application/problem+json');
  const body = reply.body as Record<string, unknown>;
  expect(body).toMatchObject({ code, status, title: PROBLEM_STATUS[code]?.title });
  return body;
}

describe('GET /v1/tools?q= (search) and the keyset listing', () => {
  it("answers the registry's search(): the same tools, order and scores, as { tools, scores, next_cursor }", async () => {
    const reply = await api.call('GET', '/v1/tools?q=weather%20city', { token: rw() });
    expect(reply.status).toBe(200);
    const body = reply.body as Page;
    const library = await main.search('weather city');
    expect(body.tools).toEqual(library.results.map((r) => r.registration));
    expect(body.scores).toEqual(library.results.map((r) => r.score));
    expect(names(reply).slice(0, 2).sort()).toEqual(['get_weather', 'weather_forecast']);
    expect(names(reply)).not.toContain('old_weather'); // disabled
    expect(body.scores?.every((score, i) => i === 0 || score <= (body.scores?.[i - 1] as number))).toBe(true);
    expect(body.next_cursor).toBeNull();
    expect((await api.call('GET', '/v1/tools?q=xylophone', { token: rw() })).body).toEqual({ tools: [], scores: [], next_cursor: null });
  });

  it('with tag (all must match), include_disabled, limit and cursor pages that add up to one long page', async () => {
    expect(names(await api.call('GET', '/v1/tools?q=weather&tag=geo&tag=http', { token: rw() }))).toEqual(['get_weather']);
    expect(names(await api.call('GET', '/v1/tools?q=weather&include_disabled=true', { token: rw() }))).toContain('old_weather');
    const whole = names(await api.call('GET', '/v1/tools?q=weather&include_disabled=true&limit=1000', { token: rw() }));
    expect(whole).toHaveLength(3);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Reply = await api.call('GET', `/v1/tools?q=weather&include_disabled=true&limit=1${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, { token: rw() });
      expect((page.body as Page).tools).toHaveLength(1);
      paged.push(...names(page));
      cursor = (page.body as Page).next_cursor;
    } while (cursor !== null);
    expect(paged).toEqual(whole);
    expect((await api.call('GET', '/v1/tools?q=weather&limit=0', { token: rw() })).body).toEqual({ tools: [], scores: [], next_cursor: null });
    const bad = expectProblem(await api.call('GET', '/v1/tools?q=weather&cursor=not-ours', { token: rw() }), 'BAD_REQUEST', 400);
    expect(bad.context).toEqual({ parameter: 'cursor' });
    // limit=0 is an empty page, but not a way past the cursor check (nor a search cursor good for the listing).
    const searchCursor = encodeURIComponent(((await api.call('GET', '/v1/tools?q=weather&limit=1', { token: rw() })).body as Page).next_cursor ?? '');
    for (const query of ['q=weather&limit=0&cursor=not-ours', 'limit=0&cursor=not-ours', `limit=0&cursor=${searchCursor}`]) {
      expect(expectProblem(await api.call('GET', `/v1/tools?${query}`, { token: rw() }), 'BAD_REQUEST', 400).context).toEqual({ parameter: 'cursor' });
    }
    expect((await api.call('GET', `/v1/tools?q=weather&limit=0&cursor=${searchCursor}`, { token: rw() })).body).toEqual({ tools: [], scores: [], next_cursor: null });
    // q is at most 1,000 characters; the 400 names it and quotes a beginning of it, not all 5,000.
    const long = expectProblem(await api.call('GET', `/v1/tools?q=${'w'.repeat(5000)}`, { token: rw() }), 'BAD_REQUEST', 400);
    const detail = long.detail as string;
    expect([(long.context as { parameter: string }).parameter, detail.length < 300, detail]).toEqual(['q', true, expect.stringContaining('(5000 characters)')]);
  });

  it('without q: listPage keyset pages by name, no scores, stable while a tool is added between pages', async () => {
    const first = await api.call('GET', '/v1/tools?limit=2', { token: rw() });
    expect(Object.keys(first.body as object)).toEqual(['tools', 'next_cursor']);
    expect(names(first)).toEqual(['convert_currency', 'get_weather']);
    await main.register(described('a_new_tool', 'Added between pages'));
    const rest: string[] = [];
    let cursor = (first.body as Page).next_cursor;
    while (cursor !== null) {
      const page: Reply = await api.call('GET', `/v1/tools?limit=2&cursor=${encodeURIComponent(cursor)}`, { token: rw() });
      rest.push(...names(page));
      cursor = (page.body as Page).next_cursor;
    }
    expect(rest).toEqual(['send_email', 'weather_forecast']);
    await main.remove('a_new_tool');
    expectProblem(await api.call('GET', '/v1/tools?cursor=%%%', { token: rw() }), 'BAD_REQUEST', 400);
  });

  it('under /v1/namespaces/{ns}: that namespace only; a read token may search, a write-only token may not', async () => {
    expect(names(await api.call('GET', '/v1/namespaces/team_a/tools?q=weather', { token: secrets.team_a }))).toEqual(['team_weather']);
    expect(names(await api.call('GET', '/v1/namespaces/default/tools?q=weather&tag=http', { token: rw() }))).toEqual(['get_weather']);
    expectProblem(await api.call('GET', '/v1/tools?q=weather', { token: secrets.team_a }), 'NAMESPACE_NOT_FOUND', 404);
    expect((await api.call('GET', '/v1/tools?q=weather', { token: secrets.reader })).status).toBe(200);
    expectProblem(await api.call('GET', '/v1/tools?q=weather', { token: secrets.writer }), 'FORBIDDEN', 403);
    expectProblem(await api.call('GET', '/v1/tools?q=weather'), 'UNAUTHORIZED', 401);
  });

  it("a cursor is only good in the namespace that gave it out: another namespace's page is a 400 naming cursor", async () => {
    // Regression: a search cursor of `default` was taken by team_a (same q: the cursor's key is the
    // query and filters), which answered a page of its own tools ranked with default's statistics.
    await teamA.register(described('team_weather_two', 'Weather for the second team'));
    try {
      const fromDefault = (await api.call('GET', '/v1/tools?q=weather&limit=1', { token: rw() })).body as Page;
      const fromTeam = (await api.call('GET', '/v1/namespaces/team_a/tools?q=weather&limit=1', { token: rw() })).body as Page;
      const listCursor = ((await api.call('GET', '/v1/tools?limit=1', { token: rw() })).body as Page).next_cursor;
      for (const [path, cursor] of [
        ['/v1/namespaces/team_a/tools?q=weather&limit=1', fromDefault.next_cursor],
        ['/v1/namespaces/team_a/tools?q=weather&limit=0', fromDefault.next_cursor],
        ['/v1/tools?q=weather&limit=1', fromTeam.next_cursor],
        ['/v1/namespaces/team_a/tools?limit=1', listCursor],
      ] as const) {
        const problem = expectProblem(await api.call('GET', `${path}&cursor=${encodeURIComponent(cursor ?? '')}`, { token: rw() }), 'BAD_REQUEST', 400);
        expect(problem.context).toEqual({ parameter: 'cursor' });
      }
      // Its own namespace, under either address of `default`, takes it.
      expect(names(await api.call('GET', `/v1/namespaces/default/tools?q=weather&limit=1&cursor=${encodeURIComponent(fromDefault.next_cursor ?? '')}`, { token: rw() }))).toEqual(['weather_forecast']);
      expect(names(await api.call('GET', `/v1/namespaces/team_a/tools?q=weather&limit=1&cursor=${encodeURIComponent(fromTeam.next_cursor ?? '')}`, { token: rw() }))).toHaveLength(1);
    } finally {
      await teamA.remove('team_weather_two');
    }
  });
});

describe('deprecate and undeprecate', () => {
  it('sets the deprecation (GET and the change feed show it), lifts it; expected_version, 404, 400', async () => {
    const { revision } = await main.changes({ limit: 0 });
    const body = { message: 'Use weather_forecast', replacement: 'weather_forecast', sunset: '2030-01-01' };
    const reply = await api.call('POST', '/v1/tools/get_weather/deprecate?expected_version=1', { body, token: rw() });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ spec: { tool_name: 'get_weather' }, deprecation: body });
    expect((await api.call('GET', '/v1/tools/get_weather', { token: rw() })).body).toMatchObject({ deprecation: body });
    expect((await main.get('get_weather'))?.deprecation).toEqual(body);
    const minimal = await api.call('POST', '/v1/tools/send_email/deprecate', { body: { message: 'going away' }, token: rw() });
    expect((minimal.body as { deprecation: unknown }).deprecation).toEqual({ message: 'going away', replacement: null, sunset: null });
    expectProblem(await api.call('POST', '/v1/tools/get_weather/undeprecate?expected_version=7', { token: rw() }), 'PRECONDITION_FAILED', 412);
    expectProblem(await api.call('POST', '/v1/tools/get_weather/deprecate?expected_version=7', { body, token: rw() }), 'PRECONDITION_FAILED', 412);
    expectProblem(await api.call('POST', '/v1/tools/missing/deprecate', { body, token: rw() }), 'TOOL_NOT_FOUND', 404);
    expectProblem(await api.call('POST', '/v1/tools/missing/undeprecate', { token: rw() }), 'TOOL_NOT_FOUND', 404);
    const invalid = expectProblem(await api.call('POST', '/v1/tools/get_weather/deprecate', { body: { message: '', sunset: 'soon' }, token: rw() }), 'VALIDATION_FAILED', 400);
    expect((invalid.issues as { path: string }[]).map((issue) => issue.path).sort()).toEqual(['message', 'sunset']);
    expectProblem(await api.call('POST', '/v1/tools/get_weather/deprecate', { body: { message: 'x', extra: 1 }, token: rw() }), 'VALIDATION_FAILED', 400);
    const lifted = await api.call('POST', '/v1/tools/get_weather/undeprecate', { token: rw() });
    expect((lifted.body as { deprecation: unknown }).deprecation).toBeNull();
    const again = await api.call('POST', '/v1/tools/get_weather/undeprecate', { token: rw() });
    expect(again.body).toEqual(lifted.body);
    await api.call('POST', '/v1/tools/send_email/undeprecate', { token: rw() });
    const feed = (await api.call('GET', `/v1/changes?since=${revision}`, { token: rw() })).body as { events: { tool_name: string; action: string }[] };
    expect(feed.events.map((e) => `${e.tool_name} ${e.action}`)).toEqual([
      'get_weather deprecated',
      'send_email deprecated',
      'get_weather undeprecated',
      'send_email undeprecated',
    ]);
  });

  it('needs write (a read token: 403); under a namespace it deprecates that namespace only', async () => {
    expectProblem(await api.call('POST', '/v1/tools/get_weather/deprecate', { body: { message: 'x' }, token: secrets.reader }), 'FORBIDDEN', 403);
    expectProblem(await api.call('POST', '/v1/tools/get_weather/undeprecate', { token: secrets.reader }), 'FORBIDDEN', 403);
    const token = secrets.team_a;
    const reply = await api.call('POST', '/v1/namespaces/team_a/tools/team_weather/deprecate', { body: { message: 'team only' }, token });
    expect(reply.status).toBe(200);
    expect((await teamA.get('team_weather'))?.deprecation?.message).toBe('team only');
    expect((await main.get('get_weather'))?.deprecation).toBeNull();
    expect(((await api.call('POST', '/v1/namespaces/team_a/tools/team_weather/undeprecate', { token })).body as { deprecation: unknown }).deprecation).toBeNull();
    expectProblem(await api.call('POST', '/v1/tools/get_weather/deprecate', { body: { message: 'x' }, token }), 'NAMESPACE_NOT_FOUND', 404);
  });
});

describe('diff, check and the version policies', () => {
  const geo = (version: string, required: string[] = [], extra: Record<string, unknown> = {}) =>
    spec('geocode', version, { input_schema: { type: 'object', properties: { city: { type: 'string' }, country: { type: 'string' } }, required }, ...extra });

  it("GET /v1/tools/{name}/diff answers diffVersions(): default the last change, from/to, 404 for an unknown tool or version", async () => {
    await api.call('PUT', '/v1/tools/geocode', { body: geo('1.0.0'), token: rw() });
    await api.call('PUT', '/v1/tools/geocode', { body: geo('1.1.0', ['country']), token: rw() });
    await api.call('PUT', '/v1/tools/geocode', { body: geo('1.2.0', ['country'], { description: 'same schemas' }), token: rw() });
    const latest = await api.call('GET', '/v1/tools/geocode/diff', { token: secrets.reader });
    expect(latest.status).toBe(200);
    expect(latest.body).toMatchObject({ tool_name: 'geocode', from: { version: '1.1.0' }, to: { version: '1.2.0' }, compatible: true, differences: [] });
    const breaking = await api.call('GET', '/v1/tools/geocode/diff?from=1.0.0&to=1.1.0', { token: rw() });
    expect(breaking.body).toMatchObject({ compatible: false, differences: [expect.objectContaining({ path: expect.stringContaining('required'), breaking: true })] });
    expect(breaking.body).toEqual(JSON.parse(JSON.stringify(await diffVersions(main, 'geocode', { from: '1.0.0', to: '1.1.0' }))));
    const unknownVersion = expectProblem(await api.call('GET', '/v1/tools/geocode/diff?from=9.9.9', { token: rw() }), 'TOOL_NOT_FOUND', 404);
    expect(unknownVersion.context).toEqual({ tool_name: 'geocode', version: '9.9.9' });
    expectProblem(await api.call('GET', '/v1/tools/missing/diff', { token: rw() }), 'TOOL_NOT_FOUND', 404);
    expectProblem(await api.call('GET', '/v1/tools/geocode/diff?since=1', { token: rw() }), 'BAD_REQUEST', 400);
    expectProblem(await api.call('GET', '/v1/tools/geocode/diff', { token: secrets.writer }), 'FORBIDDEN', 403);
  });

  it("compatibility 'backward': PUT and POST /v1/tools answer 409 COMPATIBILITY_FAILED with the differences; POST /v1/check reports it, changing nothing", async () => {
    await main.setPolicy({ compatibility: 'backward' });
    try {
      const refused = expectProblem(await api.call('PUT', '/v1/tools/geocode', { body: geo('1.3.0', ['country', 'city']), token: rw() }), 'COMPATIBILITY_FAILED', 409);
      const differences = (refused.context as { differences: { path: string; breaking: unknown }[] }).differences;
      expect(differences).toEqual([expect.objectContaining({ breaking: true, path: expect.stringContaining('required') })]);
      expectProblem(await api.call('POST', '/v1/tools', { body: [geo('1.3.0', ['country', 'city'])], token: rw() }), 'COMPATIBILITY_FAILED', 409);
      expect((await main.get('geocode'))?.spec.version).toBe('1.2.0');

      const { revision } = await main.changes({ limit: 0 });
      const check = await api.call('POST', '/v1/check', { body: [geo('1.3.0', ['country', 'city']), geo('1.3.0'), { tool_name: 'broken' }], token: secrets.reader });
      expect(check.status).toBe(200);
      const report = check.body as { ok: boolean; results: { action: string; path: string; error?: { code: string; context: Record<string, unknown> } }[] };
      expect(report.ok).toBe(false);
      expect(report.results.map((r) => [r.path, r.action, r.error?.code])).toEqual([
        ['[0]', 'refused', 'COMPATIBILITY_FAILED'],
        ['[1]', 'refused', 'DUPLICATE_TOOL'],
        ['[2]', 'refused', 'VALIDATION_FAILED'],
      ]);
      expect(report.results[0]?.error?.context.differences).toEqual(differences);
      const one = await api.call('POST', '/v1/check', { body: geo('1.3.0', [], { description: 'optional stays optional' }), token: rw() });
      expect(one.body).toMatchObject({ ok: true, results: [{ tool_name: 'geocode', path: '', action: 'update', from_version: '1.2.0', to_version: '1.3.0' }] });
      expect((await main.changes({ limit: 0 })).revision).toBe(revision);
      expectProblem(await api.call('POST', '/v1/check', { body: geo('1.3.0'), token: secrets.writer }), 'FORBIDDEN', 403);
      expectProblem(await api.call('POST', '/v1/check', { raw: '{', headers: { 'content-type': 'application/json' }, token: rw() }), 'VALIDATION_FAILED', 400);
    } finally {
      await main.setPolicy({ compatibility: 'none' });
    }
  });

  it("versionOrder 'semver': a lower version is 409 VERSION_DOWNGRADE; allow_downgrade=true rolls back (event rollback: true); check agrees", async () => {
    await main.setPolicy({ versionOrder: 'semver' });
    try {
      const down = expectProblem(await api.call('PUT', '/v1/tools/geocode', { body: geo('1.0.0'), token: rw() }), 'VERSION_DOWNGRADE', 409);
      expect(down.context).toMatchObject({ tool_name: 'geocode' });
      expectProblem(await api.call('POST', '/v1/tools', { body: [geo('1.0.0')], token: rw() }), 'VERSION_DOWNGRADE', 409);
      const checked = (await api.call('POST', '/v1/check', { body: geo('1.0.0'), token: rw() })).body as { ok: boolean; results: { error?: { code: string } }[] };
      expect([checked.ok, checked.results[0]?.error?.code]).toEqual([false, 'VERSION_DOWNGRADE']);
      expect((await api.call('POST', '/v1/check?allow_downgrade=true', { body: geo('1.0.0'), token: rw() })).body).toMatchObject({ ok: true, results: [{ action: 'update', rollback: true }] });
      const { revision } = await main.changes({ limit: 0 });
      const rolled = await api.call('PUT', '/v1/tools/geocode?allow_downgrade=true', { body: geo('1.0.0'), token: rw() });
      expect(rolled.status).toBe(200);
      expect(rolled.body).toMatchObject({ action: 'updated', spec: { version: '1.0.0' } });
      const feed = (await api.call('GET', `/v1/changes?since=${revision}`, { token: rw() })).body as { events: unknown[] };
      expect(feed.events).toEqual([expect.objectContaining({ tool_name: 'geocode', action: 'updated', version: '1.0.0', rollback: true })]);
      expectProblem(await api.call('PUT', '/v1/tools/geocode?allow_downgrade=perhaps', { body: geo('1.0.0'), token: rw() }), 'BAD_REQUEST', 400);
    } finally {
      await main.setPolicy({ versionOrder: 'any' });
    }
  });

  it('under a namespace: its own policy and history', async () => {
    const token = secrets.team_a;
    await teamA.setPolicy({ compatibility: 'backward' });
    await api.call('PUT', '/v1/namespaces/team_a/tools/geocode', { body: geo('1'), token });
    expectProblem(await api.call('PUT', '/v1/namespaces/team_a/tools/geocode', { body: geo('2', ['city']), token }), 'COMPATIBILITY_FAILED', 409);
    expect(((await api.call('POST', '/v1/namespaces/team_a/check', { body: geo('2', ['city']), token })).body as { ok: boolean }).ok).toBe(false);
    expect(((await api.call('POST', '/v1/check', { body: geo('2', ['city']), token: rw() })).body as { ok: boolean }).ok).toBe(true); // default: no policy
    expectProblem(await api.call('GET', '/v1/namespaces/team_a/tools/geocode/diff', { token }), 'TOOL_NOT_FOUND', 404); // one spec: nothing before it
    expect((await api.call('GET', '/v1/namespaces/team_a/tools/geocode/diff?from=1&to=1', { token })).body).toMatchObject({ compatible: true, differences: [] });
  });
});

describe('the OpenAPI document', () => {
  it('documents the new routes (both prefixes), their 409s and the registration’s deprecation; every response here matches it', async () => {
    const document = api.server.openapi();
    const result = await new Validator().validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    const paths = document.paths as Record<string, Record<string, { responses: Record<string, { description: string }>; parameters?: { name: string }[] }>>;
    for (const path of ['/v1/tools/{name}/deprecate', '/v1/tools/{name}/undeprecate', '/v1/check']) {
      expect(paths[path]?.post, path).toBeDefined();
      expect(paths[path.replace('/v1', '/v1/namespaces/{ns}')]?.post, path).toBeDefined();
    }
    expect(paths['/v1/tools/{name}/diff']?.get?.responses['404']).toBeDefined();
    expect(paths['/v1/namespaces/{ns}/tools/{name}/diff']?.get).toBeDefined();
    expect(paths['/v1/tools']?.get?.parameters?.map((p) => p.name)).toContain('q');
    expect(PROBLEM_STATUS.VERSION_DOWNGRADE?.status).toBe(409);
    expect(PROBLEM_STATUS.COMPATIBILITY_FAILED?.status).toBe(409);
    expect(paths['/v1/tools/{name}']?.put?.responses['409']?.description).toMatch(/COMPATIBILITY_FAILED.*VERSION_DOWNGRADE/);
    const schemas = (document.components as { schemas: Record<string, { properties?: Record<string, unknown> }> }).schemas;
    expect(Object.keys(schemas.ToolRegistration?.properties ?? {})).toContain('deprecation');
    const checker = documentChecker(document);
    const mine = recorded.filter((r) => /\/(deprecate|undeprecate|diff|check)$/.test(r.path) || r.path.endsWith('/tools'));
    expect(mine.length).toBeGreaterThan(40);
    expect(checker.check(recorded)).toEqual([]);
  });
});
