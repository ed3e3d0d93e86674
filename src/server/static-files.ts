// Static files for the console: GET and HEAD under one folder, nothing outside it.
import { readFile, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { outOfFileHandles } from './limits.js';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/**
 * The console's Content-Security-Policy: its own scripts, styles and API only; no inline
 * script or style, nothing from another origin, no framing (docs/console.md).
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The file under `root` for a URL path (`/` and folders: their index.html), or undefined when there is none. */
export async function serveStatic(root: string, pathname: string, headOnly: boolean): Promise<Response | undefined> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0')) return undefined;
  const base = resolve(root);
  let file = resolve(join(base, decoded));
  if (file !== base && !file.startsWith(base + sep)) return undefined;
  try {
    let info = await stat(file);
    if (info.isDirectory()) {
      file = join(file, 'index.html');
      info = await stat(file);
    }
    if (!info.isFile()) return undefined;
    const headers = {
      'content-type': TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'content-length': String(info.size),
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-cache',
      'content-security-policy': CONSOLE_CSP,
      'referrer-policy': 'no-referrer',
    };
    return new Response(headOnly ? null : await readFile(file), { status: 200, headers });
  } catch (error) {
    // Out of file handles the file is there all the same: the server's 503, not a 404.
    if (outOfFileHandles(error)) throw error;
    return undefined;
  }
}
