// The Node adapter: the web-standard handler on a real socket (node:http through
// @hono/node-server), with limits, dot-segment and duplicate-Host refusal and a graceful stop.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { MAX_TIMER_MS } from '../index.js';
import type { ToolRegistryServer } from './server.js';

export interface ListenOptions {
  /** Default `127.0.0.1`. */
  readonly host?: string;
  /** Default 0: a free port. */
  readonly port?: number;
  /** How long the request head may take (slow clients). Default 10 s. */
  readonly headersTimeoutMs?: number;
  /** How long a whole request (head and body) may take. Default 30 s. */
  readonly requestTimeoutMs?: number;
  /** How long `close()` lets in-flight requests finish before cutting them. Default 10 s. */
  readonly drainTimeoutMs?: number;
  /**
   * A connection with bytes waiting for its reader and no byte taken for this long is closed
   * (a stalled or paused reader: its socket and what waits for it are freed), at most twice
   * this long after its last byte (Node lets one timeout pass while a write was still moving).
   * Default 30 s.
   */
  readonly stalledWriteMs?: number;
}

/** The default of `stalledWriteMs`: two heartbeats of an event stream. */
export const DEFAULT_STALLED_WRITE_MS = 30_000;
/** After a 413, how long the rest of a body still coming is read and thrown away before the socket is closed. */
const REFUSED_BODY_LINGER_MS = 2_000;

/**
 * A 413 goes out before the body has all come (its length said too much, or the count passed
 * the limit) with `Connection: close`, and Node then destroys the socket at once: bytes still
 * unread make the kernel answer the client with a reset, and a client still sending (fetch with
 * a 2 MiB body) got EPIPE instead of the 413. So the socket only half-closes after the answer
 * and the rest is read and dropped (the adapter resumes the request) until the client is done,
 * for at most REFUSED_BODY_LINGER_MS.
 */
function lingerAfterRefusal(socket: Socket): void {
  const timer = setTimeout(() => socket.destroy(), REFUSED_BODY_LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy());
  // Node calls destroySoon for a response with Connection: close; end() sends the FIN and leaves reading on.
  (socket as Socket & { destroySoon: () => void }).destroySoon = () => {
    socket.end();
  };
}

/** A server listening on a socket. */
export interface ListeningServer {
  /** `http://HOST:PORT` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly server: Server;
  /**
   * The graceful stop: stop accepting, answer new requests on open connections 503, end event
   * streams, let in-flight requests finish (up to `drainTimeoutMs`), then close the
   * registries. Idempotent.
   */
  close(): Promise<void>;
}

/** How often node:http looks for connections past their head or request timeout. */
const CHECK_INTERVAL_MS = 1_000;

