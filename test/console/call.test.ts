// The console's API call (console/api.js is plain browser JavaScript) against a real socket: an
// answer whose connection closes before its body is complete. A server closes it so after a 431
// (request headers too large: a pasted file as the token), whose status must still be seen.
// And "Approve all" in requests under the server's body limit, against the server in process.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .js module of the console, without declarations
import { ImportPlans as ImportPlansJs, approveInBatches as approveInBatchesJs, call } from '../../console/api.js';
import type { ToolRegistry } from '../../src/index.js';
import { createToolRegistryServer, listen, memoryNamespaces } from '../../src/server/index.js';
import type { ListeningServer, ToolRegistryServer, UpstreamGovernance } from '../../src/server/index.js';

const callApi = call as (path: string, options?: { signal?: AbortSignal; method?: string; json?: unknown }) => Promise<unknown>;
type Progress = { sent: number; total: number; approved: number };
const approveInBatches = approveInBatchesJs as (path: string, tools: string[], options?: { batch?: number; onProgress?: (progress: Progress) => void }) => Promise<{ tool: string }[]>;
type Report = { added: number; plan: { tool_name: string; action: string }[] };
type Planned = { bytes: ArrayBuffer; size: number; mode: string; report: Report };
interface ImportPlans {
  planned: Planned | null;
  changed(): boolean;
  plan(read: ArrayBuffer, size: number, mode: string): Promise<{ planned: Planned } | { stale: true }>;
  confirm(): Promise<{ outcome: string; report?: Report }>;
}
const ImportPlans = ImportPlansJs as new (snapshotUrl: (mode: string, dryRun: boolean) => string) => ImportPlans;

