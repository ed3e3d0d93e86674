// The console's API call (console/api.js is plain browser JavaScript) against a real socket: an
// answer whose connection closes before its body is complete. A server closes it so after a 431
// (request headers too large: a pasted file as the token), whose status must still be seen.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .js module of the console, without declarations
import { call } from '../../console/api.js';

const callApi = call as (path: string, options?: { signal?: AbortSignal }) => Promise<unknown>;

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
  beforeAll(async () => {
    // The page's session storage, which call() reads for the token (none here); removed after
    // the file, as a worker's later files share this global object (docs/testing.md, rule 7).
    Object.assign(globalThis, { sessionStorage: { getItem: () => null, setItem: () => undefined, removeItem: () => undefined } });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    delete (globalThis as { sessionStorage?: unknown }).sessionStorage;
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
});
