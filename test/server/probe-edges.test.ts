// Edges found by the seventeenth audit of the HTTP API, in process (no socket): a wrong method
// on a token server told an anonymous client which routes exist (405 with Allow), the library's
// `cors` option took values no browser's Origin can match, and `GET /v1/lint` listed every
// finding once per repetition of `provider`.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:buffer';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, ToolSet } from '../../src/index.js';
import { mcpMount } from '../../src/mcp/index.js';
import { serveMounts } from '../../src/cli/serve-mounts.js';
import { runCli } from '../cli/helpers.js';
import { createToken, createToolRegistryServer, hashToken, memoryNamespaces, tokenFileVerifier, tokenVerifier } from '../../src/server/index.js';
import { spec } from './helpers.js';

const SECRET = 'trg_probe_edges_reader';

function securedServer() {
  const tokens = tokenVerifier([{ name: 'reader', sha256: hashToken(SECRET), scopes: ['read'], namespaces: null, policy: null, created_at: '2026-11-30T00:00:00Z' }]);
  return createToolRegistryServer({ registries: memoryNamespaces(), tokens });
}

async function answer(response: Response): Promise<[number, unknown, string | null]> {
  return [response.status, ((await response.json()) as { code?: unknown }).code, response.headers.get('allow')];
}

describe('a wrong method on a server with tokens', () => {
  it('is 401 for an anonymous client, as an unknown path is (405 with Allow told it the route map); 405 for a token holder', async () => {
    const server = securedServer();
    try {
      const unknown = await answer(await server.fetch(new Request('http://localhost/v1/nothing-here', { method: 'DELETE' })));
      expect(unknown).toEqual([401, 'UNAUTHORIZED', null]);
      for (const [method, path] of [
        ['DELETE', '/v1/tools'],
        ['PATCH', '/v1/calls'],
        ['DELETE', '/v1/upstreams'],
        ['DELETE', '/v1/namespaces/team_a/tools/x/history'],
        ['POST', '/openapi.json'],
      ]) {
        const request = (headers: Record<string, string>) => new Request(`http://localhost${path as string}`, { method, headers });
        expect([method, path, ...(await answer(await server.fetch(request({}))))]).toEqual([method, path, ...unknown]);
        const bad = await server.fetch(request({ authorization: 'Bearer nope' }));
        expect([method, path, bad.status]).toEqual([method, path, 401]);
        const held = await answer(await server.fetch(request({ authorization: `Bearer ${SECRET}` })));
        expect([method, path, held[0], held[1]]).toEqual([method, path, 405, 'METHOD_NOT_ALLOWED']);
      }
      // Routes that answer without a token say nothing new with their 405.
      expect(await answer(await server.fetch(new Request('http://localhost/healthz', { method: 'DELETE' })))).toEqual([405, 'METHOD_NOT_ALLOWED', 'GET, HEAD']);
    } finally {
      await server.close();
    }
  });
});

describe('the cors option', () => {
  it('takes an origin as the command does (case and a trailing slash forgiven) and refuses what no Origin can match, naming the value', async () => {
    const server = createToolRegistryServer({ registries: new InMemoryToolRegistry(), cors: 'HTTPS://Console.Example/' });
    try {
      const put = await server.fetch(
        new Request('http://localhost/v1/tools/a', { method: 'PUT', headers: { origin: 'https://console.example', 'content-type': 'application/json' }, body: JSON.stringify(spec('a')) }),
      );
      expect([put.status, put.headers.get('access-control-allow-origin')]).toEqual([201, 'https://console.example']);
    } finally {
      await server.close();
    }
    for (const cors of ['console.example', 'https://console.example/app', 'null', 'file:///x', '']) {
      expect(() => createToolRegistryServer({ registries: new InMemoryToolRegistry(), cors })).toThrow(new TypeError(`createToolRegistryServer: cors must be * or an origin (scheme://host[:port], as a browser sends it in Origin), got ${JSON.stringify(cors)}`));
    }
  });
});