describe('call', () => {
  let slowWritten!: () => void;
  const slowWrite = new Promise<void>((resolve) => (slowWritten = resolve));
  const server = createServer((request, response) => {
    if (request.url === '/slow') {
      // Headers and the start of a body, then nothing until the client goes.
      response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
      response.write('{"slow', () => slowWritten());
      return;
    }
    const status = request.url === '/ok' ? 200 : 431;
    response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': '100' });
    // The status line, headers and part of the body sent, then the connection closed: the body ends short of its length.
    response.write('{"partial', () => response.socket?.end());
  });
  let base = '';
  // A registry server with a 4,000-byte body limit and a gateway that approves what it is named,
  // but a tool it no longer finds (all or nothing per request, as the real one).
  const LIMIT = 4000;
  const approveCalls: number[] = [];
  let gone = '';
  const governance: UpstreamGovernance = {
    states: async () => [],
    reject: async () => {
      throw new Error('not used');
    },
    approve: async (_registry, upstream, { tools = [] }) => {
      approveCalls.push(tools.length);
      const missing = tools.find((one) => one.startsWith(`${gone}@`));
      if (missing !== undefined) throw Object.assign(new Error(`upstream demo lists no tool ${gone}`), { code: 'UPSTREAM_TOOL_NOT_FOUND', context: { tool: gone } });
      return { approved: tools.map((one) => ({ tool: one.split('@')[0] as string, tool_name: `demo_${one.split('@')[0]}`, from_version: null, version: '1.0.0', breaking: false, forced: false })), upstream };
    },
  };
  let registryServer: ListeningServer | undefined;
  let registry: ToolRegistryServer | undefined;
  let approvePath = '';
  let namespace: ToolRegistry | undefined;
  beforeAll(async () => {
    const source = memoryNamespaces();
    namespace = await source.open('default');
    await namespace?.putUpstream({ name: 'demo', transport: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: {} }, approve: 'none' });
    registry = createToolRegistryServer({ registries: source, maxBodyBytes: LIMIT, upstreams: governance });
    registryServer = await listen(registry);
    approvePath = `${registryServer.url}/v1/upstreams/demo/approve`;
  });
  beforeAll(async () => {
    // The page's session storage, which call() reads for the token (none here); removed after
    // the file, as a worker's later files share this global object (docs/testing.md, rule 7).
    Object.assign(globalThis, { sessionStorage: { getItem: () => null, setItem: () => undefined, removeItem: () => undefined } });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    delete (globalThis as { sessionStorage?: unknown }).sessionStorage;
    await registryServer?.close();
    await registry?.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('an error status whose body is cut off is that status (it was a TypeError, "Something went wrong: Failed to fetch")', async () => {
    await expect(callApi(`${base}/v1/whoami`)).rejects.toMatchObject({ name: 'ApiError', status: 431 });
  });

  it('a 2xx whose body is cut off is an answer that did not reach us (UnreachableError), not a TypeError', async () => {
    await expect(callApi(`${base}/ok`)).rejects.toMatchObject({ name: 'UnreachableError' });
  });

  it('a call aborted while its body is read is aborted (AbortError), not an answer that did not reach us', async () => {
    const aborting = new AbortController();
    const answer = callApi(`${base}/slow`, { signal: aborting.signal });
    // Aborted once the headers are in, so that the body's read is what the abort meets. (Were
    // the headers still on their way, the abort would meet the fetch, an AbortError either way.)
    const expectation = expect(answer).rejects.toMatchObject({ name: 'AbortError' });
    await slowWrite;
    await new Promise((resolve) => setTimeout(resolve, 50));
    aborting.abort();
    await expectation;
  });

  it("Import's re-check answered after another file was picked is dropped: the old file's plan is neither shown for the new file nor imported", async () => {
    // The console's import screen (console/app.js) shows what ImportPlans answers.
    const plans = new ImportPlans((mode, dryRun) => `${registryServer?.url}/v1/snapshot?mode=${mode}${dryRun ? '&dry_run=true' : ''}`);
    const snapshot = (name: string): ArrayBuffer => new TextEncoder().encode(JSON.stringify({ tools: [{ spec: { tool_name: name, input_schema: {}, output_schema: {} } }] })).buffer as ArrayBuffer;
    const old = snapshot('import_old');
    expect(await plans.plan(old, old.byteLength, 'merge')).toMatchObject({ planned: { report: { added: 1 } } });
    // The registry moves after the plan (the re-check's plan differs), or not.
    for (const moved of [true, false]) {
      if (moved) await namespace?.register({ tool_name: 'import_old', input_schema: {}, output_schema: {} });
      expect(plans.planned?.bytes).toBe(old);
      // Import pressed; another file picked while its re-check runs.
      const confirming = plans.confirm();
      const dropped = plans.changed();
      // The old code answered `replanned` (the old file's new plan, shown under the new file,
      // which Import then ran) or, the registry unmoved, imported the old file.
      expect(await confirming).toEqual({ outcome: 'stale' });
      expect([dropped, plans.planned]).toEqual([true, null]);
      if (!moved) expect(await namespace?.has('import_old')).toBe(false);
      // A dry run answered after the form changed is dropped too.
      const planning = plans.plan(old, old.byteLength, 'merge');
      plans.changed();
      expect(await planning).toEqual({ stale: true });
      if (moved) {
        await namespace?.remove('import_old');
        expect(await plans.plan(old, old.byteLength, 'merge')).toMatchObject({ planned: { bytes: old } });
      }
    }
    // A refusal answered after the form changed is dropped as a plan is (it was thrown at the page,
    // which showed the old file's failure above the new file's plan): a dry run, and Import's re-check.
    const notSnapshot = new TextEncoder().encode('{"not":"a snapshot"}').buffer as ArrayBuffer;
    const refused = plans.plan(notSnapshot, notSnapshot.byteLength, 'merge');
    plans.changed();
    expect(await refused).toEqual({ stale: true });
    await expect(plans.plan(notSnapshot, notSnapshot.byteLength, 'merge')).rejects.toMatchObject({ status: 400 });
    // Import's re-check meets a server gone (port 9 refuses the connection) while another file is picked.
    let target = registryServer?.url;
    const moving = new ImportPlans((mode, dryRun) => `${target}/v1/snapshot?mode=${mode}${dryRun ? '&dry_run=true' : ''}`);
    expect(await moving.plan(old, old.byteLength, 'merge')).toMatchObject({ planned: { bytes: old } });
    target = 'http://127.0.0.1:9';
    const recheck = moving.confirm();
    moving.changed();
    expect(await recheck).toEqual({ outcome: 'stale' });
    // Nothing changed meanwhile: Import imports.
    expect(await plans.plan(old, old.byteLength, 'merge')).toMatchObject({ planned: { report: { added: 1 } } });
    expect(await plans.confirm()).toMatchObject({ outcome: 'imported', report: { added: 1 } });
    expect(await namespace?.has('import_old')).toBe(true);
    await namespace?.remove('import_old');
  });

  it('"Approve all" sends the tools in requests under the server\'s body limit (one request for all was a 413), reporting progress', async () => {
    const tools = Array.from({ length: 400 }, (_, index) => `tool_${String(index).padStart(4, '0')}@0123456789abcdef`);
    // What the console sent before: every tool in one request, past the limit.
    await expect(callApi(approvePath, { method: 'POST', json: { tools } })).rejects.toMatchObject({ name: 'ApiError', status: 413, code: 'PAYLOAD_TOO_LARGE', context: { limit: LIMIT } });
    approveCalls.length = 0;
    const progress: Progress[] = [];
    const approved = await approveInBatches(approvePath, tools, { batch: 200, onProgress: (one) => progress.push(one) });
    expect(approved.map((one) => one.tool)).toEqual(tools.map((one) => one.split('@')[0]));
    // 200 tools were over the limit (a 413 that approved nothing, its context.limit learnt): then as many as fit, 4,000 bytes.
    expect(approveCalls.length).toBeGreaterThan(2);
    expect(approveCalls.every((count) => count < 200 && JSON.stringify({ tools: tools.slice(0, count) }).length <= LIMIT)).toBe(true);
    expect(progress.at(-1)).toEqual({ sent: 400, total: 400, approved: 400 });
    expect(progress.map((one) => one.sent)).toEqual([...progress.map((one) => one.sent)].sort((a, b) => a - b));
  });

  it('"Approve all" stops at the first refusal, saying which tools the requests before it approved', async () => {
    const tools = Array.from({ length: 30 }, (_, index) => `t${index}@0123456789abcdef`);
    gone = 't25';
    try {
      const stopped = approveInBatches(approvePath, tools, { batch: 10 });
      await expect(stopped).rejects.toMatchObject({ name: 'ApprovalStopped', cause: { name: 'ApiError', status: 404, code: 'UPSTREAM_TOOL_NOT_FOUND' } });
      // The third request (t20-t29) was refused whole; t0-t19 stay approved; nothing after it was sent.
      const { approved } = (await stopped.catch((error: unknown) => error)) as { approved: { tool: string }[] };
      expect(approved.map((one) => one.tool)).toEqual(tools.slice(0, 20).map((one) => one.split('@')[0]));
    } finally {
      gone = '';
    }
  });
});
