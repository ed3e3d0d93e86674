// Open namespaces and file handles (issue 40): `tool-registry serve --data-dir` under
// `ulimit -n 128` keeps at most --max-open-namespaces SQLite namespaces open (its default
// follows the file limit), closing the least recently used and reopening it on demand; and a
// server told to keep more than its handles allow answers 503 with Retry-After, never 500.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, childEnv, listeningUrl, useChildProcessTimeout } from '../cli/helpers.js';
import { until } from '../support/waiting.js';
import { rawRequest, spec } from './helpers.js';

useChildProcessTimeout();

const folder = mkdtempSync(join(tmpdir(), 'tool-registry-file-handles-'));
const servers: ChildProcess[] = [];

afterAll(async () => {
  await Promise.all(
    servers.map(async (server) => {
      if (server.exitCode === null && server.signalCode === null) {
        server.kill('SIGTERM');
        await once(server, 'exit');
      }
    }),
  );
  rmSync(folder, { recursive: true, force: true });
});

/** `serve --data-dir DIR ARGS` in a shell whose open-file limit is 128; its URL. */
async function serveLimited(dir: string, args: readonly string[] = ['--no-console']): Promise<string> {
  const command = `ulimit -n 128 && exec "$0" "$@"`;
  const server = spawn('bash', ['-c', command, process.execPath, CLI, 'serve', '--data-dir', join(folder, dir), '--port', '0', ...args], {
    cwd: folder,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  servers.push(server);
  return listeningUrl(server);
}

const put = (url: string, path: string, body?: unknown) =>
  fetch(`${url}${path}`, { method: 'PUT', ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });

/** The server of the first case (40 namespaces, ns0-ns39), shared with the next. */
let many: string;
/** The server of the last two cases: told to keep more namespaces and streams than its handles allow. */
let exhausted: string;

describe('serve --data-dir under ulimit -n 128', () => {
  it('40 namespaces, each created and written: every request answered; the first ones reopen on demand', async () => {
    const url = await serveLimited('many');
    many = url;
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      statuses.push((await put(url, `/v1/namespaces/ns${i}`)).status);
      statuses.push((await put(url, `/v1/namespaces/ns${i}/tools/t${i}`, spec(`t${i}`))).status);
    }
    expect(statuses.filter((status) => status !== 201)).toEqual([]);
    for (const i of [0, 1, 2, 39]) {
      const got = await fetch(`${url}/v1/namespaces/ns${i}/tools/t${i}`);
      expect([i, got.status]).toEqual([i, 200]);
    }
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('streams in many namespaces hold at most half of --max-open-namespaces (8 here): the next is 503, and every other namespace is still served', async () => {
    const url = many;
    const streams: Response[] = [];
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const response = await fetch(`${url}/v1/namespaces/ns${i}/changes`, { headers: { accept: 'text/event-stream' } });
      statuses.push(response.status);
      if (response.status === 200) streams.push(response);
      else expect([response.headers.get('retry-after'), ((await response.json()) as { context: unknown }).context]).toEqual(['5', { limit: 4, resource: 'namespaces' }]);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 503, 503, 503, 503]);
    // A second stream in a namespace already held is not another namespace.
    const again = await fetch(`${url}/v1/namespaces/ns0/changes`, { headers: { accept: 'text/event-stream' } });
    expect(again.status).toBe(200);
    streams.push(again);
    // Requests still open (and close, least recently used first) the other namespaces.
    const reads: number[] = [];
    for (const ns of ['default', 'ns8', 'ns9', 'ns10', 'ns11', 'ns12', 'ns13', 'ns4', 'ns5']) reads.push((await fetch(`${url}/v1/namespaces/${ns}/tools`)).status);
    expect(reads).toEqual(Array(9).fill(200));
    for (const stream of streams) await stream.body?.cancel();
  });

  it('--max-streams past what the handles allow: a stream is 503 (file_handles) while some are left, and /healthz answers', async () => {
    exhausted = await serveLimited('exhausted', ['--no-console', '--max-open-namespaces', '500', '--max-streams', '400']);
    const streams: Response[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 140 && refused === undefined; i++) {
      // A bound on the answer's headers only: a signal given to fetch also ends the body, so
      // AbortSignal.timeout(5 s) closed the first streams once opening them all took longer
      // (a loaded run), their handles came back, and all 140 were admitted.
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new Error('no answer within 5 s')), 5_000);
      const response = await fetch(`${exhausted}/v1/changes`, { headers: { accept: 'text/event-stream' }, signal: controller.signal }).finally(() => clearTimeout(timer));
      if (response.status === 200) streams.push(response);
      else refused = response;
    }
    expect([refused?.status, refused?.headers.get('retry-after')]).toEqual([503, '5']);
    expect(await refused?.json()).toMatchObject({ code: 'CAPACITY_EXCEEDED', context: { limit: 128, resource: 'file_handles' } });
    expect((await fetch(`${exhausted}/healthz`, { signal: AbortSignal.timeout(5_000) })).status).toBe(200);
    for (const stream of streams) await stream.body?.cancel();
  });

  it('--max-open-namespaces past what the handles allow: out of file handles is 503 with Retry-After, never 500', async () => {
    const url = exhausted;
    let refused: Response | undefined;
    for (let i = 0; i < 60 && refused === undefined; i++) {
      const created = await put(url, `/v1/namespaces/ns${i}`);
      // Each one read too: a namespace is used, not only made.
      const read = created.status === 201 ? await fetch(`${url}/v1/namespaces/ns${i}/tools`) : created;
      if (read.status !== 200) refused = read;
    }
    expect(refused).toBeDefined();
    const response = refused as Response;
    expect([response.status, response.headers.get('retry-after')]).toEqual([503, '5']);
    expect(await response.json()).toMatchObject({ code: 'CAPACITY_EXCEEDED', context: { limit: 128, resource: 'file_handles' } });
    // Refused before the last handle went (all but 16 are kept): eight new connections at once, a socket each, are all answered.
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => rawRequest(url, 'GET', i % 2 === 0 ? '/v1/tools' : '/healthz', { connection: 'close' }).then((answer) => answer.status, (error: Error) => error.message)),
    );
    expect(answers).toEqual(Array(8).fill(200));
  });

  it("the console's files with every handle taken: 503 with Retry-After, not a 404 (the file is there)", async () => {
    const url = await serveLimited('console', []);
    const { hostname, port } = new URL(url);
    const open = (): Socket => connect(Number(port), hostname).on('error', () => {});
    const handles = `/proc/${String(servers.at(-1)?.pid)}/fd`;
    // One file at a time: answered together, the first answer's closed socket gave a handle back,
    // and the second file could open (a 200 in one run of a few).
    const answers: Array<string[] | string | undefined> = [];
    for (const path of ['/', '/app.js']) {
      // A connection accepted while handles are left: its request head is sent but for its last line.
      const held = open();
      await once(held, 'connect');
      held.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`);
      await once(held, 'data');
      held.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n`);
      // Then connections until the server holds every file it may (each accepted one is a handle).
      const hogs = Array.from({ length: 160 }, () => open());
      await until(() => readdirSync(handles).length >= 128, 'the server to hold every file it may');
      let text = '';
      held.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      held.write('\r\n');
      await once(held, 'close');
      answers.push(/^HTTP\/1\.1 (\d+)[^]*?retry-after: (\d+)/i.exec(text)?.slice(1) ?? text.split('\r\n')[0]);
      for (const socket of hogs) socket.destroy();
    }
    expect(answers).toEqual([
      ['503', '5'],
      ['503', '5'],
    ]);
  });
});
