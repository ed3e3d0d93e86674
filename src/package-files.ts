// The files the package ships beside its code (package.json, migrations/, console/), found by
// walking up from this module to the nearest package.json. A fixed relative path would not
// do: the same code runs from src/ under the tests, from dist/ as compiled and from
// dist/chunks/ as bundled, each at another depth.
import { existsSync, readFileSync } from 'node:fs';

let root: URL | undefined;

/** The package's root folder (where its package.json is), as a file: URL ending in a slash. */
export function packageRoot(): URL {
  if (root !== undefined) return root;
  let folder = new URL('./', import.meta.url);
  while (!existsSync(new URL('package.json', folder))) {
    const parent = new URL('../', folder);
    if (parent.href === folder.href) throw new Error(`tool-registry: no package.json above ${import.meta.url}`);
    folder = parent;
  }
  root = folder;
  return root;
}

/** A file or folder (ending in a slash) of the package, by its path from the package root. */
export function packageFile(path: string): URL {
  return new URL(path, packageRoot());
}

let version: string | undefined;

/** The package's version, from its package.json (read once). */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version;
  return version;
}
