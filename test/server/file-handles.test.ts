// Open namespaces and file handles (issue 40): `tool-registry serve --data-dir` under
// `ulimit -n 128` keeps at most --max-open-namespaces SQLite namespaces open (its default
// follows the file limit), closing the least recently used and reopening it on demand; and a
// server told to keep more than its handles allow answers 503 with Retry-After, never 500.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, childEnv, listeningUrl, useChildProcessTimeout } from '../cli/helpers.js';
import { spec } from './helpers.js';

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
async function serveLimited(dir: string, args: readonly string[] = []): Promise<string> {
  const command = `ulimit -n 128 && exec "$0" "$@"`;
  const server = spawn('bash', ['-c', command, process.execPath, CLI, 'serve', '--data-dir', join(folder, dir), '--port', '0', '--no-console', ...args], {
    cwd: folder,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  servers.push(server);
  return listeningUrl(server);
}

const put = (url: string, path: string, body?: unknown) =>
  fetch(`${url}${path}`, { method: 'PUT', ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });

describe('serve --data-dir under ulimit -n 128', () => {
  it('40 namespaces, each created and written: every request answered; the first ones reopen on demand', async () => {
    const url = await serveLimited('many');
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

  it('--max-open-namespaces past what the handles allow: out of file handles is 503 with Retry-After, never 500', async () => {
    const url = await serveLimited('exhausted', ['--max-open-namespaces', '500']);
    let refused: Response | undefined;
    for (let i = 0; i < 60 && refused === undefined; i++) {
      const created = await put(url, `/v1/namespaces/ns${i}`);
      if (created.status !== 201) refused = created;
    }
    expect(refused).toBeDefined();
    const response = refused as Response;
    expect([response.status, response.headers.get('retry-after')]).toEqual([503, '5']);
    expect(await response.json()).toMatchObject({ code: 'CAPACITY_EXCEEDED', context: { resource: 'file_handles' } });
  });
});
