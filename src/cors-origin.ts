// The `cors` origin as a browser writes `Origin`: one rule for the server's option and the
// command's --cors, which may reach the server only through its entry (and it exports no rule).

/**
 * `*`, or `value` as the origin a browser sends (`https://Console.Example/` is
 * `https://console.example`: case and a trailing slash forgiven); undefined for anything else
 * (no http(s) scheme, a path, a query, a user): it never matches an `Origin`.
 */
export function corsOrigin(value: unknown): string | undefined {
  if (value === '*') return value;
  let url: URL;
  try {
    if (typeof value !== 'string') return undefined;
    url = new URL(value);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') return undefined;
  return url.origin;
}
