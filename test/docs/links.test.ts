// Every relative link in README.md, CHANGELOG.md and docs/ points at a file of this
// repository that exists (and at a heading of it, for #anchors): a user's clone has
// nothing outside it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function markdownFiles(): string[] {
  const files = [join(ROOT, 'README.md'), join(ROOT, 'CHANGELOG.md')];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(ROOT, 'docs'));
  return files;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (heading === null) continue;
    const slug = (heading[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    found.add(slug);
  }
  return found;
}

/** `[text](target)` links outside code blocks and inline code. */
export function relativeLinks(markdown: string): string[] {
  const links: string[] = [];
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    if (inFence) continue;
    const text = line.replace(/`[^`]*`/g, '');
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1] as string;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push(target);
    }
  }
  return links;
}

describe('links in the documentation', () => {
  it('relativeLinks finds relative targets only, outside code', () => {
    expect(relativeLinks('[a](docs/x.md) [b](https://e.org) `[c](y.md)`\n```\n[d](z.md)\n```\n[e](#top)')).toEqual([
      'docs/x.md',
      '#top',
    ]);
  });

  for (const file of markdownFiles()) {
    const where = relative(ROOT, file);
    it(`${where}: every relative link resolves inside the repository`, () => {
      const text = readFileSync(file, 'utf8');
      const broken: string[] = [];
      for (const link of relativeLinks(text)) {
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
        if (relative(ROOT, target).startsWith('..')) broken.push(`${link} (outside the repository)`);
        else if (!existsSync(target)) broken.push(`${link} (no such file)`);
        else if (anchor !== undefined && anchor !== '' && statSync(target).isFile() && target.endsWith('.md')) {
          if (!anchors(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${link} (no such heading)`);
        }
      }
      expect(broken).toEqual([]);
    });
  }
});
