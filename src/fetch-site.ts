// The browser's word on who sent a request without `Origin` (`Sec-Fetch-Site`): one rule for the
// server's routes and for the MCP handler used alone, which may not import the server's code.

const SAFE_METHOD = /^(?:GET|HEAD|OPTIONS)$/;

/**
 * The `Sec-Fetch-Site` values a write without `Origin` may carry: the browser says the page is
 * the server's own (`same-origin`) or no page made it (`none`). `same-site` is refused: another
 * port of localhost, or a sibling subdomain, is same-site yet another origin, and without
 * `Origin` the --cors one cannot be told from them. Any other value (`Cross-Site`, a list) is
 * refused rather than guessed at: browsers send exactly these lowercase tokens.
 */
const TRUSTED_FETCH_SITE = new Set(['same-origin', 'none']);

/**
 * Whether a request that carries no `Origin` is refused for its `Sec-Fetch-Site` (`site`, null
 * or undefined when absent): a method that changes something, from a page the browser says is
 * not the server's own. Without the header (a non-browser client) nothing is known: served.
 */
export function refusedBySecFetchSite(method: string, site: string | null | undefined): boolean {
  return site !== null && site !== undefined && !TRUSTED_FETCH_SITE.has(site) && !SAFE_METHOD.test(method);
}
