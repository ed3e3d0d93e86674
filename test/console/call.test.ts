// The console's API call (console/api.js is plain browser JavaScript) against a real socket: an
// answer whose connection closes before its body is complete. A server closes it so after a 431
// (request headers too large: a pasted file as the token), whose status must still be seen.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .js module of the console, without declarations
import { call } from '../../console/api.js';

const callApi = call as (path: string) => Promise<unknown>;
// The page's session storage, which call() reads for the token (none here).
Object.assign(globalThis, { sessionStorage: { getItem: () => null, setItem: () => undefined, removeItem: () => undefined } });

describe('call', () => {
  const server = createServer((request, response) => {
    const status = request.url === '/ok' ? 200 : 431;
    response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': '100' });
    // The status line, headers and part of the body sent, then the connection closed: the body ends short of its length.
    response.write('{"partial', () => response.socket?.end());
  });
  let base = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('an error status whose body is cut off is that status (it was a TypeError, "Something went wrong: Failed to fetch")', async () => {
    await expect(callApi(`${base}/v1/whoami`)).rejects.toMatchObject({ name: 'ApiError', status: 431 });
  });

  it('a 2xx whose body is cut off is an answer that did not reach us (UnreachableError), not a TypeError', async () => {
    await expect(callApi(`${base}/ok`)).rejects.toMatchObject({ name: 'UnreachableError' });
  });
});
