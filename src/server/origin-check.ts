// CSRF and DNS rebinding from a browser: a page of another origin may send a request (a form
// POST needs no preflight), it only cannot read the answer. A request carrying an `Origin`
// other than the server's own or the `cors` one may not change anything, nor reach a mount
// (MCP sessions run tools), whatever the server's tokens (Hono's csrf middleware, widened to
// every content type). A write without `Origin` but with a browser's `Sec-Fetch-Site` that
// does not say same-origin (or `none`: typed by the user) is refused the same way.
import type { MiddlewareHandler } from 'hono';
import { corsOrigin } from '../cors-origin.js';
import { refusedBySecFetchSite } from '../fetch-site.js';
import { HttpProblem } from './problems.js';

const SAFE_METHOD = /^(?:GET|HEAD|OPTIONS)$/;

export interface OriginCheckOptions {
  /** The `cors` origin; `*` counts for the routes (not the mounts) only when `tokens` is true. */
  readonly cors: string | undefined;
  readonly tokens: boolean;
  /** Whether a path is a mount's (checked for every method). */
  readonly isMount: (path: string) => boolean;
}

/**
 * The server's own origin: the one the request was sent to (`Origin`'s host is the request's
 * host, default ports applied). The host itself was checked first (hostCheck) on a server
 * without tokens; on one with tokens it is not, and needs no check: a browser never sends a
 * bearer token on its own, so a page that rebinds a name reaches nothing without one.
 * `Origin` must be written as a browser serializes it (lowercase, no path, user, query or
 * default port), as the `cors` one is compared: `http://127.0.0.1:8080/x` or `http://u@…` was
 * read through a URL and passed as the own origin.
 */
function sameOrigin(origin: string, requestUrl: string): boolean {
  let from: URL;
  try {
    from = new URL(origin);
  } catch {
    return false; // `null` (a sandboxed frame, a file) and garbage
  }
  if ((from.protocol !== 'http:' && from.protocol !== 'https:') || from.origin !== origin) return false;
  try {
    return new URL(`${from.protocol}//${new URL(requestUrl).host}`).host === from.host;
  } catch {
    return false;
  }
}

/**
 * The `cors` option as a browser writes an `Origin` (`https://Console.Example/` is
 * `https://console.example`), or `*`; anything else is a TypeError naming it. It is compared
 * with `Origin` as it is: `console.example` or a trailing slash matched no page, so every write
 * from the console's origin was a 403 (and browsers refuse such an allow-origin header).
 */
export function corsOption(value: unknown): string | undefined {
  if (value === undefined) return value;
  const origin = corsOrigin(value);
  if (origin === undefined) throw new TypeError(`createToolRegistryServer: cors must be * or an origin (scheme://host[:port], as a browser sends it in Origin), got ${JSON.stringify(value)}`);
  return origin;
}

/** 403 ORIGIN_NOT_ALLOWED for a foreign `Origin` on a method that changes anything, or on a mount, and for a write whose `Sec-Fetch-Site` says another site sent it without `Origin`. */
export function originCheck(options: OriginCheckOptions): MiddlewareHandler {
  return (c, next) => {
    const origin = c.req.header('origin');
    if (origin === undefined) {
      const site = c.req.header('sec-fetch-site');
      // Without the header (a non-browser client, an old browser) nothing is known: served, as before.
      if (refusedBySecFetchSite(c.req.method, site)) {
        throw new HttpProblem('ORIGIN_NOT_ALLOWED', `a request the browser calls Sec-Fetch-Site ${JSON.stringify(site)} and sent without Origin may not ${c.req.method} here: only the server's own origin (same-origin), a client that is no page (none), or one whose Origin is allowed may (serve --cors ORIGIN)`, {
          context: { sec_fetch_site: site },
        });
      }
    } else {
      const mount = options.isMount(c.req.path);
      if (mount || !SAFE_METHOD.test(c.req.method)) {
        const allowed =
          origin === options.cors || (options.cors === '*' && options.tokens && !mount) || sameOrigin(origin, c.req.url);
        if (!allowed) {
          throw new HttpProblem('ORIGIN_NOT_ALLOWED', `a page of ${JSON.stringify(origin)} may not ${mount ? 'use this endpoint' : `${c.req.method} here`}: only the server's own origin${options.cors === undefined || options.cors === '*' ? '' : ` and ${options.cors}`} may (serve --cors ORIGIN)`, {
            context: { origin },
          });
        }
      }
    }
    return next();
  };
}
