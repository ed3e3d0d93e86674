// DNS rebinding: a page on evil.example whose name the attacker points at 127.0.0.1 reaches a
// loopback server with `Host: evil.example:PORT`. A server without tokens answers only the
// names it serves (as the MCP SDK's hostHeaderValidation): every route, the mounts and the
// console, before anything else runs.
import type { Context, MiddlewareHandler } from 'hono';
import { HttpProblem } from './problems.js';

/** The names a loopback server serves, with its port, always allowed when the check is on. */
export const LOOPBACK_HOSTS: readonly string[] = Object.freeze(['localhost', '127.0.0.1', '[::1]']);

/** How many allowed `scheme://authority` texts a host check remembers. */
const MAX_REMEMBERED_HOSTS = 64;

/** An entry of `allowedHosts`: a name (any port) or `name:port`, compared as a URL's host (lowercase, `[v6]`). */
export function parseHostEntry(entry: string): { readonly hostname: string; readonly port: string | null } {
  // URL takes `*` as a letter: `*.example.com` would admit only a Host of those very characters.
  if (entry.includes('*')) throw new TypeError(`allowedHosts: ${JSON.stringify(entry)}: wildcards are not supported; list each name (a name without :port allows any port)`);
  let url: URL;
  try {
    url = new URL(`http://${entry}`);
  } catch {
    throw new TypeError(`allowedHosts: ${JSON.stringify(entry)} is not a host name (a name, an IP or [IPv6], optionally :port)`);
  }
  if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '' || entry.trim() === '') {
    throw new TypeError(`allowedHosts: ${JSON.stringify(entry)} is not a host name (a name, an IP or [IPv6], optionally :port)`);
  }
  // URL drops the default port (80): `name:80` is kept as a port to compare.
  const port = /:(\d+)$/.exec(entry)?.[1] ?? null;
  return { hostname: url.hostname, port: port === null ? null : String(Number(port)) };
}

/** A loopback name's port: the one the request came in on (a server knows no other of its own). */
const OWN_PORT = 'own';

/** Whether a request URL's host (`name[:port]`, the port its scheme's default when absent) is one of `allowed`. */
export function hostAllowed(url: URL, allowed: readonly { hostname: string; port: string | null }[], localPort?: number): boolean {
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  return allowed.some(
    (entry) => entry.hostname === url.hostname && (entry.port === null || entry.port === port || (entry.port === OWN_PORT && (localPort === undefined || String(localPort) === port))),
  );
}

/**
 * 403 HOST_NOT_ALLOWED for a request whose Host is not in `allowed`: the loopback names with
 * the port the request came in on (`localPortOf`; any port for a request built in process),
 * plus the given ones.
 */
export function hostCheck(allowed: readonly string[], localPortOf: (c: Context) => number | undefined): MiddlewareHandler {
  const entries = [...LOOPBACK_HOSTS.map((name) => ({ hostname: parseHostEntry(name).hostname, port: OWN_PORT })), ...allowed.map(parseHostEntry)];
  // The verdict is a function of the port the request came in on and the URL's
  // `scheme://authority` text alone: remembered for the first few allowed ones seen (a client
  // sending a new Host with every request parses it every time).
  const allowedKeys = new Set<string>();
  // Not async: returning next()'s promise saves a promise and a tick per request.
  return (c, next) => {
    // The URL's host is the Host header (node:http) or the URL a caller built (in process).
    const href = c.req.url;
    const localPort = localPortOf(c);
    const pathStart = href.indexOf('/', href.indexOf('//') + 2);
    const key = `${localPort ?? ''} ${pathStart === -1 ? href : href.slice(0, pathStart)}`;
    if (!allowedKeys.has(key)) {
      const url = new URL(href);
      if (!hostAllowed(url, entries, localPort)) {
        throw new HttpProblem('HOST_NOT_ALLOWED', `this server does not answer for the host ${JSON.stringify(url.host)} (DNS rebinding); serve --allowed-hosts or the allowedHosts option adds names`, {
          context: { host: url.host },
        });
      }
      if (allowedKeys.size < MAX_REMEMBERED_HOSTS) allowedKeys.add(key);
    }
    return next();
  };
}
