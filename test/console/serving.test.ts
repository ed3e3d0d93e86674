// The console's files as the server sends them, and what they may contain: served from the
// package's console/ folder with the strict CSP, nothing from another origin, no inline
// script or style, and no way for text from the registry to become markup.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InMemoryToolRegistry } from '../../src/index.js';
import { createToolRegistryServer, tokenVerifier } from '../../src/server/index.js';
import { defaultConsoleRoot } from '../../src/server/console-root.js';
import { CONSOLE_CSP } from '../../src/server/static-files.js';

const root = defaultConsoleRoot() as string;
const files = readdirSync(root);
const server = createToolRegistryServer({
  registries: new InMemoryToolRegistry(),
  tokens: tokenVerifier([]),
  console: { root },
});
afterAll(() => server.close());

const get = (path: string) => server.fetch(new Request(`http://127.0.0.1${path}`));

describe('the console as served', () => {
  it('is the package console/ folder: index.html at /, every file with its type and the strict CSP, no token needed', async () => {
    expect(root).toMatch(/[/\\]console[/\\]?$/);
    const types: Record<string, string> = { html: 'text/html', js: 'text/javascript', css: 'text/css', svg: 'image/svg+xml' };
    for (const file of ['', ...files]) {
      const response = await get(`/${file}`);
      expect(response.status, file).toBe(200);
      expect(response.headers.get('content-type'), file).toContain(types[(file || 'index.html').split('.').pop() as string]);
      expect(response.headers.get('content-security-policy'), file).toBe(CONSOLE_CSP);
      expect(await response.text()).toBe(readFileSync(join(root, file || 'index.html'), 'utf8'));
    }
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).toContain("style-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe');
  });

  it('serves nothing outside the folder, and the API still needs a token', async () => {
    for (const path of ['/../package.json', '/%2e%2e/package.json', '/..%2fpackage.json']) {
      const response = await get(path);
      expect(response.status, path).not.toBe(200);
    }
    expect((await get('/v1/tools')).status).toBe(401);
  });

  it('has no inline script or style, loads nothing from another origin, and never writes HTML from strings', () => {
    const html = readFileSync(join(root, 'index.html'), 'utf8');
    expect(html.match(/<script\b[^>]*>/g)).toEqual(['<script type="module" src="app.js">']);
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=|["']javascript:/i);
    for (const file of files) expect(readFileSync(join(root, file), 'utf8'), file).not.toMatch(/(?:src|href)=["']?(?:https?:)?\/\/|@import|url\(\s*['"]?(?:https?:)?\/\//);
    for (const file of files.filter((name) => name.endsWith('.js'))) {
      const source = readFileSync(join(root, file), 'utf8');
      // Text from the registry goes into text nodes only: no HTML parsing, no eval, no inline styles.
      expect(source, file).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*['"](?:style|on)/);
      for (const [, target] of source.matchAll(/\bfrom\s+'([^']+)'/g)) expect(target, file).toMatch(/^\.\/[a-z-]+\.js$/);
      // The token is sent as a header, never in a URL.
      expect(source, file).not.toMatch(/[?&](?:token|access_token)=/);
    }
  });
});