/** A path segment that is `.` or `..`, plain or percent-encoded (`%2e`), which URL parsing would resolve away. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?=\/|\?|#|$)/i;

/** A 400 BAD_REQUEST problem written before the request reaches the server. */
function refuse(res: ServerResponse, detail: string, context: Record<string, unknown>): void {
  const body = badRequest(detail, context);
  res.writeHead(400, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function badRequest(detail: string, context: Record<string, unknown>): string {
  return JSON.stringify({ type: 'https://tool-registry.dev/problems/bad-request', title: 'The request is malformed', status: 400, detail, code: 'BAD_REQUEST', context });
}

/**
 * Whether the head carries more than one Host line: node:http keeps the first and drops the
 * rest, where a proxy in front may have used another (RFC 9112: such a request is a 400).
 */
function hasSeveralHosts(rawHeaders: readonly string[]): boolean {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host' && ++seen > 1) return true;
  }
  return false;
}

/** How many Host values a listener remembers as parsed. */
const MAX_REMEMBERED_HOSTS = 64;

/**
 * A Host value as a URL writes it (`[0:0:0:0:0:0:0:1]:8080` is `[::1]:8080`, `127.1` is
 * `127.0.0.1`, a name in lowercase), or null when it is no URL host (`new URL` refuses it). The
 * adapter passes a lowercase `name:port` on unparsed, and an invalid punycode label (`xn--a`)
 * or an IPv4 address out of range (`999.1.1.1`) then failed every URL parse after it: a 500
 * without a log line. An IPv6 address not written short, or a name the URL rewrites otherwise
 * (Unicode to punycode), it refused with an empty 400 and no log line: given as the URL writes
 * it, the Host check decides (names compare as URLs do, docs/server.md "Host and Origin").
 */
function urlHost(host: string, parsed: Map<string, string>): string | null {
  const known = parsed.get(host);
  if (known !== undefined) return known;
  // A URL takes `a@` as a user and `/x`, `?x`, `#x` as what follows the host, and drops them:
  // `evil@localhost:8080` would be served as localhost. A Host holds none of them.
  if (/[@/\\?#]/.test(host)) return null;
  let written: string;
  try {
    written = new URL(`http://${host}/`).host;
  } catch {
    return null;
  }
  if (parsed.size < MAX_REMEMBERED_HOSTS) parsed.set(host, written);
  return written;
}

/** Serves `server` on a socket; resolves once it listens. */
export async function listen(server: ToolRegistryServer, options: ListenOptions = {}): Promise<ListeningServer> {
  // A time past the longest timer Node keeps runs after 1 ms: `drainTimeoutMs: Infinity` waited 1 ms for the requests in flight.
  for (const field of ['drainTimeoutMs', 'headersTimeoutMs', 'requestTimeoutMs', 'stalledWriteMs'] as const) {
    const value: unknown = options[field];
    if (value !== undefined && !(typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= MAX_TIMER_MS)) {
      throw new TypeError(`listen(): ${field} must be a whole number from 0 to ${MAX_TIMER_MS} (the longest timer Node keeps), got ${typeof value === 'number' ? String(value) : JSON.stringify(value)}`);
    }
  }
  const host = options.host ?? '127.0.0.1';
  const drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
  const stalledWriteMs = options.stalledWriteMs ?? DEFAULT_STALLED_WRITE_MS;
  // The socket's remote address (GET /metrics needs no token from loopback) and local port (a loopback Host carries it).
  const parsedHosts = new Map<string, string>();
  const handle = getRequestListener((request, env) => server.fetch(request, { remoteAddress: env.incoming.socket.remoteAddress, localPort: env.incoming.socket.localPort }));
  const http = createServer(
    {
      headersTimeout: options.headersTimeoutMs ?? 10_000,
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      keepAliveTimeout: 5_000,
      // Node checks both timeouts only this often (default 30 s): a slow client kept its
      // socket up to 40 s and 60 s. Checked each second, the timeouts are what they say.
      connectionsCheckingInterval: CHECK_INTERVAL_MS,
    },
    (req: IncomingMessage, res: ServerResponse) => {
      const raw = req.url ?? '/';
      const query = raw.indexOf('?');
      if (DOT_SEGMENT.test(query === -1 ? raw : raw.slice(0, query))) {
        const path = raw.split('?')[0];
        refuse(res, `the path ${JSON.stringify(path)} has a "." or ".." segment; tool names "." and ".." cannot be addressed in a URL path (use POST /v1/tools or a snapshot import for them)`, { path });
        return;
      }
      if (hasSeveralHosts(req.rawHeaders)) {
        refuse(res, 'the request has more than one Host header; send one', { header: 'host' });
        return;
      }
      const hostHeader = req.headers.host;
      if (hostHeader !== undefined) {
        const written = urlHost(hostHeader, parsedHosts);
        if (written === null) {
          refuse(res, `the Host header ${JSON.stringify(hostHeader.length > 100 ? `${hostHeader.slice(0, 100)}...` : hostHeader)} is not a host name`, { header: 'host' });
          return;
        }
        if (written !== hostHeader) req.headers.host = written;
      }
      // Every write that completes (a heartbeat, an event, a chunk) restarts the socket's timer;
      // one that fires while bytes still wait means the reader took nothing for that long. A
      // response with nothing to send (an idle notification stream, a slow handler) is left alone.
      res.setTimeout(stalledWriteMs, () => {
        if ((res.socket?.writableLength ?? 0) > 0) res.socket?.destroy();
      });
      // An answer that starts before the body is all in (a 413, and a 401, 404 or a query's 400,
      // refused before the body was read) closes the connection and lingers as the 413 does: kept
      // alive, the unread rest stalled it, and a client still sending a body of 300 KB lost the
      // answer to a reset or EPIPE one time in two.
      const writeHead = res.writeHead;
      res.writeHead = function (this: ServerResponse, ...args: Parameters<typeof writeHead>) {
        if (!req.complete) this.setHeader('connection', 'close');
        return writeHead.apply(this, args);
      } as typeof writeHead;
      res.once('prefinish', () => {
        if (!req.complete && req.socket !== null) lingerAfterRefusal(req.socket);
      });
      void handle(req, res);
    },
  );
  // Node answers an Expect other than 100-continue with a bare 417 that no route declares: a
  // 400 naming the header, as the other requests refused here.
  http.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const value = String(req.headers.expect);
    refuse(res, `the Expect header ${JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}...` : value)} is not supported; only 100-continue is`, { header: 'expect' });
  });
  // Without a listener Node drops a CONNECT's socket unanswered: this server is no proxy.
  http.on('connect', (_req: IncomingMessage, socket: Socket) => {
    // Node leaves such a socket without an error listener: a client's reset would end the process.
    socket.on('error', () => socket.destroy());
    const body = badRequest('CONNECT is not supported: this server is no proxy', { method: 'CONNECT' });
    socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shown}:${address.port}`,
    host: address.address,
    port: address.port,
    server: http,
    close() {
      closing ??= (async () => {
        // New connections are refused; requests that still arrive on open connections are
        // answered 503 SHUTTING_DOWN with Connection: close (nothing written) rather than cut.
        const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
        server.shutdown();
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([server.drained(), new Promise<void>((resolve) => (timer = setTimeout(resolve, drainTimeoutMs)))]);
        clearTimeout(timer);
        // Requests already on the wire get a moment to be read and refused; then idle
        // keep-alive connections are closed, and whatever is left is cut a second later.
        await new Promise<void>((resolve) => setTimeout(resolve, 50));
        http.closeIdleConnections();
        const cut = setTimeout(() => http.closeAllConnections(), 1_000);
        await stopped;
        clearTimeout(cut);
        await server.close();
      })();
      return closing;
    },
  };
}