describe('GET /v1/lint', () => {
  it('lints a provider named twice once, as `tool-registry lint` does (its findings came twice); strict without a provider that has it is a 400', async () => {
    const server = createToolRegistryServer({ registries: new InMemoryToolRegistry() });
    try {
      await server.fetch(new Request('http://localhost/v1/tools/loose', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...spec('loose'), input_schema: {} }) }));
      const lint = async (query: string) => ((await (await server.fetch(new Request(`http://localhost/v1/lint?${query}`))).json()) as { findings: unknown[] }).findings;
      const once = await lint('provider=openai');
      expect(once.length).toBeGreaterThan(0);
      expect(await lint('provider=openai&provider=openai')).toEqual(once);
      expect(await lint('provider=openai&provider=gemini&provider=openai')).toEqual(await lint('provider=openai&provider=gemini'));
      // strict asked of providers without a strict mode checked nothing more, silently: 400 naming it, as the exports' strict and `lint --strict`.
      for (const query of ['provider=gemini&strict=true', 'provider=mcp&provider=gemini-openapi&strict=1']) {
        const response = await server.fetch(new Request(`http://localhost/v1/lint?${query}`));
        const body = (await response.json()) as { code?: string; context?: { parameter?: string } };
        expect([query, response.status, body.code, body.context?.parameter]).toEqual([query, 400, 'BAD_REQUEST', 'strict']);
      }
      expect((await server.fetch(new Request('http://localhost/v1/lint?provider=gemini&provider=openai&strict=true'))).status).toBe(200);
      expect((await server.fetch(new Request('http://localhost/v1/lint?strict=true'))).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('GET /v1/tools?tag=', () => {
  it('an empty tag is 400 naming `tag`, listing or searching, as `tool-registry list --tag ""` is a usage error (it matched nothing, silently)', async () => {
    const server = createToolRegistryServer({ registries: new InMemoryToolRegistry() });
    try {
      await server.fetch(new Request('http://localhost/v1/tools/tagged', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...spec('tagged'), tags: ['a'] }) }));
      for (const query of ['tag=', 'tag=a&tag=', 'q=tagged&tag=']) {
        const response = await server.fetch(new Request(`http://localhost/v1/tools?${query}`));
        const body = (await response.json()) as { code?: string; context?: { parameter?: string } };
        expect([query, response.status, body.code, body.context?.parameter]).toEqual([query, 400, 'BAD_REQUEST', 'tag']);
      }
      const listed = (await (await server.fetch(new Request('http://localhost/v1/tools?tag=a'))).json()) as { tools: unknown[] };
      expect(listed.tools).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});

describe("/openapi.json of `serve` without --tools (its /mcp loads on the first request)", () => {
  it('describes /mcp as the loaded endpoint is described: its JSON-RPC 400, Mcp-Session-Id, the bodiless 202 (all were `default`, and the 400 a problem only)', async () => {
    const lazy = createToolRegistryServer({ registries: new InMemoryToolRegistry(), mounts: await serveMounts({}) });
    const loaded = createToolRegistryServer({ registries: new InMemoryToolRegistry(), mounts: { mcp: mcpMount(new ToolSet([])) } });
    try {
      const paths = (server: typeof lazy) => (server.openapi() as { paths: Record<string, unknown> }).paths;
      for (const path of ['/mcp', '/v1/namespaces/{ns}/mcp']) expect([path, paths(lazy)[path]]).toEqual([path, paths(loaded)[path]]);
      const post = paths(lazy)['/mcp'] as { post: { responses: Record<string, { content?: Record<string, unknown> }> } };
      expect(Object.keys(post.post.responses['400']?.content ?? {})).toContain('application/json');
    } finally {
      await Promise.all([lazy.close(), loaded.close()]);
    }
  });
});

describe('a count in the query past its bound', () => {
  it('is one issue, not the same one twice (a 16-digit value failed both checks); 16 digits below 2^53 are a revision', async () => {
    const server = createToolRegistryServer({ registries: new InMemoryToolRegistry() });
    try {
      for (const path of ['/v1/changes?since=9007199254740993', '/v1/tools?limit=10000000000000000', '/v1/changes?limit=10001']) {
        const body = (await (await server.fetch(new Request(`http://localhost${path}`))).json()) as { code?: string; context?: { issues?: unknown[] } };
        expect([path, body.code, body.context?.issues?.length]).toEqual([path, 'BAD_REQUEST', 1]);
      }
      // A revision of 16 digits below 2^53 is one (it was refused as "not a whole number"): past the log, a 410, in the query and in Last-Event-ID.
      for (const [path, headers] of [
        ['/v1/changes?since=1000000000000000', {}],
        ['/v1/changes', { accept: 'text/event-stream', 'last-event-id': '1000000000000000' }],
        ['/v1/changes', { accept: 'text/event-stream', 'last-event-id': '9007199254740991' }],
      ] as const) {
        const response = await server.fetch(new Request(`http://localhost${path}`, { headers }));
        expect([path, headers, response.status, ((await response.json()) as { code?: string }).code]).toEqual([path, headers, 410, 'CHANGES_EXPIRED']);
      }
      const past = await server.fetch(new Request('http://localhost/v1/changes', { headers: { accept: 'text/event-stream', 'last-event-id': '9007199254740992' } }));
      expect(past.status).toBe(400);
    } finally {
      await server.close();
    }
  });
});

describe('a hand edit of the token file that is no token file', () => {
  it('is reported once (it was silent: a revoke saved with a typo left the token working), the last good tokens staying; the next good save counts', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tool-registry-probe-'));
    try {
      const file = join(folder, 'tokens.json');
      const { secret } = await createToken(file, { name: 'leaver', scopes: ['read'] });
      const heard: string[] = [];
      const verifier = tokenFileVerifier(file, { onError: (error) => heard.push(error.message) });
      const good = readFileSync(file, 'utf8');
      // The revoke, saved with a stray comma.
      writeFileSync(file, good.replace(/"tokens": \[[\s\S]*\]/, '"tokens": [,]'));
      for (let i = 0; i < 3; i++) expect(verifier.verify(secret)?.name).toBe('leaver');
      expect(heard).toHaveLength(1);
      expect(heard[0]).toContain(file);
      writeFileSync(file, good.replace(/"tokens": \[[\s\S]*\]/, '"tokens": []'));
      expect(verifier.verify(secret)).toBeUndefined();
      expect(heard).toHaveLength(1);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('a preflight with a body over the limit', () => {
  it('is a 413 that /openapi.json declares for OPTIONS (it was answered, undeclared)', async () => {
    const server = createToolRegistryServer({ registries: new InMemoryToolRegistry(), cors: 'https://console.example', maxBodyBytes: 100 });
    try {
      const document = server.openapi() as { paths: Record<string, { options?: { responses: Record<string, unknown> } }> };
      for (const path of ['/v1/tools', '/v1/tools/{name}']) {
        const concrete = path.replace('{name}', 'x');
        const response = await server.fetch(new Request(`http://localhost${concrete}`, { method: 'OPTIONS', headers: { origin: 'https://console.example', 'content-length': '1000' }, body: 'x'.repeat(1000) }));
        expect([path, response.status, Object.keys(document.paths[path]?.options?.responses ?? {})]).toEqual([path, 413, expect.arrayContaining(['204', '413'])]);
      }
    } finally {
      await server.close();
    }
  });
});

describe('a body limit past the longest string', () => {
  it('is refused when the server is made (library: TypeError; serve --max-body: a usage error), naming it: such a body was a 500', async () => {
    const over = constants.MAX_STRING_LENGTH + 1;
    expect(() => createToolRegistryServer({ registries: new InMemoryToolRegistry(), maxBodyBytes: over })).toThrow(
      new TypeError(`createToolRegistryServer: maxBodyBytes must be a whole number from 1 to ${constants.MAX_STRING_LENGTH} (the longest string JavaScript holds), got ${over}`),
    );
    await createToolRegistryServer({ registries: new InMemoryToolRegistry(), maxBodyBytes: constants.MAX_STRING_LENGTH }).close();
    const folder = mkdtempSync(join(tmpdir(), 'tool-registry-probe-'));
    try {
      const refused = await runCli(['serve', '--max-body', String(over), '--port', '0', '--db', join(folder, 'tools.db')], { cwd: folder });
      expect([refused.code, refused.stderr.split('\n')[0]]).toEqual([
        2,
        `error USAGE: option '--max-body <bytes>' argument '${over}' is invalid. expected a whole number, 1 to ${constants.MAX_STRING_LENGTH} (bytes: the longest string JavaScript holds, as a body is read as one), got "${over}"`,
      ]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe("serve --cors '*' without --tokens", () => {
  it('is a usage error: every web page could read the whole registry (it started, and answered any origin with Access-Control-Allow-Origin: *)', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tool-registry-probe-'));
    try {
      const refused = await runCli(['serve', '--cors', '*', '--port', '0', '--db', join(folder, 'tools.db')], { cwd: folder });
      expect([refused.code, refused.stderr.split('\n')[0]]).toEqual([2, "error USAGE: --cors '*' needs --tokens FILE: without tokens every web page could read the registry; give the console's origin (--cors https://console.example) or tokens"]);
      // With tokens it goes on (here to the missing token file).
      const withTokens = await runCli(['serve', '--cors', '*', '--tokens', join(folder, 'none.json'), '--port', '0', '--db', join(folder, 'tools.db')], { cwd: folder });
      expect([withTokens.code, withTokens.stderr]).toEqual([2, expect.stringContaining('does not exist')]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
